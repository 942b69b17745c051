#!/usr/bin/env node
'use strict';
/**
 * `npm run bench`: builds (npm script), then runs the benchmark scenarios against the compiled panel
 * (dist/) and their baselines, prints one line per phase, and writes bench/results/<timestamp>.json
 * and bench/results/latest.md. Bounded: every phase has a timeout and the whole run a watchdog.
 *
 * Environment knobs (defaults in brackets):
 *   DATABASE_URL            external PostgreSQL (a scratch database is created and dropped) [embedded]
 *   BENCH_SCENARIOS         comma list of http,console,activity,files,backups,startup [all]
 *   BENCH_BACKUP_MIB        size of the server backed up and restored in the backups scenario [512]
 *   BENCH_FILE_MIB          size of the file uploaded and downloaded in the files scenario [512]
 *   BENCH_FILE_ROUNDS       rounds of cp, download, upload in the files scenario; each ratio is the median round's [3]
 *   BENCH_FILE_SFTP=0       leave out the SFTP transfers of the files scenario
 *   BENCH_SERVERS           servers seeded for scenario 1/2 [10000]
 *   BENCH_HTTP_SECONDS      autocannon measured seconds per target [6]
 *   BENCH_HTTP_ROUNDS       rounds of the three HTTP targets (order turning); each reports its median round [3]
 *   BENCH_ACTIVITY_ROUNDS   rounds of the activity scenario (list and power, recording on and off) [10]
 *   BENCH_ACTIVITY_SECONDS  measured seconds per window of the activity scenario (after 1 s of warm-up) [2]
 *   BENCH_WARMUP_SECONDS    autocannon warm-up seconds per target [2]
 *   BENCH_SUBSCRIBERS       console readers [500]
 *   BENCH_READER_PROCESSES  processes the console readers are spread over [4]
 *   BENCH_LINES_PER_SEC     console lines per second offered [10000]
 *   BENCH_CONSOLE_SECONDS   console drive seconds per phase [8]
 *   BENCH_CONSOLE_PHASES    console phases at BENCH_LINES_PER_SEC, of node,node-batch,graphql,graphql-batch,baseline
 *                           [node,node-batch,graphql-batch,baseline]
 *   BENCH_SECOND_RATE       a second console pass at this many lines/s, below saturation; 0 = skip [50]
 *   BENCH_SECOND_PHASES     console phases at BENCH_SECOND_RATE [node,graphql,baseline]
 *   BENCH_STARTUP_RUNS      timed starts in scenario 4 [3]
 *   BENCH_QUIET_WAIT_SECONDS before each measurement, wait at most this long for the machine to be idle [10]
 *   BENCH_REDIS_URL         run the panel with REDIS_URL (console bus and rate limits via Redis) [unset]
 *   BENCH_LOG_LEVEL         panel LOG_LEVEL [warn]
 *   BENCH_CPU_PROF=1        run the panel with --cpu-prof (profiles in bench/results/prof-<timestamp>/)
 *   BENCH_HEAP=1            after the console scenarios, write a heap snapshot of the panel (bench/results/prof-<timestamp>/)
 *   BENCH_PANEL_FLAGS       the panel's Node flags for this run [package.json config.panelNodeFlags]
 *   BENCH_MEM_TRACE=<file>  the panel writes its memory figures (RSS, heap, external), longest event-loop delay and garbage-collector pauses to <file> every 250 ms, one JSON line each
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { openBenchDatabase } = require('./lib/database');
const { runHttpScenarios, seedServers, unseedServers } = require('./lib/http-bench');
const { runConsoleScenarios } = require('./lib/console-bench');
const { runStartupScenario } = require('./lib/startup-bench');
const { runActivityScenario } = require('./lib/activity-bench');
const { runFilesScenario } = require('./lib/files-bench');
const { runBackupsScenario } = require('./lib/backups-bench');
const { buildRows, markdown } = require('./lib/report');
const { PANEL_NODE_FLAGS } = require('./lib/panel-flags');
const { trackRss } = require('./lib/rss-tracker');
const { startChild, stopChild, killAllChildren, apiOk, withTimeout, ask } = require('./lib/util');

const env = process.env;
const list = (v) => v.split(',').map((s) => s.trim()).filter(Boolean);
const int = (name, def) => {
  const v = Number.parseInt(env[name] ?? '', 10);
  return Number.isFinite(v) && v > 0 ? v : def;
};
const params = {
  scenarios: list(env.BENCH_SCENARIOS || 'http,console,activity,files,backups,startup'),
  fileMiB: int('BENCH_FILE_MIB', 512),
  fileRounds: int('BENCH_FILE_ROUNDS', 3),
  fileSftp: env.BENCH_FILE_SFTP !== '0',
  backupMiB: int('BENCH_BACKUP_MIB', 512),
  servers: int('BENCH_SERVERS', 10_000),
  httpSeconds: int('BENCH_HTTP_SECONDS', 6),
  httpRounds: int('BENCH_HTTP_ROUNDS', 3),
  activityRounds: int('BENCH_ACTIVITY_ROUNDS', 10),
  activitySeconds: int('BENCH_ACTIVITY_SECONDS', 2),
  warmupSeconds: int('BENCH_WARMUP_SECONDS', 2),
  subscribers: int('BENCH_SUBSCRIBERS', 500),
  readerProcesses: int('BENCH_READER_PROCESSES', 4),
  linesPerSec: int('BENCH_LINES_PER_SEC', 10_000),
  // a second, lighter pass shows the fan-out below saturation (0 or unset to skip: BENCH_SECOND_RATE=0)
  secondRate: env.BENCH_SECOND_RATE === '0' ? 0 : int('BENCH_SECOND_RATE', 50),
  consoleSeconds: int('BENCH_CONSOLE_SECONDS', 8),
  consolePhases: list(env.BENCH_CONSOLE_PHASES || 'node,node-batch,graphql-batch,baseline'),
  secondPhases: list(env.BENCH_SECOND_PHASES || 'node,graphql,baseline'),
  startupRuns: int('BENCH_STARTUP_RUNS', 3),
  quietWaitSeconds: int('BENCH_QUIET_WAIT_SECONDS', 10),
  redis: env.BENCH_REDIS_URL || null,
  logLevel: env.BENCH_LOG_LEVEL || 'warn',
  cpuProf: env.BENCH_CPU_PROF === '1',
  heapSnapshot: env.BENCH_HEAP === '1',
};

const RESULTS = path.join(__dirname, 'results');
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const t0 = Date.now();
const log = (msg) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${msg}`);

// the activity scenario alone takes about 6 minutes (10 rounds of 4 windows, then 6 pairs of probes)
const WATCHDOG_MS = 20 * 60_000;
const watchdog = setTimeout(() => {
  console.error(`benchmark watchdog: the run took longer than ${WATCHDOG_MS / 60000} minutes; aborting`);
  killAllChildren();
  process.exit(2);
}, WATCHDOG_MS);
watchdog.unref();
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    killAllChildren();
    process.exit(130);
  });
}

const ADMIN_EMAIL = 'bench-admin@example.com';
const ADMIN_PASSWORD = 'bench-admin-password';
const OWNER_PASSWORD = 'bench-owner-password';

/** The panel's process.memoryUsage() in MiB, and a heap snapshot when `snapshotFile` is given. */
async function panelMemory(child, snapshotFile, log) {
  const mib = (bytes) => Math.round((bytes / 2 ** 20) * 10) / 10;
  const { usage } = await ask(child, { type: 'memory' });
  const out = Object.fromEntries(Object.entries(usage).map(([k, v]) => [`${k}MiB`, mib(v)]));
  log(`panel memory after the console scenarios: RSS ${out.rssMiB} MiB, heap used ${out.heapUsedMiB} of ${out.heapTotalMiB} MiB, external ${out.externalMiB} MiB (array buffers ${out.arrayBuffersMiB} MiB)`);
  if (snapshotFile) {
    fs.mkdirSync(path.dirname(snapshotFile), { recursive: true });
    out.heapSnapshot = (await ask(child, { type: 'heap_snapshot', file: snapshotFile }, 300_000)).file;
    log(`panel heap snapshot: ${out.heapSnapshot}`);
  }
  return out;
}

