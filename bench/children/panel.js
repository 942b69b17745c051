'use strict';
/**
 * The panel under test, in its own process (so that its CPU and memory are its own): the compiled
 * platform from dist/ with the local node agent, on the benchmark database. Options come as JSON in
 * BENCH_PANEL_OPTS. Rate limits are raised by configuration (never switched off).
 */
require('reflect-metadata');
const path = require('node:path');
const v8 = require('node:v8');
// BENCH_DIST: another build's dist/ (bench/ab.js compares builds)
const dist = process.env.BENCH_DIST ? path.join(process.env.BENCH_DIST, 'src') : path.resolve(__dirname, '../../dist/src');
const { loadConfig } = require(path.join(dist, 'config.js'));
const { startPlatform } = require(path.join(dist, 'platform.js'));

const opts = JSON.parse(process.env.BENCH_PANEL_OPTS || '{}');
let platform = null;
let closing = false;

async function close() {
  if (closing) return;
  closing = true;
  const force = setTimeout(() => process.exit(1), 20_000);
  force.unref();
  try {
    await platform?.close();
  } finally {
    process.exit(0);
  }
}

process.on('message', (m) => {
  if (m?.type === 'close') void close();
  // the activity scenario compares the same requests with recording on and off: off, this instance's
  // `record` does nothing; on, the class's own method runs again (bench only: nothing in src/ checks)
  if (m?.type === 'activity') {
    const activity = platform?.services.activity;
    if (activity && m.enabled) delete activity.record;
    else if (activity) activity.record = async () => undefined;
    process.send({ type: 'activity_done' });
  }
  // this process's CPU time so far (µs, all its threads), finer than /proc's 10 ms ticks
  if (m?.type === 'cpu') process.send({ type: 'cpu_done', usage: process.cpuUsage() });
  if (m?.type === 'activity_probe') {
    recordingProbe(m).then(
      (res) => process.send({ type: 'activity_probe_done', ...res }),
      (err) => process.send({ type: 'activity_probe_done', error: String(err?.stack || err) }),
    );
  }
  if (m?.type === 'gc') {
    global.gc?.();
    process.send({ type: 'gc_done' });
  }
  // what holds the panel's memory after the console scenarios (bench/run.js; BENCH_HEAP=1 for a snapshot)
  if (m?.type === 'memory') process.send({ type: 'memory_done', usage: process.memoryUsage() });
  if (m?.type === 'heap_snapshot') process.send({ type: 'heap_snapshot_done', file: v8.writeHeapSnapshot(m.file) });
});
process.on('disconnect', () => void close());

// BENCH_MEM_TRACE=<file>: the panel's memory figures every 250 ms, one JSON line each (what grows: heap or
// buffers), with the longest event-loop delay of those 250 ms (`loopMaxMs`: what held the loop) and the
// garbage collector's pauses in them (`gcMs` in all, `gcMaxMs` the longest, `gcMajor` the mark-sweeps)
if (process.env.BENCH_MEM_TRACE) {
  const fs = require('node:fs');
  const { monitorEventLoopDelay, PerformanceObserver, constants } = require('node:perf_hooks');
  const out = fs.openSync(process.env.BENCH_MEM_TRACE, 'w');
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const gc = { ms: 0, maxMs: 0, major: 0 };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gc.ms += e.duration;
      gc.maxMs = Math.max(gc.maxMs, e.duration);
      if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) gc.major++;
    }
  }).observe({ entryTypes: ['gc'] });
  setInterval(() => {
    const m = process.memoryUsage();
    const mib = (n) => Math.round(n / 1048576);
    const loopMaxMs = Math.round(loop.max / 1e6);
    loop.reset();
    const line = { t: Date.now(), rss: mib(m.rss), heapUsed: mib(m.heapUsed), heapTotal: mib(m.heapTotal), external: mib(m.external), arrayBuffers: mib(m.arrayBuffers), loopMaxMs, gcMs: Math.round(gc.ms), gcMaxMs: Math.round(gc.maxMs), gcMajor: gc.major };
    Object.assign(gc, { ms: 0, maxMs: 0, major: 0 });
    fs.writeSync(out, JSON.stringify(line) + '\n');
  }, 250).unref();
}

/**
 * What recording alone costs: the entry of a power action (`server:power.start` by a signed-in user)
 * recorded `ratePerSec` times a second for `seconds`, through the service the power action calls,
 * then the batch waiting written. With `record: false` the same pacing runs without recording (the
 * baseline of the comparison). Returns the entries recorded and the process's CPU time meanwhile.
 */
async function recordingProbe({ serverId, user, ratePerSec, seconds, record }) {
  const activity = platform.services.activity;
  const actor = { user: { id: user.id, email: user.email }, via: 'session', credentialId: 'bench', credentialCreatedAt: new Date(), credentialExpiresAt: null, ip: '127.0.0.1' };
  const tickMs = 5;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let entries = 0;
  for (;;) {
    await new Promise((r) => setTimeout(r, tickMs));
    const due = Math.min(ratePerSec * seconds, Math.floor(((performance.now() - t0) / 1000) * ratePerSec));
    for (; entries < due; entries++) {
      if (record) await activity.record({ event: 'server:power.start', serverId, actor });
    }
    if (entries >= ratePerSec * seconds) break;
  }
  await activity.flush();
  const cpu = process.cpuUsage(cpu0);
  return { entries: record ? entries : 0, paced: entries, cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - t0 };
}

(async () => {
  const big = 10_000_000;
  const config = loadConfig(
    {
      ADMIN_EMAIL: opts.adminEmail,
      ADMIN_PASSWORD: opts.adminPassword,
      LOG_LEVEL: opts.logLevel || 'warn',
      ...(opts.redisUrl ? { REDIS_URL: opts.redisUrl } : {}),
    },
    {
      port: 0,
      host: '127.0.0.1',
      dataDir: opts.dataDir,
      databaseUrl: opts.databaseUrl,
      localAgent: true,
      agentPort: 0,
      sftpPort: 0,
      stopGraceSeconds: 3,
      rateLimits: { general: big, auth: big, admin: big },
      // hundreds of subscribers of one account from one address
      wsLimits: { connectionsPerUser: big, subscriptionsPerUser: big, anonymousPerAddress: big },
    },
  );
  platform = await startPlatform(config);
  process.send({ type: 'ready', url: platform.url, agentPort: platform.agent()?.port ?? null, pid: process.pid });
})().catch((err) => {
  process.send?.({ type: 'fatal', error: err?.stack || String(err) });
  process.exit(1);
});
