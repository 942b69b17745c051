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
  // the activity scenario compares the same requests with recording on and off (bench only)
  if (m?.type === 'activity') {
    if (platform) platform.services.activity.enabled = Boolean(m.enabled);
    process.send({ type: 'activity_done' });
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

// BENCH_MEM_TRACE=<file>: the panel's memory figures every 250 ms, one JSON line each (what grows: heap or buffers)
if (process.env.BENCH_MEM_TRACE) {
  const fs = require('node:fs');
  const out = fs.openSync(process.env.BENCH_MEM_TRACE, 'w');
  setInterval(() => {
    const m = process.memoryUsage();
    const mib = (n) => Math.round(n / 1048576);
    fs.writeSync(out, JSON.stringify({ t: Date.now(), rss: mib(m.rss), heapUsed: mib(m.heapUsed), heapTotal: mib(m.heapTotal), external: mib(m.external), arrayBuffers: mib(m.arrayBuffers) }) + '\n');
  }, 250).unref();
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