async function main() {
  if (!fs.existsSync(path.join(__dirname, '..', 'dist', 'src', 'platform.js'))) throw new Error('dist/ is missing: run `npm run bench` (it builds first)');
  fs.mkdirSync(RESULTS, { recursive: true });
  const cpus = os.cpus();
  const result = {
    startedAt: new Date(t0).toISOString(),
    machine: {
      cores: cpus.length,
      cpuModel: cpus[0]?.model?.trim() ?? 'unknown',
      memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
      loadAverageAtStart: os.loadavg().map((x) => Math.round(x * 100) / 100),
      node: process.version,
      platform: `${os.type()} ${os.release()} ${os.arch()}`,
    },
    params,
    // the knobs this run was given (a URL's credentials left out)
    knobs: Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith('BENCH_')).sort().map(([k, v]) => [k, v.replace(/\/\/[^@/]*@/, '//…@')])),
    errors: [],
  };
  log(`machine: ${result.machine.cores} cores (${result.machine.cpuModel}), ${result.machine.memoryGiB} GiB, Node ${process.version}`);
  let rss = null; // the panel's RSS over the whole bench
  const phase = async (name, fn) => {
    rss?.mark(name);
    try {
      return await fn();
    } catch (err) {
      log(`  ${name} FAILED: ${err.message.split('\n')[0]}`);
      result.errors.push({ phase: name, message: String(err.stack || err.message) });
      return undefined;
    }
  };

  const wantPanel = ['http', 'console', 'activity', 'files', 'backups'].some((s) => params.scenarios.includes(s));
  if (wantPanel) {
    log('database: preparing');
    const db = await withTimeout(openBenchDatabase(), 180_000, 'starting the benchmark database');
    result.database = { kind: db.kind, version: db.version };
    log(`database: PostgreSQL ${db.version}, ${db.kind}`);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostpanel-bench-data-'));
    fs.chmodSync(dataDir, 0o755);
    let panel;
    try {
      log('panel: starting (dist/, local agent, rate limits raised by configuration)');
      const profDir = path.join(RESULTS, `prof-${stamp}`);
      panel = startChild(path.join(__dirname, 'children', 'panel.js'), {
        env: {
          NODE_ENV: 'production', // as `npm start`: libraries (graphql-js) skip their development checks
          BENCH_PANEL_OPTS: JSON.stringify({ adminEmail: ADMIN_EMAIL, adminPassword: ADMIN_PASSWORD, dataDir, databaseUrl: db.url, logLevel: params.logLevel, redisUrl: params.redis }),
        },
        execArgv: [...PANEL_NODE_FLAGS, ...(params.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [])],
      });
      const ready = await panel.ready;
      const base = ready.url;
      log(`panel: listening at ${base} (pid ${ready.pid}, agent port ${ready.agentPort})`);
      rss = trackRss(ready.pid, t0);

      // accounts and records through the API
      const session = (await apiOk(base, 'POST', '/api/v1/auth/signin', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).data;
      const apiToken = (await apiOk(base, 'POST', '/api/v1/users/me/api-tokens', { token: session.token, body: { name: 'bench' } })).data.token;
      const owner = (await apiOk(base, 'POST', '/api/v1/auth/signup', { body: { email: 'bench-owner@example.com', password: OWNER_PASSWORD, name: 'Bench Owner' } })).data;
      const nodes = (await apiOk(base, 'GET', '/api/v1/nodes', { token: apiToken })).data;
      const localNode = nodes.find((n) => n.name === 'local');
      const blueprints = (await apiOk(base, 'GET', '/api/v1/blueprints?limit=100', { token: apiToken })).data;
      const demo = blueprints.find((b) => b.key === 'demo-game');
      if (!localNode || !demo) throw new Error('the local node or the demo-game blueprint is missing');

      if (params.scenarios.includes('http')) {
        await phase('http', async () => {
          log(`seed: ${params.servers} servers (one multi-row INSERT … SELECT generate_series)`);
          const node = (await apiOk(base, 'POST', '/api/v1/nodes', { token: apiToken, body: { name: 'bench-node', fqdn: '127.0.0.1', port: 1, memory: 1048576, disk: 4194304, cpuCores: 64 } })).data;
          const ts = Date.now();
          const count = await seedServers(db.url, { count: params.servers, ownerIds: [owner.user.id, session.user.id], nodeId: node.id, blueprintId: demo.id });
          log(`seed: ${count} servers in the table (${Date.now() - ts} ms)`);
          const baseline = startChild(path.join(__dirname, 'children', 'baseline-http.js'), { env: { BENCH_DATABASE_URL: db.url } });
          try {
            const b = await baseline.ready;
            result.http = await withTimeout(
              runHttpScenarios({ panelUrl: base, panelPid: ready.pid, baselineUrl: b.url, baselinePid: b.pid, apiToken, seconds: params.httpSeconds, warmupSeconds: params.warmupSeconds, quietWaitMs: params.quietWaitSeconds * 1000, rounds: params.httpRounds, log }),
              (params.httpSeconds + params.warmupSeconds + params.quietWaitSeconds + 2) * 3 * params.httpRounds * 1000 + 60_000,
              'scenarios 1 and 2',
            );
          } finally {
            await stopChild(baseline.child, 5000);
            // half the seeded servers are the owner's: the next scenarios create theirs within its quota
            await unseedServers(db.url, node.id);
          }
        });
      }
      if (params.scenarios.includes('activity')) {
        await phase('activity', async () => {
          const server = (await apiOk(base, 'POST', '/api/v1/servers', { token: owner.token, body: { name: 'bench activity', nodeId: localNode.id, blueprintId: demo.id, memory: 128, cpu: 50, disk: 256 } })).data;
          for (let i = 0; i < 200; i++) {
            const s = (await apiOk(base, 'GET', `/api/v1/servers/${server.id}`, { token: owner.token })).data;
            if (s.status === 'offline') break;
            await new Promise((r) => setTimeout(r, 100));
          }
          await apiOk(base, 'POST', `/api/v1/servers/${server.id}/start`, { token: owner.token });
          result.activity = await withTimeout(
            runActivityScenario({
              panelChild: panel.child,
              panelUrl: base,
              databaseUrl: db.url,
              user: { id: owner.user.id, email: owner.user.email },
              userToken: owner.token,
              serverId: server.id,
              seconds: params.activitySeconds,
              warmupSeconds: 1,
              quietWaitMs: params.quietWaitSeconds * 1000,
              rounds: params.activityRounds,
              log,
            }),
            ((params.activitySeconds + 2) * 4 + params.quietWaitSeconds + 2) * params.activityRounds * 1000 + 12 * 9 * 1000 + 60_000, // rounds, then 6 pairs of probes of at most 8 s
            'the activity scenario',
          );
          await apiOk(base, 'POST', `/api/v1/servers/${server.id}/kill`, { token: owner.token });
        });
      }
      if (params.scenarios.includes('files')) {
        await phase('files', async () => {
          const disk = params.fileMiB * 2 + 256;
          const server = (await apiOk(base, 'POST', '/api/v1/servers', { token: owner.token, body: { name: 'bench files', nodeId: localNode.id, blueprintId: demo.id, memory: 128, cpu: 50, disk } })).data;
          for (let i = 0; i < 200; i++) {
            const s = (await apiOk(base, 'GET', `/api/v1/servers/${server.id}`, { token: owner.token })).data;
            if (s.status === 'offline') break;
            await new Promise((r) => setTimeout(r, 100));
          }
          const details = (await apiOk(base, 'GET', `/api/v1/servers/${server.id}/sftp`, { token: owner.token })).data;
          const sftp = details.port ? { port: details.port, username: details.username, password: OWNER_PASSWORD } : null;
          if (!sftp) log('  files: the node has not reported its SFTP server: no SFTP transfer');
          result.files = await withTimeout(
            runFilesScenario({ panelUrl: base, panelPid: ready.pid, userToken: owner.token, serverId: server.id, serverDir: path.join(dataDir, 'agent', 'servers', server.id), sftp: params.fileSftp ? sftp : null, sizeMiB: params.fileMiB, rounds: params.fileRounds, log }),
            10 * 60_000,
            'the files scenario',
          ).catch((err) => Promise.reject(new Error(`${err.message}\npanel output:\n${panel.child.output().slice(-3000)}`)));
          await apiOk(base, 'DELETE', `/api/v1/servers/${server.id}`, { token: owner.token }, [204]);
        });
      }
      if (params.scenarios.includes('backups')) {
        await phase('backups', async () => {
          const disk = params.backupMiB * 3 + 256;
          const server = (await apiOk(base, 'POST', '/api/v1/servers', { token: owner.token, body: { name: 'bench backups', nodeId: localNode.id, blueprintId: demo.id, memory: 128, cpu: 50, disk } })).data;
          for (let i = 0; i < 200; i++) {
            const s = (await apiOk(base, 'GET', `/api/v1/servers/${server.id}`, { token: owner.token })).data;
            if (s.status === 'offline') break;
            await new Promise((r) => setTimeout(r, 100));
          }
          result.backups = await withTimeout(
            runBackupsScenario({ panelUrl: base, userToken: owner.token, serverId: server.id, serverDir: path.join(dataDir, 'agent', 'servers', server.id), storeDir: path.join(dataDir, 'agent', 'backups', server.id), sizeMiB: params.backupMiB, log }),
            15 * 60_000,
            'the backups scenario',
          );
          await apiOk(base, 'DELETE', `/api/v1/servers/${server.id}`, { token: owner.token }, [204]);
        });
      }
      if (params.scenarios.includes('console')) {
        result.console = [];
        const passes = [
          [params.linesPerSec, params.consolePhases],
          [params.secondRate, params.secondPhases],
        ].filter(([rate, phases]) => rate > 0 && phases.length);
        for (const [rate, phases] of passes) {
          await phase(`console ${rate} lines/s`, async () => {
            const res = await withTimeout(
              runConsoleScenarios({
                panelUrl: base,
                panelPid: ready.pid,
                apiToken,
                localNodeId: localNode.id,
                demoBlueprintId: demo.id,
                subscribers: params.subscribers,
                readerProcesses: params.readerProcesses,
                rate,
                seconds: params.consoleSeconds,
                phases,
                quietWaitMs: params.quietWaitSeconds * 1000,
                log,
                mark: (label) => rss?.mark(label),
              }),
              (params.consoleSeconds + params.quietWaitSeconds + 60) * phases.length * 1000 + 60_000,
              `scenario 3 at ${rate} lines/s`,
            );
            result.console.push({ rate, ...res });
          });
        }
        await phase('panel memory after the console scenarios', async () => {
          result.memoryAfterConsole = await panelMemory(panel.child, params.heapSnapshot && path.join(RESULTS, `prof-${stamp}`, 'panel-after-console.heapsnapshot'), log);
        });
      }
    } finally {
      if (rss) result.panelRss = rss.stop();
      log('panel: stopping');
      if (panel) await stopChild(panel.child, 30_000);
      if (params.cpuProf) log(`panel CPU profile(s): ${path.join(RESULTS, `prof-${stamp}`)}`);
      await db.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }

  if (params.scenarios.includes('startup')) {
    await phase('startup', async () => {
      result.startup = await withTimeout(runStartupScenario({ runs: params.startupRuns, idleSeconds: 5, log }), 300_000, 'scenario 4');
    });
  }

  result.finishedAt = new Date().toISOString();
  result.machine.loadAverageAtEnd = os.loadavg().map((x) => Math.round(x * 100) / 100);
  result.database ??= { kind: '—', version: '—' };
  const rows = buildRows(result);
  result.summary = rows;
  const md = markdown(result, rows);
  const jsonPath = path.join(RESULTS, `${stamp}.json`);
  fs.writeFileSync(jsonPath, JSON.stringify(result, null, 2) + '\n');
  fs.writeFileSync(path.join(RESULTS, 'latest.md'), md);

  console.log('\n' + md);
  const targets = rows.filter((r) => r.met !== null);
  for (const r of targets) console.log(`  ${r.met ? 'MET   ' : 'MISSED'} ${r.scenario ? `${r.scenario}: ` : ''}${r.metric}: ${r.value} (target ${r.target})`);
  log(`done: ${path.relative(process.cwd(), jsonPath)} and bench/results/latest.md`);
  return result.errors.length ? 1 : 0;
}

main()
  .then((code) => process.exit(code))
  .catch((err) => {
    console.error(err.stack || err);
    killAllChildren();
    process.exit(1);
  });
