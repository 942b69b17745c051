'use strict';
/**
 * What the activity log costs the REST server list (as a user, so the subuser visibility rule runs)
 * and a power action (a no-op `start` of a running server: one signed call to the agent, and one
 * entry). Recording is switched on and off through the bench panel's IPC (`activity` message), never
 * by a production setting. Two measurements of the same run (method: bench/README.md):
 *
 * 1. End to end: many short rounds of each request with recording on and off (the order turning each
 *    round); the cost of a request is the CPU the panel (its own process.cpuUsage, in µs) and the
 *    bench's PostgreSQL server (its postmaster's processes only) spend per request. Each round gives a
 *    ratio on/off; the median, quartiles and range are reported. On a shared 2-core machine one
 *    round's ratio swings by ±10% or more: the list, which records nothing, shows that noise floor.
 * 2. By parts: entries per request (rows counted in the table around 20 requests sent one after
 *    another) × the CPU of one entry (the probe: the panel records the power action's entry through the
 *    service, at the power rounds' own rate so that batches are as large, against the same pacing
 *    without recording, in alternating pairs; panel + PostgreSQL CPU difference ÷ entries) ÷ the CPU
 *    per request with recording off. An entry's cost is measured over about a thousand entries with
 *    nothing else running, so this resolves a fraction of a percent where the end-to-end ratio
 *    cannot; it is the figure the target is judged on, the end-to-end ratio its cross-check.
 */
const os = require('node:os');
const autocannon = require('autocannon');
const { Client } = require('pg');
const { ask, postgresTreeCpuMs, machineCpu, busyCores, waitForQuiet, sleep } = require('./util');

const r3 = (x) => Math.round(x * 1000) / 1000;
// the batch of entries waiting is written within 200 ms (src/services/activity.service.ts); a window ends after it
const SETTLE_MS = 300;

