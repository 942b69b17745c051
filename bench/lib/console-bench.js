'use strict';
/**
 * Scenario 3: console fan-out. One demo game server prints `rate` lines/s (driven with its `spam <n>`
 * command every tick) to N subscribers over (A) the node console channel and (B) GraphQL
 * subscriptions, then (C) a bare `ws` broadcast server sends the same lines to N clients.
 * Measured: line latency (receipt time − the line's `ts`, stamped when the agent (or the baseline)
 * produced it), end-to-end latency of `say t=<ms>` markers, lines published (the game numbers its
 * spam lines) against lines offered, lines skipped by readers that kept up (gaps in the numbers),
 * readers disconnected, and the RSS of the process serving them while one extra reader is stalled
 * (its socket paused, never read).
 */
const path = require('node:path');
const WebSocket = require('ws');
const os = require('node:os');
const { Histogram, sleep, waitUntil, rssMiB, startChild, ask, stopChild, apiOk, waitForQuiet, machineCpu, busyCores, procCpuMs } = require('./util');

const CHILDREN = path.join(__dirname, '..', 'children');
const TICK_MS = 50;
const MARKERS_PER_SEC = 4;
const DRAIN_MAX_MS = 10_000;

/** Shared per-phase measurement state. */
class Phase {
  constructor() {
    this.hist = new Histogram();
    this.markerHist = new Histogram();
    this.measuring = false;
    this.readers = [];
    this.floodNotices = 0;
  }
  /** Hook called for every frame (used while waiting for the history to settle). */
  onAny() {}
  total() {
    let n = 0;
    for (const r of this.readers) n += r.lines;
    return n;
  }
}

const SUBSCRIPTION = 'subscription($id: ID!) { consoleOutput(serverId: $id) { line ts } }';
const TS_KEY = Buffer.from('"ts":"');
const SPAM = Buffer.from('spam line ');
const MARKER = Buffer.from('[Server] t=');
const NOTICE = Buffer.from('Output rate limit exceeded');
const HASH = 0x23; // '#'

/**
 * Cheap extraction from a console line frame (node channel `console_output`, or a graphql-ws `next`
 * carrying consoleOutput { line ts }): the readers must cost far less than the servers they measure,
 * so no JSON.parse and no string conversion of the whole frame.
 */
function onFrame(phase, r, buf) {
  phase.onAny();
  if (!phase.measuring) return;
  const now = Date.now();
  const ti = buf.lastIndexOf(TS_KEY);
  if (ti < 0) return;
  const si = buf.indexOf(SPAM);
  if (si >= 0) {
    r.lines++;
    phase.hist.add(now - Date.parse(buf.toString('latin1', ti + 6, ti + 30)));
    // the line's number (` #<k>`, counted by the game): a gap is a line this reader skipped
    let k = 0;
    for (let i = buf.indexOf(HASH, si + SPAM.length) + 1; i > 0 && i < buf.length && buf[i] >= 48 && buf[i] <= 57; i++) k = k * 10 + buf[i] - 48;
    if (k > 0) {
      if (r.first === null) r.first = k;
      // a gap right after the agent's output-rate notice is lines its flood guard dropped at the
      // source (every reader misses them): not lines this reader skipped
      if (r.afterNotice && r.last !== null && k > r.last + 1) r.floodDropped += k - r.last - 1;
      r.afterNotice = false;
      if (r.last !== null && k <= r.last) r.repeated++;
      else r.last = k;
    }
    return;
  }
  const mi = buf.indexOf(MARKER);
  if (mi >= 0) {
    r.markers++;
    phase.markerHist.add(now - Number.parseInt(buf.toString('latin1', mi + 11, mi + 24), 10));
  } else if (buf.indexOf(NOTICE) >= 0) {
    r.notices = (r.notices ?? 0) + 1;
    r.afterNotice = true;
  }
}

/** A reader's record of the numbered spam lines it got while measuring: first and last number, repeats. */
const numbered = () => ({ first: null, last: null, repeated: 0, floodDropped: 0, afterNotice: false });

