'use strict';
/** Small helpers shared by the benchmark phases (no dependencies beyond Node and the repo's packages). */
const { fork } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Resident set size of a process in MiB (from /proc), or null when it is gone. */
function rssMiB(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : null;
  } catch {
    return null;
  }
}

/** CPU time (user + system) a process has used so far, in ms, or null when it is gone. */
function procCpuMs(pid) {
  const t = procCpuSplitMs(pid);
  return t && t.user + t.sys;
}

/** A process's CPU time in ms, split into user and kernel (system) time; null when it is gone. */
function procCpuSplitMs(pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return { user: (Number(f[11]) * 1000) / 100, sys: (Number(f[12]) * 1000) / 100 }; // USER_HZ = 100 on Linux
  } catch {
    return null;
  }
}

/**
 * CPU (user + kernel, ms) used so far by the PostgreSQL servers on the machine (processes named
 * "postgres"): each server's own, that of its live processes, and that of the processes it has
 * reaped (cutime/cstime), so that the sum does not drop when a connection's backend exits.
 */
function postgresCpuMs() {
  const procs = new Map();
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.includes(' (postgres) ')) continue;
      const f = stat.split(') ')[1].split(' ');
      procs.set(pid, { ppid: f[1], own: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]) });
    } catch {
      // the process ended meanwhile
    }
  }
  let ticks = 0;
  for (const p of procs.values()) ticks += p.own + (procs.has(p.ppid) ? 0 : p.reaped);
  return (ticks * 1000) / 100; // USER_HZ = 100 on Linux
}

/**
 * CPU (user + kernel, ms) used so far by one PostgreSQL server: its postmaster `rootPid`, the
 * processes it started (backends, background workers) and those it has reaped. Other PostgreSQL
 * servers on the machine (other people's tests) do not count.
 */
function postgresTreeCpuMs(rootPid) {
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(pid)) continue;
    try {
      const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      if (pid === String(rootPid)) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      else if (f[1] === String(rootPid)) ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // the process ended meanwhile
    }
  }
  return (ticks * 1000) / 100; // USER_HZ = 100 on Linux
}

/** Machine-wide CPU counters (jiffies) from /proc/stat: { busy, total }. */
function machineCpu() {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3] + (f[4] || 0);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/** Cores busy (0..ncores) between two machineCpu() readings. */
function busyCores(a, b, ncores) {
  const dt = b.total - a.total;
  return dt > 0 ? Math.round(((b.busy - a.busy) / dt) * ncores * 100) / 100 : null;
}

/**
 * Waits (at most `maxMs`) until the machine is quiet: less than `threshold` cores busy over a 1 s
 * sample. Other work on the machine (tests, builds) distorts every figure; the result says how busy
 * it was when the measurement started.
 */
async function waitForQuiet(ncores, maxMs, threshold = 0.25) {
  const deadline = Date.now() + maxMs;
  let busy = null;
  for (;;) {
    const a = machineCpu();
    await sleep(1000);
    busy = busyCores(a, machineCpu(), ncores);
    if (busy !== null && busy < threshold) return { busyCores: busy, waitedMs: maxMs - (deadline - Date.now()), quiet: true };
    if (Date.now() >= deadline) return { busyCores: busy, waitedMs: maxMs, quiet: false };
  }
}

/** Polls `pred` until it returns truthy or the deadline passes (then throws). */
async function waitUntil(pred, timeoutMs, what, everyMs = 50) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await pred();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Rejects after `ms` with a clear message (every awaited phase is bounded). */
function withTimeout(promise, ms, what) {
  let t;
  return Promise.race([
    promise.finally(() => clearTimeout(t)),
    new Promise((_, reject) => {
      t = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    }),
  ]);
}

/**
 * A node child process with IPC. Resolves with { child, ready } once it sends { type: 'ready' }.
 * Its output is kept (last 64 KiB) for error reports; it is killed when the bench process exits.
 */