function cannon(opts) {
  return new Promise((resolve, reject) => {
    autocannon({ pipelining: 1, ...opts }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

/** Median, quartiles and range of a sample. */
function spread(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => {
    const i = (s.length - 1) * p;
    const lo = Math.floor(i);
    return s[lo] + (s[Math.ceil(i)] - s[lo]) * (i - lo);
  };
  return { median: r3(q(0.5)), p25: r3(q(0.25)), p75: r3(q(0.75)), min: r3(s[0]), max: r3(s[s.length - 1]), n: s.length };
}

/** The bench database's postmaster: the parent of a backend of ours. */
async function postmasterPid(databaseUrl) {
  const c = new Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const pid = (await c.query('select pg_backend_pid() as pid')).rows[0].pid;
    return Number(require('node:fs').readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
  } finally {
    await c.end();
  }
}

/** One measured window: warm-up, then `seconds` of load; CPU per request of the panel and PostgreSQL. */
async function measureWindow(name, opts, { panelChild, pgPid, seconds, warmupSeconds }) {
  const panelCpuMs = async () => {
    const { usage } = await ask(panelChild, { type: 'cpu' });
    return (usage.user + usage.system) / 1000;
  };
  if (warmupSeconds > 0) await cannon({ ...opts, duration: warmupSeconds });
  await sleep(SETTLE_MS);
  const cpu0 = await panelCpuMs();
  const pg0 = postgresTreeCpuMs(pgPid);
  const m0 = machineCpu();
  const r = await cannon({ ...opts, duration: seconds });
  await sleep(SETTLE_MS);
  const cpu1 = await panelCpuMs();
  const pg1 = postgresTreeCpuMs(pgPid);
  const machineBusy = busyCores(m0, machineCpu(), os.cpus().length);
  const out = {
    name,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    requestsPerSec: Math.round(r.requests.average),
    latencyMs: { p50: r.latency.p50, p99: r.latency.p99 },
    panelCpuMsPerRequest: r3((cpu1 - cpu0) / Math.max(1, r.requests.total)),
    databaseCpuMsPerRequest: r3((pg1 - pg0) / Math.max(1, r.requests.total)),
    machineBusyCores: machineBusy,
  };
  out.cpuMsPerRequest = r3(out.panelCpuMsPerRequest + out.databaseCpuMsPerRequest);
  return out;
}

/**
 * Entries one request adds, counted in the table around `n` requests sent one after another (with
 * recording on, and the batch waiting written before each count).
 */
async function entriesPerRequest(opts, db, n = 20) {
  const count = async () => {
    await sleep(SETTLE_MS);
    return (await db.query('select count(*)::int as n from activity')).rows[0].n;
  };
  const before = await count();
  for (let i = 0; i < n; i++) {
    const res = await fetch(opts.url, { method: opts.method ?? 'GET', headers: opts.headers, body: opts.body });
    if (!res.ok) throw new Error(`${opts.method ?? 'GET'} ${opts.url} → ${res.status}: ${(await res.text()).slice(0, 300)}`);
    await res.arrayBuffer();
  }
  return r3(((await count()) - before) / n);
}

/** Pairs of probes (recording, then the same pacing without, the order turning): CPU per entry. */
async function probeEntryCost({ panelChild, pgPid, serverId, user, ratePerSec, seconds, pairs, log }) {
  const probe = async (record) => {
    const pg0 = postgresTreeCpuMs(pgPid);
    const res = await ask(panelChild, { type: 'activity_probe', serverId, user, ratePerSec, seconds, record }, seconds * 1000 + 30_000);
    await sleep(SETTLE_MS);
    return { ...res, pgCpuMs: postgresTreeCpuMs(pgPid) - pg0 };
  };
  const runs = [];
  const idle = [];
  for (let i = 0; i < pairs; i++) {
    const order = i % 2 === 0 ? [true, false] : [false, true];
    const got = {};
    for (const record of order) got[record ? 'on' : 'off'] = await probe(record);
    // what the panel and PostgreSQL spend per second with nothing to do (timers, the agent, autovacuum)
    idle.push(((got.off.cpuMs + got.off.pgCpuMs) * 1000) / got.off.wallMs);
    const n = Math.max(1, got.on.entries);
    const run = {
      entries: got.on.entries,
      panelUsPerEntry: r3(((got.on.cpuMs - got.off.cpuMs) * 1000) / n),
      postgresUsPerEntry: r3(((got.on.pgCpuMs - got.off.pgCpuMs) * 1000) / n),
    };
    run.usPerEntry = r3(run.panelUsPerEntry + run.postgresUsPerEntry);
    runs.push(run);
    log(`  activity probe ${i + 1}/${pairs}: ${run.entries} entries at ${ratePerSec}/s: panel ${run.panelUsPerEntry} µs + PostgreSQL ${run.postgresUsPerEntry} µs per entry`);
  }
  return {
    ratePerSec,
    seconds,
    runs,
    panelUsPerEntry: spread(runs.map((x) => x.panelUsPerEntry)),
    postgresUsPerEntry: spread(runs.map((x) => x.postgresUsPerEntry)),
    usPerEntry: spread(runs.map((x) => x.usPerEntry)),
    idleCpuMsPerSecond: spread(idle),
  };
}

async function runActivityScenario({ panelChild, panelUrl, databaseUrl, user, userToken, serverId, seconds = 2, warmupSeconds = 1, quietWaitMs, rounds = 10, probePairs = 6, log }) {
  const auth = { authorization: `Bearer ${userToken}` };
  const targets = {
    list: { url: `${panelUrl}/api/v1/servers?limit=20`, headers: auth, connections: 64 },
    power: { url: `${panelUrl}/api/v1/servers/${serverId}/start`, method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{}', connections: 16 },
  };
  const setRecording = (enabled) => ask(panelChild, { type: 'activity', enabled }, 10_000);
  const pgPid = await postmasterPid(databaseUrl);
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const runs = { list: { on: [], off: [] }, power: { on: [], off: [] } };
  const busyBefore = [];
  try {
    await setRecording(true);
    const entries = {};
    for (const [key, opts] of Object.entries(targets)) entries[key] = await entriesPerRequest(opts, db);
    log(`  activity: entries per request (20 one after another): ${Object.entries(entries).map(([k, v]) => `${k} ${v}`).join(', ')}`);
    for (let round = 0; round < rounds; round++) {
      busyBefore.push((await waitForQuiet(os.cpus().length, quietWaitMs)).busyCores);
      // the order turns each round, so that drift of the machine's speed does not favour one side
      const order = round % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
      for (const [key, opts] of Object.entries(targets)) {
        for (const mode of order) {
          await setRecording(mode === 'on');
          const w = await measureWindow(`${key} (recording ${mode})`, opts, { panelChild, pgPid, db, seconds, warmupSeconds });
          runs[key][mode].push(w);
        }
        const [on, off] = [runs[key].on[round], runs[key].off[round]];
        log(`  activity, round ${round + 1}/${rounds}, ${key}: CPU per request ${on.cpuMsPerRequest} ms on / ${off.cpuMsPerRequest} ms off (${r3(on.cpuMsPerRequest / off.cpuMsPerRequest)}x), ${on.requestsPerSec} / ${off.requestsPerSec} req/s`);
      }
    }
    await setRecording(true);
    const powerRate = Math.round(spread(runs.power.off.map((x) => x.requestsPerSec)).median);
    // at least about 1,000 entries per probe (at most 8 s): an idle panel's own CPU is noise to divide
    const probeSeconds = Math.min(8, Math.max(seconds, Math.ceil(1000 / Math.max(1, powerRate))));
    const probe = await probeEntryCost({ panelChild, pgPid, serverId, user, ratePerSec: powerRate, seconds: probeSeconds, pairs: probePairs, log });

    const summary = { rounds, seconds, warmupSeconds, machineBusyCoresBefore: spread(busyBefore.filter((x) => x !== null)), probe };
    for (const key of Object.keys(targets)) {
      const { on, off } = runs[key];
      const med = (xs, f) => spread(xs.map(f)).median;
      const cpuOff = med(off, (x) => x.cpuMsPerRequest);
      const cost = (entries[key] * probe.usPerEntry.median) / 1000;
      // a request's own CPU: without the share of what the idle panel and PostgreSQL spend meanwhile
      const cpuOffOwn = med(off, (x) => x.cpuMsPerRequest - probe.idleCpuMsPerSecond.median / Math.max(1, x.requestsPerSec));
      summary[key] = {
        cpuOn: med(on, (x) => x.cpuMsPerRequest),
        cpuOff,
        panelCpuOn: med(on, (x) => x.panelCpuMsPerRequest),
        panelCpuOff: med(off, (x) => x.panelCpuMsPerRequest),
        databaseCpuOn: med(on, (x) => x.databaseCpuMsPerRequest),
        databaseCpuOff: med(off, (x) => x.databaseCpuMsPerRequest),
        requestsPerSecOn: med(on, (x) => x.requestsPerSec),
        requestsPerSecOff: med(off, (x) => x.requestsPerSec),
        p99On: med(on, (x) => x.latencyMs.p99),
        p99Off: med(off, (x) => x.latencyMs.p99),
        non2xx: [...on, ...off].reduce((n, x) => n + x.non2xx + x.errors, 0),
        endToEnd: spread(on.map((x, i) => x.cpuMsPerRequest / off[i].cpuMsPerRequest)),
        cpuRatiosByRound: on.map((x, i) => r3(x.cpuMsPerRequest / off[i].cpuMsPerRequest)),
        entriesPerRequest: entries[key],
        // by parts: what the entries of a request cost, over what the request costs without them
        costMs: r3(cost),
        costRatio: r3(1 + cost / cpuOff),
        cpuOffOwn: r3(cpuOffOwn),
        costRatioOwn: r3(1 + cost / Math.max(0.001, cpuOffOwn)),
        // the same with the dearer quartile of the entry's cost and the cheaper quartile of the request's
        costRatioUpper: r3(1 + (entries[key] * probe.usPerEntry.p75) / 1000 / spread(off.map((x) => x.cpuMsPerRequest)).p25),
        windows: { on, off },
      };
      const s = summary[key];
      log(`  activity: ${key}: ${s.entriesPerRequest} entries per request × ${probe.usPerEntry.median} µs ÷ ${s.cpuOff} ms per request without = ${s.costRatio}x (upper ${s.costRatioUpper}x; ÷ the request's own ${s.cpuOffOwn} ms: ${s.costRatioOwn}x; target ≤ 1.05x); end to end ${s.endToEnd.median}x [${s.endToEnd.p25}–${s.endToEnd.p75}]`);
    }
    return summary;
  } finally {
    await setRecording(true).catch(() => undefined);
    await db.end();
  }
}

module.exports = { runActivityScenario, spread };