/** A console-channel reader (node agent or baseline). */
function consoleReader(phase, url, token, { stall = false } = {}) {
  return new Promise((resolve, reject) => {
    const r = { lines: 0, markers: 0, closed: null, ws: null, stalled: stall, ...numbered() };
    const ws = new WebSocket(url, { perMessageDeflate: false, skipUTF8Validation: true });
    r.ws = ws;
    let authed = false;
    const t = setTimeout(() => reject(new Error('console reader: no auth_success within 20 s')), 20_000);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'auth', token })));
    ws.on('message', (buf) => {
      if (authed) return onFrame(phase, r, buf);
      phase.onAny();
      if (buf.toString('latin1', 0, 22) === '{"type":"auth_success"') {
        authed = true;
        clearTimeout(t);
        if (stall) ws._socket.pause(); // never read again: the server must not buffer for it without bound
        resolve(r);
      }
    });
    ws.on('close', (code) => {
      r.closed = code;
      clearTimeout(t);
      reject(new Error(`console reader closed (${code}) before auth_success`));
    });
    ws.on('error', () => undefined);
  });
}

/**
 * A GraphQL subscriber speaking the graphql-ws protocol (graphql-transport-ws) with one consoleOutput
 * subscription. `stall`: pauses its socket after the first item and never reads again.
 * (The graphql-ws client library parses and validates every message; at these rates that made the
 * load generator, not the gateway, the bottleneck — this client only scans the frames.)
 */
