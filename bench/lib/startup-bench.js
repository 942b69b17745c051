'use strict';
/**
 * Scenario 4: `npm start`-like startup (node dist/src/main.js) on an EXISTING embedded database:
 * a first start prepares DATA_DIR (initdb, migrations, first admin), then timed starts measure the
 * time from spawn to the first 200 from /health; the idle RSS of the node process 5 s later.
 */
const { spawn } = require('node:child_process');
const { PANEL_NODE_FLAGS } = require('./panel-flags');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { freePort, rssMiB, sleep } = require('./util');

const MAIN = path.resolve(__dirname, '../../dist/src/main.js');

function spawnMain(env) {
  const child = spawn(process.execPath, [...PANEL_NODE_FLAGS, MAIN], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d) => {
    out += d.toString();
    if (out.length > 32768) out = out.slice(-32768);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.output = () => out;
  return child;
}

async function waitHealthy(url, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`main.js exited (${child.exitCode}):\n${child.output().slice(-3000)}`);
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (r.status === 200) return;
    } catch {
      /* not listening yet */
    }
    await sleep(25);
  }
  throw new Error(`no 200 from ${url} within ${timeoutMs} ms:\n${child.output().slice(-3000)}`);
}

function stopMain(child, ms = 30_000) {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const t = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('exit', (code) => {
      clearTimeout(t);
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}

async function runStartupScenario({ runs = 3, idleSeconds = 5, log }) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'hostpanel-bench-start-'));
  fs.chmodSync(base, 0o755); // the postgres OS user must reach DATA_DIR/postgres
  const port = await freePort();
  const env = {
    DATA_DIR: path.join(base, 'data'),
    PORT: String(port),
    HOST: '127.0.0.1',
    EMBEDDED_PG_PORT: String(await freePort()),
    AGENT_PORT: String(await freePort()),
    SFTP_PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production', // as `npm start`
    ADMIN_EMAIL: 'bench@example.com',
    ADMIN_PASSWORD: 'bench-password-123',
  };
  const health = `http://127.0.0.1:${port}/health`;
  log('  scenario 4: startup on an existing embedded database');
  try {
    const t0 = Date.now();
    const first = spawnMain(env);
    try {
      await waitHealthy(health, first, 180_000);
    } finally {
      await stopMain(first);
    }
    const firstStartMs = Date.now() - t0;
    log(`    first start (initdb + migrations, not a target): healthy in ${firstStartMs} ms (incl. stop)`);
    const times = [];
    let idleRss = null;
    for (let i = 0; i < runs; i++) {
      const start = Date.now();
      const child = spawnMain(env);
      try {
        await waitHealthy(health, child, 60_000);
        times.push(Date.now() - start);
        if (i === runs - 1) {
          await sleep(idleSeconds * 1000);
          idleRss = rssMiB(child.pid);
        }
      } finally {
        await stopMain(child);
      }
      log(`    start ${i + 1}/${runs}: /health 200 after ${times.at(-1)} ms`);
    }
    const sorted = [...times].sort((a, b) => a - b);
    const res = { runs: times, medianMs: sorted[Math.floor(sorted.length / 2)], maxMs: sorted.at(-1), idleRssMiB: idleRss, idleSeconds, firstStartMs };
    log(`    median ${res.medianMs} ms, max ${res.maxMs} ms; idle RSS after ${idleSeconds} s: ${idleRss} MiB (node process; PostgreSQL is separate)`);
    return res;
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

module.exports = { runStartupScenario };
