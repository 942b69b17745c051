'use strict';
/** Scenarios 1 and 2: the server list over REST and GraphQL vs a bare Express + pg handler. */
const autocannon = require('autocannon');
const os = require('node:os');
const { Client } = require('pg');
const { procCpuMs, postgresCpuMs, machineCpu, busyCores, waitForQuiet } = require('./util');

function cannon(opts) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: 64, pipelining: 1, ...opts }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

/** Warm-up (discarded), then the measured run. */
async function measure(name, opts, { seconds, warmupSeconds, pid, quietWaitMs }, log) {
  const ncores = os.cpus().length;
  const before = await waitForQuiet(ncores, quietWaitMs);
  if (warmupSeconds > 0) await cannon({ ...opts, duration: warmupSeconds });
  const cpu0 = procCpuMs(pid);
  const pg0 = postgresCpuMs();
  const m0 = machineCpu();
  const self0 = process.cpuUsage();
  const r = await cannon({ ...opts, duration: seconds });
  const cpu1 = procCpuMs(pid);
  const pg1 = postgresCpuMs();
  const self = process.cpuUsage(self0);
  const machineBusy = busyCores(m0, machineCpu(), ncores);
  const targetCores = Math.round(((cpu1 - cpu0) / (r.duration * 1000)) * 100) / 100;
  const loadCores = Math.round(((self.user + self.system) / 1000 / (r.duration * 1000)) * 100) / 100;
  const out = {
    name,
    connections: r.connections,
    seconds: r.duration,
    requestsPerSec: Math.round(r.requests.average),
    totalRequests: r.requests.total,
    latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max, mean: Math.round(r.latency.average * 100) / 100 },
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    // CPU the server process spent per request: much less sensitive to other load than req/s
    serverCpuMsPerRequest: r.requests.total ? Math.round(((cpu1 - cpu0) / r.requests.total) * 100) / 100 : null,
    // PostgreSQL shares the machine: its CPU per request counts in requests/s as much as the server's
    databaseCpuMsPerRequest: r.requests.total ? Math.round(((pg1 - pg0) / r.requests.total) * 100) / 100 : null,
    cores: { server: targetCores, loadGenerator: loadCores, machine: machineBusy, otherAndDatabase: Math.round((machineBusy - targetCores - loadCores) * 100) / 100 },
    machineBusyCoresBefore: before.busyCores,
  };
  log(`    ${name}: ${out.requestsPerSec} req/s, p50 ${out.latencyMs.p50} ms, p99 ${out.latencyMs.p99} ms` + `, server CPU ${out.serverCpuMsPerRequest} ms/request, PostgreSQL ${out.databaseCpuMsPerRequest} ms/request` +
      ` (cores busy: server ${out.cores.server}, autocannon ${out.cores.loadGenerator}, database+other ${out.cores.otherAndDatabase}; ${before.busyCores} before start)` +
      (out.non2xx || out.errors ? `, non-2xx ${out.non2xx}, errors ${out.errors}` : ''));
  return out;
}

/**
 * Seeds `count` servers with one multi-row INSERT … SELECT from generate_series (creation times one
 * second apart, so that the page order is deterministic), then VACUUM ANALYZE.
 */
async function seedServers(databaseUrl, { count, ownerIds, nodeId, blueprintId }) {
  const c = new Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    await c.query(
      `insert into servers (id, name, description, owner_id, node_id, blueprint_id, memory, cpu, disk, status, variables,
                            auto_restart, crash_count, created_at, updated_at)
       select gen_random_uuid(), 'bench server ' || i, 'seeded by npm run bench', ($1::uuid[])[1 + (i % array_length($1::uuid[], 1))],
              $2::uuid, $3::uuid, 256, 100, 512, 'offline', '{}'::jsonb, false, 0,
              now() - make_interval(secs => $4::int - i), now() - make_interval(secs => $4::int - i)
         from generate_series(1, $4::int) as i`,
      [ownerIds, nodeId, blueprintId, count],
    );
    // as a table in use would be: vacuumed (visibility map set) and analysed, so that autovacuum does
    // not start in the middle of a measurement
    await c.query('vacuum analyze servers');
    return Number((await c.query('select count(*)::int as n from servers')).rows[0].n);
  } finally {
    await c.end();
  }
}