function graphqlReader(phase, url, apiToken, serverId, { stall = false } = {}) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'graphql-transport-ws', { perMessageDeflate: false, skipUTF8Validation: true });
    const r = { ws, lines: 0, markers: 0, closed: null, stalled: stall, errors: [], ...numbered() };
    let first = true;
    const t = setTimeout(() => reject(new Error('graphql reader: nothing received within 60 s')), 60_000);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${apiToken}` } })));
    ws.on('message', (buf) => {
      if (!first) {
        if (buf.indexOf('"type":"next"') >= 0) return onFrame(phase, r, buf);
        const m = JSON.parse(buf.toString());
        if (m.type === 'error' || m.type === 'complete') {
          r.errors.push(m.type === 'error' ? m.payload?.[0]?.message : 'complete');
          if (r.closed === null) r.closed = m.type === 'error' ? -2 : -3;
        }
        return;
      }
      const m = JSON.parse(buf.toString());
      if (m.type === 'connection_ack') ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: SUBSCRIPTION, variables: { id: serverId } } }));
      else if (m.type === 'next') {
        first = false;
        clearTimeout(t);
        if (stall) ws._socket.pause();
        resolve(r);
      } else if (m.type === 'error') {
        clearTimeout(t);
        reject(new Error(`graphql reader refused: ${JSON.stringify(m.payload).slice(0, 300)}`));
      }
    });
    ws.on('close', (code) => {
      if (r.closed === null) r.closed = code;
      clearTimeout(t);
      if (first) reject(new Error(`graphql reader closed (${code}) before its first item`));
    });
    ws.on('error', () => undefined);
  });
}

async function inBatches(n, size, make) {
  const out = [];
  for (let i = 0; i < n; i += size) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + size); j++) batch.push(make(j));
    out.push(...(await Promise.all(batch)));
  }
  return out;
}

/** Waits until no reader got anything for 500 ms (history delivered), bounded. */
async function settle(phase, maxMs = 10_000) {
  const deadline = Date.now() + maxMs;
  let last = -1;
  let counter = 0;
  const countAll = () => phase.readers.reduce((a, r) => a + r.lines + r.markers, 0) + counter;
  // the readers only count while measuring; count arrivals through a temporary hook instead
  const orig = phase.onAny;
  phase.onAny = () => counter++;
  try {
    while (Date.now() < deadline) {
      const n = countAll();
      if (n === last) return;
      last = n;
      await sleep(500);
    }
  } finally {
    phase.onAny = orig;
  }
}

/** Runs the drive while sampling RSS; then waits for the readers to drain. */
async function driveAndMeasure(phase, { drive, pid, expectedOf, quietWaitMs }) {
  const ncores = os.cpus().length;
  const rssConnected = rssMiB(pid);
  const quiet = await waitForQuiet(ncores, quietWaitMs);
  const m0 = machineCpu();
  const cpu0 = procCpuMs(pid);
  const self0 = process.cpuUsage();
  const samples = [];
  const rss0 = rssMiB(pid);
  const t0 = Date.now();
  let lastCpu = cpu0;
  let lastSelf = null;
  const sampler = setInterval(() => {
    samples.push({ t: Date.now() - t0, rss: rssMiB(pid) });
    if (process.env.BENCH_DEBUG) {
      const c = procCpuMs(pid);
      const me = process.cpuUsage();
      console.log(`      t=${Date.now() - t0} ms received=${phase.total()} server cpu=${Math.round((c - lastCpu) / 5)}% readers cpu=${Math.round((me.user + me.system - (lastSelf ?? 0)) / 5000)}% rss=${samples.at(-1).rss} closed=${phase.readers.filter((r) => r.closed !== null).length}`);
      lastCpu = c;
      lastSelf = me.user + me.system;
    }
  }, 500);
  phase.measuring = true;
  let driven;
  try {
    driven = await drive();
    const expected = expectedOf(driven);
    // drain: until every live reader has everything, or nothing moved for 1 s, or DRAIN_MAX_MS
    const drainStart = Date.now();
    let last = phase.total();
    let lastMove = Date.now();
    while (Date.now() - drainStart < DRAIN_MAX_MS) {
      const live = phase.readers.filter((r) => r.closed === null && !r.stalled);
      if (live.every((r) => r.lines >= expected)) break;
      await sleep(100);
      const n = phase.total();
      if (n !== last) {
        last = n;
        lastMove = Date.now();
      } else if (Date.now() - lastMove > 1000) break;
    }
    driven.drainMs = Date.now() - drainStart;
    const secs = (Date.now() - t0) / 1000;
    const self = process.cpuUsage(self0);
    driven.serverCpuMs = procCpuMs(pid) - cpu0;
    driven.cores = {
      server: Math.round(((procCpuMs(pid) - cpu0) / 1000 / secs) * 100) / 100,
      readers: Math.round(((self.user + self.system) / 1e6 / secs) * 100) / 100,
      machine: busyCores(m0, machineCpu(), ncores), machineBusyBefore: quiet.busyCores };
  } finally {
    clearInterval(sampler);
    phase.measuring = false;
  }
  const rssEnd = rssMiB(pid);
  const half = samples.length ? samples[samples.length - 1].t / 2 : 0;
  const firstHalf = samples.filter((s) => s.t <= half && s.rss !== null).map((s) => s.rss);
  const secondHalf = samples.filter((s) => s.t > half && s.rss !== null).map((s) => s.rss);
  const peak = Math.max(rss0 ?? 0, ...samples.map((s) => s.rss ?? 0));
  const growthSecondHalf = firstHalf.length && secondHalf.length ? Math.round((Math.max(...secondHalf) - Math.max(...firstHalf)) * 10) / 10 : null;
  return {
    driven,
    rss: { withReadersConnectedMiB: rssConnected, beforeMiB: rss0, peakMiB: peak, endMiB: rssEnd, secondHalfGrowthMiB: growthSecondHalf, flat: growthSecondHalf !== null && growthSecondHalf <= 32, samples: samples.map((s) => [s.t, s.rss]) },
  };
}

function summarize(name, phase, measured, expected, subscribers) {
  const live = phase.readers.filter((r) => !r.stalled);
  const keptUp = live.filter((r) => r.closed === null);
  const complete = keptUp.filter((r) => r.lines >= expected).length;
  const counts = live.map((r) => r.lines).sort((a, b) => a - b);
  const best = counts.length ? counts[counts.length - 1] : 0;
  // Loss is judged against what was published, by the lines' numbers: the lines from the lowest to
  // the highest number any reader got in the window. A kept-up reader skipped a line when it lacks
  // one before its own last line (a reader is sent its lines in order); the lines after its last one
  // were still on their way when the window closed. (The offered lines the game had not printed by
  // then, held back by its full stdout pipe, are not lost: they are shown against `offered`.)
  const numberedReaders = live.filter((r) => r.first !== null);
  const firstNo = numberedReaders.length ? Math.min(...numberedReaders.map((r) => r.first)) : 0;
  const lastNo = numberedReaders.length ? Math.max(...numberedReaders.map((r) => r.last)) : -1;
  const published = lastNo - firstNo + 1;
  let skipped = 0;
  let inFlight = 0;
  let repeated = 0;
  for (const r of keptUp) {
    repeated += r.repeated;
    if (r.first === null) {
      skipped += published;
      continue;
    }
    skipped += r.first - firstNo + (r.last - r.first + 1) - (r.lines - r.repeated) - r.floodDropped;
    inFlight += lastNo - r.last;
  }
  const floodDropped = Math.max(0, ...keptUp.map((r) => r.floodDropped));
  const delivered = phase.total();
  const seconds = measured.driven.elapsedMs / 1000;
  return {
    name,
    subscribers,
    offeredLines: expected,
    offeredLinesPerSec: Math.round(expected / seconds),
    publishedLines: published,
    deliveredLinesPerSecTotal: Math.round(delivered / (seconds + (measured.driven.drainMs ?? 0) / 1000)),
    latencyMs: phase.hist.summary(),
    markerLatencyMs: phase.markerHist.summary(),
    readersKeptUp: keptUp.length,
    readersDisconnected: live.length - keptUp.length,
    readersComplete: complete,
    linesPerReader: { min: counts[0] ?? 0, median: counts[Math.floor(counts.length / 2)] ?? 0, max: best },
    publishedPctOfOffered: expected ? Math.round((published / expected) * 10000) / 100 : null,
    linesSkippedByKeptUpReaders: skipped,
    linesRepeatedOrOutOfOrder: repeated,
    linesInFlightAtEnd: inFlight,
    skippedPctKeptUp: keptUp.length && published > 0 ? Math.round((skipped / (keptUp.length * published)) * 10000) / 100 : null,
    floodNotices: Math.max(0, ...live.map((r) => r.notices ?? 0)),
    linesDroppedByFloodGuard: floodDropped,
    // CPU the serving process spent per line delivered to one reader (load-robust)
    serverCpuUsPerDelivery: delivered ? Math.round(((measured.driven.serverCpuMs ?? 0) * 1000) / delivered * 10) / 10 : null,
    drive: measured.driven,
    rss: measured.rss,
  };
}

function logPhase(log, s) {
  log(
    `    ${s.name}: offered ${s.offeredLinesPerSec} lines/s; latency p50 ${s.latencyMs.p50} ms p99 ${s.latencyMs.p99} ms (markers e2e p99 ${s.markerLatencyMs.p99} ms); ` +
      `kept up ${s.readersKeptUp}/${s.subscribers} (complete ${s.readersComplete}), lines/reader min ${s.linesPerReader.min} median ${s.linesPerReader.median} max ${s.linesPerReader.max} ` +
      `of ${s.publishedLines} published (${s.offeredLines} offered); skipped ${s.linesSkippedByKeptUpReaders}, repeated ${s.linesRepeatedOrOutOfOrder}, in flight at the end ${s.linesInFlightAtEnd}` +
      ` (flood notices ${s.floodNotices}, lines the agent's output rate limit dropped at the source ${s.linesDroppedByFloodGuard}); ` +
      `cores busy: server ${s.drive.cores?.server}, readers ${s.drive.cores?.readers}, machine ${s.drive.cores?.machine}; ` +
      `RSS ${s.rss.beforeMiB}→peak ${s.rss.peakMiB}→${s.rss.endMiB} MiB (2nd-half growth ${s.rss.secondHalfGrowthMiB} MiB)`,
  );
}

