#!/usr/bin/env node
'use strict';
/**
 * `npm run bench:ab`: compares panel variants by CPU per request on the server list (REST and
 * GraphQL), in short alternating rounds on one database, and prints each variant's median.
 *
 * Why: on a shared machine, requests/s and even CPU per request drift by ±20% over minutes, so two
 * full `npm run bench` runs cannot tell a 10% change apart. Alternating short rounds (A B, B A, …)
 * exposes both variants to the same drift; the median over rounds is what to compare.
 *
 * Variants (AB_VARIANTS, JSON array; default: the current build alone):
 *   { "name": "new" }                                         this checkout's dist/
 *   { "name": "old", "dist": "/tmp/old/dist" }                another build (e.g. `git worktree` + `npm run build`)
 *   { "name": "flag", "execArgv": ["--max-semi-space-size=64"] }   other Node flags (default: package.json config.panelNodeFlags)
 *   { "name": "env", "env": { "LOG_LEVEL": "info" } }          extra environment
 *   { "name": "bare", "baseline": true }                      the bench's bare Express + pg handler (REST only; execArgv applies too)
 * Each measurement also reads the CPU that PostgreSQL's processes spent meanwhile (all of them on the
 * machine, so keep it otherwise idle): the database shares the machine, so it counts in requests/s.
 * Knobs: AB_ROUNDS [7], AB_SECONDS per measurement [4], AB_CONNECTIONS [64], AB_TARGETS [rest,graphql],
 * BENCH_SERVERS [10000], DATABASE_URL (else an embedded PostgreSQL).
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const autocannon = require('autocannon');
const { openBenchDatabase } = require('./lib/database');
const { seedServers, GRAPHQL_PAGE } = require('./lib/http-bench');
const { PANEL_NODE_FLAGS } = require('./lib/panel-flags');
const { startChild, stopChild, apiOk, procCpuSplitMs, postgresCpuMs, killAllChildren } = require('./lib/util');

const env = process.env;
const int = (name, def) => (Number.parseInt(env[name] ?? '', 10) > 0 ? Number.parseInt(env[name], 10) : def);
const variants = JSON.parse(env.AB_VARIANTS || '[{"name":"current"}]');
const rounds = int('AB_ROUNDS', 7);
const seconds = int('AB_SECONDS', 4);
const connections = int('AB_CONNECTIONS', 64);
const targets = (env.AB_TARGETS || 'rest,graphql').split(',').map((s) => s.trim());
const ADMIN = { email: 'ab-admin@example.com', password: 'ab-admin-password' };

const cannon = (opts) => new Promise((resolve, reject) => autocannon({ connections, pipelining: 1, ...opts }, (e, r) => (e ? reject(e) : resolve(r))));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The panel child (bench/children/panel.js) of a variant, pointed at its dist/ by BENCH_DIST. */
async function startVariant(v, databaseUrl) {
  if (v.baseline) {
    const { child, ready } = startChild(path.join(__dirname, 'children', 'baseline-http.js'), { execArgv: v.execArgv ?? [], env: { BENCH_DATABASE_URL: databaseUrl } });
    return { v, child, ...(await ready) };
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hostpanel-ab-'));
  fs.chmodSync(dataDir, 0o755);
  const { child, ready } = startChild(path.join(__dirname, 'children', 'panel.js'), {
    execArgv: v.execArgv ?? PANEL_NODE_FLAGS,
    env: {
      NODE_ENV: 'production',
      ...(v.dist ? { BENCH_DIST: path.resolve(v.dist) } : {}),
      ...v.env,
      BENCH_PANEL_OPTS: JSON.stringify({ adminEmail: ADMIN.email, adminPassword: ADMIN.password, dataDir, databaseUrl, logLevel: 'warn' }),
    },
  });
  return { v, child, dataDir, ...(await ready) };
}

async function main() {
  const db = await openBenchDatabase();
  const panels = [];
  try {
    // one after the other: the first one migrates the database
    for (const v of variants) panels.push(await startVariant(v, db.url));
    const base = panels.find((p) => !p.v.baseline).url;
    const session = (await apiOk(base, 'POST', '/api/v1/auth/signin', { body: ADMIN })).data;
    const token = (await apiOk(base, 'POST', '/api/v1/users/me/api-tokens', { token: session.token, body: { name: 'ab' } })).data.token;
    const node = (await apiOk(base, 'GET', '/api/v1/nodes', { token })).data[0];
    const blueprint = (await apiOk(base, 'GET', '/api/v1/blueprints?limit=100', { token })).data[0];
    await seedServers(db.url, { count: int('BENCH_SERVERS', 10_000), ownerIds: [session.user.id], nodeId: node.id, blueprintId: blueprint.id });
    const body = JSON.stringify({ query: GRAPHQL_PAGE, variables: { limit: 20, page: 1 } });
    const request = {
      rest: (url) => ({ url: url + '/api/v1/servers?limit=20', headers: { authorization: `Bearer ${token}` } }),
      graphql: (url) => ({ url: url + '/graphql', method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body }),
    };
    console.log(`A/B: ${variants.map((v) => v.name).join(' vs ')}; ${rounds} rounds × ${targets.join(', ')} × ${seconds} s at ${connections} connections`);
    const cpu = new Map();
    const p99 = new Map(); // autocannon's latency p99 per measurement (ms)
    const dbCpu = new Map(); // PostgreSQL's CPU per request: it shares the machine, so it counts in requests/s
    for (let round = 0; round < rounds; round++) {
      for (const target of targets) {
        for (const p of round % 2 ? [...panels].reverse() : panels) {
          if (p.v.baseline && target !== 'rest') continue;
          await cannon({ ...request[target](p.url), duration: 1 }); // warm-up
          const c0 = procCpuSplitMs(p.pid);
          const pg0 = postgresCpuMs();
          const r = await cannon({ ...request[target](p.url), duration: seconds });
          const pg = (postgresCpuMs() - pg0) / r.requests.total;
          if (r.non2xx || r.errors) throw new Error(`${p.v.name} ${target}: ${r.non2xx} non-2xx, ${r.errors} errors`);
          const c1 = procCpuSplitMs(p.pid);
          const sys = (c1.sys - c0.sys) / r.requests.total;
          const ms = (c1.user - c0.user) / r.requests.total + sys;
          const key = `${p.v.name} ${target}`;
          cpu.set(key, [...(cpu.get(key) ?? []), ms]);
          dbCpu.set(key, [...(dbCpu.get(key) ?? []), pg]);
          p99.set(key, [...(p99.get(key) ?? []), r.latency.p99]);
          console.log(
            `  round ${round + 1}/${rounds} ${key.padEnd(24)} ${String(Math.round(r.requests.average)).padStart(5)} req/s  p99 ${String(r.latency.p99).padStart(3)} ms  ${ms.toFixed(3)} ms CPU/request (kernel ${sys.toFixed(3)}; PostgreSQL ${pg.toFixed(3)})`,
          );
        }
      }
    }
    console.log('\nmedian CPU per request (lower is better):');
    for (const [key, xs] of cpu)
      console.log(
        `  ${key.padEnd(24)} ${median(xs).toFixed(3)} ms   (${xs.map((x) => x.toFixed(2)).join(' ')}); PostgreSQL ${median(dbCpu.get(key)).toFixed(3)} ms; latency p99 ${median(p99.get(key))} ms`,
      );
    for (const v of variants) {
      const rest = cpu.get(`${v.name} rest`);
      const gql = cpu.get(`${v.name} graphql`);
      if (!rest || !gql) continue;
      const both = (key) => median(cpu.get(key)) + median(dbCpu.get(key));
      console.log(
        `  ${v.name}: GraphQL/REST CPU ratio ${(median(gql) / median(rest)).toFixed(2)}; with PostgreSQL's ${(both(`${v.name} graphql`) / both(`${v.name} rest`)).toFixed(2)}`,
      );
    }
  } finally {
    for (const p of panels) {
      await stopChild(p.child);
      if (p.dataDir) fs.rmSync(p.dataDir, { recursive: true, force: true });
    }
    await db.stop();
  }
}

main()
  .then(() => process.exit(0))
  .catch((err) => {
    console.error(err.stack || err);
    killAllChildren();
    process.exit(1);
  });
