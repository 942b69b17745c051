'use strict';
/**
 * Scenario 3: console fan-out. One demo game server prints `rate` lines/s (driven with its `spam <n>`
 * command every tick, from bench/children/console-driver.js) to N readers, spread over several reader
 * processes (bench/children/console-readers.js), over each channel of the panel in turn:
 *   node         the node console channel, one frame per line
 *   node-batch   the node console channel in batch mode (`options { batch: true }`, `console_batch` frames)
 *   graphql      GraphQL `consoleOutput`, one event per line
 *   graphql-batch  GraphQL `consoleBatches`
 *   baseline     a bare `ws` server broadcasting the same lines, one frame per line
 * Measured: line latency (receipt time − the line's `ts`), the latency of `say t=<ms>` echoes at every
 * reader (the command's send time → the reader), lines delivered per second and the serving process's
 * CPU per delivered line, loss by the lines' numbers, what the agent's flood budget dropped, and the
 * RSS of the serving process while one extra reader is stalled (its socket paused, never read).
 */
const path = require('node:path');
const os = require('node:os');
const { sleep, waitUntil, rssMiB, startChild, ask, stopChild, apiOk, waitForQuiet, machineCpu, busyCores, procCpuMs } = require('./util');
const { ReaderPool } = require('./reader-pool');
const { summarize, notAvailable, logPhase } = require('./console-summary');

const CHILDREN = path.join(__dirname, '..', 'children');
const TICK_MS = 50;
const MARKERS_PER_SEC = 4;
const DRAIN_MAX_MS = 10_000;

/** Waits until no reader got anything for 500 ms (history delivered), bounded. */
async function settle(pool, maxMs = 10_000) {
  const deadline = Date.now() + maxMs;
  let last = -1;
  while (Date.now() < deadline) {
    const n = (await pool.progress()).arrivals;
    if (n === last) return;
    last = n;
    await sleep(500);
  }
}

/** Until every live reader has `expected` lines, or nothing moved for 1 s, or DRAIN_MAX_MS. */
async function drain(pool, expected) {
  const start = Date.now();
  let last = -1;
  let lastMove = Date.now();
  while (Date.now() - start < DRAIN_MAX_MS) {
    const p = await pool.progress();
    if (p.minLiveLines !== null && p.minLiveLines >= expected) break;
    if (p.lines !== last) {
      last = p.lines;
      lastMove = Date.now();
    } else if (Date.now() - lastMove > 1000) break;
    await sleep(100);
  }
  return Date.now() - start;
}

/** RSS of `pid` every 500 ms while `fn` runs; flat = the second half's peak at most 32 MiB above the first's. */
async function withRssSamples(pid, fn) {
  const samples = [];
  const t0 = Date.now();
  const rss0 = rssMiB(pid);
  const sampler = setInterval(() => samples.push({ t: Date.now() - t0, rss: rssMiB(pid) }), 500);
  let value;
  try {
    value = await fn();
  } finally {
    clearInterval(sampler);
  }
  const half = samples.length ? samples[samples.length - 1].t / 2 : 0;
  const peakOf = (xs) => Math.max(...xs.filter((s) => s.rss !== null).map((s) => s.rss));
  const first = samples.filter((s) => s.t <= half);
  const second = samples.filter((s) => s.t > half);
  const growth = first.length && second.length ? Math.round((peakOf(second) - peakOf(first)) * 10) / 10 : null;
  const rss = { beforeMiB: rss0, peakMiB: Math.max(rss0 ?? 0, ...samples.map((s) => s.rss ?? 0)), endMiB: rssMiB(pid), secondHalfGrowthMiB: growth, flat: growth !== null && growth <= 32, samples: samples.map((s) => [s.t, s.rss]) };
  return { value, rss };
}

/** Drives the output while measuring the serving process `pid`, then waits for the readers to drain. */
async function driveAndMeasure(pool, { drive, pid, expectedOf, quietWaitMs }) {
  const ncores = os.cpus().length;
  const quiet = await waitForQuiet(ncores, quietWaitMs);
  const m0 = machineCpu();
  const cpu0 = procCpuMs(pid);
  const readers0 = pool.cpuMs();
  const t0 = Date.now();
  await pool.measure(true);
  const { value: driven, rss } = await withRssSamples(pid, async () => {
    try {
      const d = await drive();
      d.drainMs = await drain(pool, expectedOf(d));
      const p = await pool.progress();
      d.lastArrivalS = p.lastArrival > t0 ? (p.lastArrival - t0) / 1000 : null;
      return d;
    } finally {
      await pool.measure(false);
    }
  });
  const secs = (Date.now() - t0) / 1000;
  driven.serverCpuMs = procCpuMs(pid) - cpu0;
  driven.readerCpuMs = pool.cpuMs() - readers0;
  driven.cores = {
    server: Math.round((driven.serverCpuMs / 1000 / secs) * 100) / 100,
    machine: busyCores(m0, machineCpu(), ncores),
    machineBusyBefore: quiet.busyCores,
  };
  return { driven, rss };
}

/**
 * One measured phase: `subscribers` readers that keep up plus one stalled reader (specOf(i, stall)),
 * the history settled, then driven by `driveChild` while measuring the process `pid` that serves them.
 */