async function closeReaders(phase) {
  await Promise.race([
    Promise.all(
      phase.readers.map(async (r) => {
        try {
          if (r.ws) r.ws.terminate();
          if (r.client) await r.client.dispose();
        } catch {
          /* ignore */
        }
      }),
    ),
    sleep(5000),
  ]);
  phase.readers = [];
}

async function createDemoServer(base, token, nodeId, blueprintId) {
  const s = (await apiOk(base, 'POST', '/api/v1/servers', { token, body: { name: 'bench console', nodeId, blueprintId, memory: 1024, cpu: 100, disk: 1024 } })).data;
  await waitUntil(async () => (await apiOk(base, 'GET', `/api/v1/servers/${s.id}`, { token })).data.status === 'offline', 60_000, 'the demo server to install');
  await apiOk(base, 'POST', `/api/v1/servers/${s.id}/start`, { token });
  await waitUntil(async () => (await apiOk(base, 'GET', `/api/v1/servers/${s.id}`, { token })).data.status === 'running', 30_000, 'the demo server to run', 100);
  return s.id;
}

/** Kill + start: clears any output backlog the game still holds from a previous phase. */
async function restartDemoServer(base, token, id) {
  await apiOk(base, 'POST', `/api/v1/servers/${id}/kill`, { token });
  await waitUntil(async () => (await apiOk(base, 'GET', `/api/v1/servers/${id}`, { token })).data.status === 'offline', 30_000, 'the demo server to stop', 100);
  await apiOk(base, 'POST', `/api/v1/servers/${id}/start`, { token });
  await waitUntil(async () => (await apiOk(base, 'GET', `/api/v1/servers/${id}`, { token })).data.status === 'running', 30_000, 'the demo server to run again', 100);
}