const children = new Set();
function startChild(script, { env = {}, execArgv = [], args = [], timeoutMs = 120_000 } = {}) {
  const child = fork(script, args, {
    env: { ...process.env, ...env },
    execArgv,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  children.add(child);
  let out = '';
  const keep = (d) => {
    out += d.toString();
    if (out.length > 65536) out = out.slice(-65536);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.output = () => out;
  child.on('exit', () => children.delete(child));
  const ready = new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${script} was not ready within ${timeoutMs} ms:\n${out.slice(-4000)}`)), timeoutMs);
    child.on('message', (m) => {
      if (m && m.type === 'ready') {
        clearTimeout(t);
        resolve(m);
      } else if (m && m.type === 'fatal') {
        clearTimeout(t);
        reject(new Error(`${script}: ${m.error}\n${out.slice(-4000)}`));
      }
    });
    child.on('exit', (code, sig) => {
      clearTimeout(t);
      reject(new Error(`${script} exited (${code ?? sig}) before it was ready:\n${out.slice(-4000)}`));
    });
  });
  return { child, ready };
}

/** Sends a request to a child and waits for the reply of the same `type` + '_done'. */
function ask(child, msg, timeoutMs = 60_000) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      child.off('message', on);
      reject(new Error(`no reply to ${msg.type} within ${timeoutMs} ms`));
    }, timeoutMs);
    const on = (m) => {
      if (m && m.type === msg.type + '_done') {
        clearTimeout(t);
        child.off('message', on);
        if (m.error) reject(new Error(m.error));
        else resolve(m);
      }
    };
    child.on('message', on);
    child.send(msg);
  });
}

/** Asks a child to close (it exits by itself), then kills it if it does not within `ms`. */
function stopChild(child, ms = 30_000) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      child.kill('SIGKILL');
    }, ms);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    try {
      child.send({ type: 'close' });
    } catch {
      child.kill('SIGTERM');
    }
  });
}

function killAllChildren() {
  for (const c of children) {
    try {
      c.kill('SIGKILL');
    } catch {
      /* ignore */
    }
  }
}

/** JSON request against the panel (127.0.0.1 only). */
async function api(base, method, path, { token, body } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, body: json, text };
}

async function apiOk(base, method, path, opts, expected = [200, 201]) {
  const r = await api(base, method, path, opts);
  if (!expected.includes(r.status)) throw new Error(`${method} ${path} → ${r.status}: ${r.text.slice(0, 500)}`);
  return r.body;
}

/** A latency histogram with 1 ms buckets (the console timestamps have ms resolution), bounded memory. */
class Histogram {
  constructor(maxMs = 120_000) {
    this.counts = new Uint32Array(maxMs + 1);
    this.n = 0;
    this.max = 0;
    this.sum = 0;
  }
  add(ms) {
    const v = ms < 0 ? 0 : ms > this.counts.length - 1 ? this.counts.length - 1 : Math.round(ms);
    this.counts[v]++;
    this.n++;
    this.sum += v;
    if (v > this.max) this.max = v;
  }
  merge(o) {
    for (let i = 0; i <= o.max; i++) this.counts[i] += o.counts[i];
    this.n += o.n;
    this.sum += o.sum;
    if (o.max > this.max) this.max = o.max;
  }
  /** [[ms, count], …] of the buckets in use: small enough to send between processes. */
  toSparse() {
    const out = [];
    for (let i = 0; i <= this.max; i++) if (this.counts[i]) out.push([i, this.counts[i]]);
    return out;
  }
  addSparse(pairs) {
    for (const [ms, count] of pairs) {
      this.counts[ms] += count;
      this.n += count;
      this.sum += ms * count;
      if (ms > this.max) this.max = ms;
    }
  }
  pct(p) {
    if (!this.n) return null;
    const rank = Math.ceil((p / 100) * this.n);
    let acc = 0;
    for (let i = 0; i <= this.max; i++) {
      acc += this.counts[i];
      if (acc >= rank) return i;
    }
    return this.max;
  }
  summary() {
    return { count: this.n, p50: this.pct(50), p90: this.pct(90), p99: this.pct(99), max: this.n ? this.max : null, mean: this.n ? Math.round((this.sum / this.n) * 10) / 10 : null };
  }
}

module.exports = { procCpuMs, procCpuSplitMs, postgresCpuMs, postgresTreeCpuMs, machineCpu, busyCores, waitForQuiet, sleep, freePort, rssMiB, waitUntil, withTimeout, startChild, ask, stopChild, killAllChildren, api, apiOk, Histogram };