async function measurePhase(name, kind, { pool, specOf, pid, driveChild, drv, subscribers, quietWaitMs }) {
  const specs = Array.from({ length: subscribers + 1 }, (_, i) => specOf(i, i === subscribers));
  try {
    const opened = await pool.open(specs);
    if (opened.notAvailable) return notAvailable(name, kind, opened.failure);
    if (opened.failure) throw new Error(`${name}: a reader could not subscribe: ${opened.failure}`);
    await settle(pool);
    const measured = await driveAndMeasure(pool, {
      pid,
      drive: () => ask(driveChild, { type: 'drive', ...drv }, (drv.seconds + 60) * 1000),
      expectedOf: (d) => d.lines,
      quietWaitMs,
    });
    const report = await pool.report();
    return summarize(name, { kind, report, measured, expected: measured.driven.lines, subscribers, readerCpuMs: measured.driven.readerCpuMs });
  } finally {
    await pool.closeReaders();
  }
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

async function inBatches(n, size, make) {
  const out = [];
  for (let i = 0; i < n; i += size) out.push(...(await Promise.all(Array.from({ length: Math.min(size, n - i) }, (_, j) => make(i + j)))));
  return out;
}

const PANEL_PHASES = [
  ['nodeChannel', 'node', 'node console channel, per line'],
  ['nodeBatches', 'node-batch', 'node console channel, batches'],
  ['graphql', 'graphql', 'GraphQL consoleOutput, per line'],
  ['graphqlBatches', 'graphql-batch', 'GraphQL consoleBatches'],
];

/** The panel's phases in `phases`, one after the other on one demo server (restarted in between). */
async function runPanelPhases(ctx, phases, results) {
  const { panelUrl, panelPid, apiToken, localNodeId, demoBlueprintId, subscribers, log, mark } = ctx;
  const serverId = await createDemoServer(panelUrl, apiToken, localNodeId, demoBlueprintId);
  const tickets = await inBatches(subscribers + 3, 25, () => consoleTicket(panelUrl, apiToken, serverId));
  const gqlUrl = panelUrl.replace(/^http/, 'ws') + '/graphql';
  const driver = startChild(path.join(CHILDREN, 'console-driver.js'));
  await driver.ready;
  try {
    let first = true;
    for (const [key, kind, name] of PANEL_PHASES.filter(([, k]) => phases.includes(k))) {
      if (!first) await restartDemoServer(panelUrl, apiToken, serverId);
      first = false;
      await ask(driver.child, { type: 'connect', url: tickets[0].url, tokens: [tickets[0].token, tickets[1].token] });
      mark(`console ${ctx.drv.rate} lines/s: ${name}`);
      const specOf = kind.startsWith('graphql')
        ? (_i, stall) => ({ kind, url: gqlUrl, apiToken, serverId, stall })
        : (i, stall) => ({ kind, url: tickets[2 + i].url, token: tickets[2 + i].token, stall });
      results[key] = await measurePhase(name, kind, { ...ctx, specOf, pid: panelPid, driveChild: driver.child });
      logPhase(log, results[key]);
      await sleep(1000);
    }
  } finally {
    await stopChild(driver.child, 5000);
  }
  await apiOk(panelUrl, 'POST', `/api/v1/servers/${serverId}/kill`, { token: apiToken }).catch(() => undefined);
}

/** (baseline) a bare ws broadcast server, same readers, same lines. */
async function runBaselinePhase(ctx, results) {
  const base = startChild(path.join(CHILDREN, 'baseline-ws.js'));
  const ready = await base.ready;
  try {
    ctx.mark(`console ${ctx.drv.rate} lines/s: bare ws baseline`);
    results.baseline = await measurePhase('baseline bare ws', 'node', { ...ctx, specOf: (_i, stall) => ({ kind: 'node', url: ready.url, token: 'baseline', stall }), pid: ready.pid, driveChild: base.child });
    logPhase(ctx.log, results.baseline);
  } finally {
    await stopChild(base.child, 5000);
  }
}

/**
 * `phases`: which of node, node-batch, graphql, graphql-batch, baseline to run. `mark(label)` names
 * what runs now (for the panel's peak RSS over the whole bench).
 */
async function runConsoleScenarios({ panelUrl, panelPid, apiToken, localNodeId, demoBlueprintId, subscribers, readerProcesses = 4, rate, seconds, phases, quietWaitMs = 20_000, log, mark = () => undefined }) {
  const results = {};
  const drv = { rate, seconds, tickMs: TICK_MS, markersPerSec: MARKERS_PER_SEC };
  log(`  scenario 3: console fan-out, ${rate} lines/s to ${subscribers} readers (+1 stalled) in ${readerProcesses} reader processes for ${seconds} s: ${phases.join(', ')}`);
  const pool = await ReaderPool.start(readerProcesses);
  const ctx = { panelUrl, panelPid, apiToken, localNodeId, demoBlueprintId, subscribers, drv, quietWaitMs, log, mark, pool };
  try {
    if (PANEL_PHASES.some(([, k]) => phases.includes(k))) await runPanelPhases(ctx, phases, results);
    if (phases.includes('baseline')) await runBaselinePhase(ctx, results);
  } finally {
    await pool.stop();
  }
  return results;
}

module.exports = { runConsoleScenarios };