/** Deletes the servers seeded on `nodeId`, so that the scenarios after the list start from the users' own quotas. */
async function unseedServers(databaseUrl, nodeId) {
  const c = new Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    await c.query('delete from servers where node_id = $1', [nodeId]);
  } finally {
    await c.end();
  }
}

const GRAPHQL_PAGE = `query Page($limit: Int, $page: Int) {
  servers(limit: $limit, page: $page) {
    total page limit
    items {
      id name description status memory cpu disk createdAt updatedAt
      owner { id email }
      node { id name }
      blueprint { id name }
    }
  }
}`;

async function runHttpScenarios({ panelUrl, panelPid, baselineUrl, baselinePid, apiToken, seconds, warmupSeconds, quietWaitMs, rounds = 1, log }) {
  const timing = { seconds, warmupSeconds, quietWaitMs };
  const path = '/api/v1/servers?limit=20';
  // sanity checks: both answer the same page
  const [a, b] = await Promise.all([
    fetch(panelUrl + path, { headers: { authorization: `Bearer ${apiToken}` } }).then((r) => r.json()),
    fetch(baselineUrl + path).then((r) => r.json()),
  ]);
  if (a.data?.length !== 20 || b.data?.length !== 20 || a.data[0].id !== b.data[0].id || a.meta.total !== b.meta.total)
    throw new Error(`the panel and the baseline disagree on the page: ${JSON.stringify(a).slice(0, 300)} vs ${JSON.stringify(b).slice(0, 300)}`);
  const gqlBody = JSON.stringify({ query: GRAPHQL_PAGE, variables: { limit: 20, page: 1 } });
  const g = await fetch(panelUrl + '/graphql', { method: 'POST', headers: { authorization: `Bearer ${apiToken}`, 'content-type': 'application/json' }, body: gqlBody }).then((r) =>
    r.json(),
  );
  if (g.errors || g.data?.servers?.items?.length !== 20 || g.data.servers.items[0].id !== a.data[0].id || !g.data.servers.items[0].owner?.email)
    throw new Error(`GraphQL page is wrong: ${JSON.stringify(g).slice(0, 500)}`);

  const targets = {
    baseline: ['baseline express+pg', { url: baselineUrl + path }, baselinePid],
    rest: ['panel REST', { url: panelUrl + path, headers: { authorization: `Bearer ${apiToken}` } }, panelPid],
    graphql: [
      'panel GraphQL',
      { url: panelUrl + '/graphql', method: 'POST', headers: { authorization: `Bearer ${apiToken}`, 'content-type': 'application/json' }, body: gqlBody },
      panelPid,
    ],
  };
  // Rounds of the three targets, the order turning each round. The machine's speed drifts over a run
  // (±20% and worse on a shared machine), so a comparison is only fair within a round: each comparison
  // (REST vs baseline, GraphQL vs REST) reports the round where its ratio is the median one.
  const all = { baseline: [], rest: [], graphql: [] };
  const order = ['baseline', 'rest', 'graphql'];
  for (let round = 0; round < rounds; round++) {
    log(`  scenarios 1 and 2, round ${round + 1}/${rounds}: GET /api/v1/servers?limit=20 and the same page over GraphQL (64 connections)`);
    for (const key of [...order.slice(round % 3), ...order.slice(0, round % 3)]) {
      const [name, opts, pid] = targets[key];
      all[key].push(await measure(name, opts, { ...timing, pid }, log));
    }
  }
  const medianRound = (of, to) => {
    const byRatio = all[of].map((x, i) => ({ i, ratio: x.requestsPerSec / Math.max(1, all[to][i].requestsPerSec) })).sort((x, y) => x.ratio - y.ratio);
    return byRatio[Math.floor(byRatio.length / 2)].i;
  };
  const s1 = medianRound('rest', 'baseline');
  const s2 = medianRound('graphql', 'rest');
  return {
    baseline: all.baseline[s1],
    rest: all.rest[s1],
    graphql: all.graphql[s2],
    restForGraphql: all.rest[s2],
    total: a.meta.total,
    rounds,
    medianRounds: { restVsBaseline: s1 + 1, graphqlVsRest: s2 + 1 },
    requestsPerSecByRound: Object.fromEntries(Object.entries(all).map(([k, xs]) => [k, xs.map((x) => x.requestsPerSec)])),
  };
}

module.exports = { runHttpScenarios, seedServers, unseedServers, measure, GRAPHQL_PAGE };