async function consoleTicket(base, token, serverId) {
  const t = (await apiOk(base, 'GET', `/api/v1/servers/${serverId}/console-token`, { token })).data;
  const u = new URL(t.socket);
  u.hostname = '127.0.0.1'; // the local node's fqdn is "localhost"; traffic stays on 127.0.0.1
  return { url: u.toString(), token: t.token };
}

/**
 * One measured phase: `subscribers` readers that keep up plus one stalled reader, the output
 * settled, then driven by `driveChild` while measuring the process `pid` that serves the readers.
 */
async function measurePhase(name, { openReader, pid, driveChild, drv, subscribers, quietWaitMs, log }) {
  const phase = new Phase();
  phase.readers = await inBatches(subscribers, 50, (i) => openReader(phase, i, {}));
  phase.readers.push(await openReader(phase, subscribers, { stall: true }));
  await settle(phase);
  const m = await driveAndMeasure(phase, {
    pid,
    drive: () => ask(driveChild, { type: 'drive', ...drv }, (drv.seconds + 60) * 1000),
    expectedOf: (d) => d.lines,
    quietWaitMs,
  });
  const result = summarize(name, phase, m, m.driven.lines, subscribers);
  const errs = phase.readers.flatMap((r) => r.errors ?? []);
  result.subscriberErrors = [...new Set(errs)].slice(0, 5);
  logPhase(log, result);
  await closeReaders(phase);
  return result;
}

async function runConsoleScenarios({ panelUrl, panelPid, apiToken, localNodeId, demoBlueprintId, subscribers, rate, seconds, quietWaitMs = 20_000, log }) {
  const results = {};
  const drv = { rate, seconds, tickMs: TICK_MS, markersPerSec: MARKERS_PER_SEC };
  const common = { drv, subscribers, quietWaitMs, log };
  const want = (process.env.BENCH_CONSOLE_PHASES || 'node,graphql,baseline').split(',');
  log(`  scenario 3: console fan-out, ${rate} lines/s to ${subscribers} subscribers for ${seconds} s (+1 stalled reader)`);
  const serverId = await createDemoServer(panelUrl, apiToken, localNodeId, demoBlueprintId);
  const tickets = await inBatches(subscribers + 3, 25, () => consoleTicket(panelUrl, apiToken, serverId));
  const driver = startChild(path.join(CHILDREN, 'console-driver.js'));
  await driver.ready;
  try {
    await ask(driver.child, { type: 'connect', url: tickets[0].url, tokens: [tickets[0].token, tickets[1].token] });

    // (A) the node console channel
    if (want.includes('node')) {
      results.nodeChannel = await measurePhase('node console channel', {
        ...common,
        openReader: (phase, i, opts) => consoleReader(phase, tickets[2 + i].url, tickets[2 + i].token, opts),
        pid: panelPid,
        driveChild: driver.child,
      });
      await sleep(1000);
    }

    // (B) GraphQL subscriptions at the gateway
    if (want.includes('graphql')) {
      await restartDemoServer(panelUrl, apiToken, serverId);
      await ask(driver.child, { type: 'connect', url: tickets[0].url, tokens: [tickets[0].token, tickets[1].token] });
      const gqlUrl = panelUrl.replace(/^http/, 'ws') + '/graphql';
      results.graphql = await measurePhase('GraphQL consoleOutput', {
        ...common,
        openReader: (phase, _i, opts) => graphqlReader(phase, gqlUrl, apiToken, serverId, opts),
        pid: panelPid,
        driveChild: driver.child,
      });
    }
  } finally {
    await stopChild(driver.child, 5000);
  }
  await apiOk(panelUrl, 'POST', `/api/v1/servers/${serverId}/kill`, { token: apiToken }).catch(() => undefined);

  // (C) baseline: a bare ws broadcast server, same clients, same lines
  if (want.includes('baseline')) {
    const base = startChild(path.join(CHILDREN, 'baseline-ws.js'));
    const ready = await base.ready;
    try {
      results.baseline = await measurePhase('baseline bare ws', {
        ...common,
        openReader: (phase, _i, opts) => consoleReader(phase, ready.url, 'baseline', opts),
        pid: ready.pid,
        driveChild: base.child,
      });
    } finally {
      await stopChild(base.child, 5000);
    }
  }
  return results;
}

module.exports = { runConsoleScenarios };
