'use strict';
/** Targets, the markdown table (bench/results/latest.md) and the console summary. */

const fmt = (v, unit = '') => (v === null || v === undefined || Number.isNaN(v) ? '—' : `${typeof v === 'number' ? Math.round(v * 100) / 100 : v}${unit}`);
const ratio = (a, b) => (typeof a === 'number' && typeof b === 'number' && b > 0 ? Math.round((a / b) * 100) / 100 : null);

/** Rows: { scenario, metric, value, baseline, ratio, target, met } — `met` null when informative. */
function buildRows(r) {
  const rows = [];
  const add = (scenario, metric, value, baseline, rat, target, met) => rows.push({ scenario, metric, value, baseline, ratio: rat, target, met });
  if (r.http) {
    const { baseline: b, rest, graphql } = r.http;
    const restG = r.http.restForGraphql ?? rest; // REST in the round GraphQL is compared in
    const n = r.http.total;
    add(`1. REST list (${n} servers)`, 'requests/s', fmt(rest.requestsPerSec), fmt(b.requestsPerSec), ratio(rest.requestsPerSec, b.requestsPerSec), '≥ 0.5× baseline', ratio(rest.requestsPerSec, b.requestsPerSec) >= 0.5);
    add('', 'latency p50', fmt(rest.latencyMs.p50, ' ms'), fmt(b.latencyMs.p50, ' ms'), ratio(rest.latencyMs.p50, b.latencyMs.p50), '', null);
    add('', 'latency p99', fmt(rest.latencyMs.p99, ' ms'), fmt(b.latencyMs.p99, ' ms'), ratio(rest.latencyMs.p99, b.latencyMs.p99), '< 50 ms', rest.latencyMs.p99 < 50);
    add('', 'server CPU per request', fmt(rest.serverCpuMsPerRequest, ' ms'), fmt(b.serverCpuMsPerRequest, ' ms'), ratio(rest.serverCpuMsPerRequest, b.serverCpuMsPerRequest), '', null);
    add('', 'PostgreSQL CPU per request', fmt(rest.databaseCpuMsPerRequest, ' ms'), fmt(b.databaseCpuMsPerRequest, ' ms'), ratio(rest.databaseCpuMsPerRequest, b.databaseCpuMsPerRequest), '', null);
    if (rest.non2xx || rest.errors) add('', 'non-2xx / errors', `${rest.non2xx} / ${rest.errors}`, `${b.non2xx} / ${b.errors}`, null, '0', false);
    add('2. GraphQL same page (+owner, node, blueprint)', 'requests/s', fmt(graphql.requestsPerSec), `${fmt(restG.requestsPerSec)} (REST)`, ratio(graphql.requestsPerSec, restG.requestsPerSec), '≥ 0.7× REST', ratio(graphql.requestsPerSec, restG.requestsPerSec) >= 0.7);
    add('', 'latency p50 / p99', `${fmt(graphql.latencyMs.p50)} / ${fmt(graphql.latencyMs.p99, ' ms')}`, `${fmt(restG.latencyMs.p50)} / ${fmt(restG.latencyMs.p99, ' ms')} (REST)`, ratio(graphql.latencyMs.p99, restG.latencyMs.p99), '', null);
    add('', 'server CPU per request', fmt(graphql.serverCpuMsPerRequest, ' ms'), `${fmt(restG.serverCpuMsPerRequest, ' ms')} (REST)`, ratio(graphql.serverCpuMsPerRequest, restG.serverCpuMsPerRequest), '', null);
    add('', 'PostgreSQL CPU per request', fmt(graphql.databaseCpuMsPerRequest, ' ms'), `${fmt(restG.databaseCpuMsPerRequest, ' ms')} (REST)`, ratio(graphql.databaseCpuMsPerRequest, restG.databaseCpuMsPerRequest), '', null);
    if (graphql.non2xx || graphql.errors) add('', 'non-2xx / errors', `${graphql.non2xx} / ${graphql.errors}`, '', null, '0', false);
  }
  for (const run of r.console ?? []) {
    const { nodeChannel: a, graphql: g, baseline: b } = run;
    const primary = run.rate === r.params.linesPerSec;
    const head = `3${primary ? '' : 'b'}. Console fan-out (${run.rate} lines/s → ${r.params.subscribers} subscribers${primary ? '' : ', below saturation'})`;
    for (const [label, s] of [['node channel', a], ['GraphQL', g]]) {
      if (!s) continue;
      const gate = (met) => (primary ? met : null); // targets apply to the requested rate
      add(label === 'node channel' ? head : '', `${label}: line latency p50 / p99`, `${fmt(s.latencyMs.p50)} / ${fmt(s.latencyMs.p99, ' ms')}`, `${fmt(b?.latencyMs.p50)} / ${fmt(b?.latencyMs.p99, ' ms')}`, ratio(s.latencyMs.p99, b?.latencyMs.p99), primary ? '< 50 ms' : '', gate(s.latencyMs.p99 < 50));
      add('', `${label}: e2e marker latency p99 (say t=…)`, fmt(s.markerLatencyMs.p99, ' ms'), fmt(b?.markerLatencyMs.p99, ' ms'), ratio(s.markerLatencyMs.p99, b?.markerLatencyMs.p99), '', null);
      add('', `${label}: lines delivered/s (sum over readers)`, fmt(s.deliveredLinesPerSecTotal), fmt(b?.deliveredLinesPerSecTotal), ratio(s.deliveredLinesPerSecTotal, b?.deliveredLinesPerSecTotal), '', null);
      add('', `${label}: server CPU per delivered line`, fmt(s.serverCpuUsPerDelivery, ' µs'), fmt(b?.serverCpuUsPerDelivery, ' µs'), ratio(s.serverCpuUsPerDelivery, b?.serverCpuUsPerDelivery), '', null);
      add('', `${label}: readers kept up / disconnected`, `${s.readersKeptUp} / ${s.readersDisconnected}`, `${b?.readersKeptUp} / ${b?.readersDisconnected}`, null, '', null);
      add('', `${label}: lines published in the window (of offered)`, `${s.publishedLines} (of ${s.offeredLines})`, `${b?.publishedLines} (of ${b?.offeredLines})`, ratio(s.publishedLines, b?.publishedLines), '', null);
      add('', `${label}: lines per reader min / median / max`, `${s.linesPerReader.min} / ${s.linesPerReader.median} / ${s.linesPerReader.max}`, `${b?.linesPerReader.min} / ${b?.linesPerReader.median} / ${b?.linesPerReader.max}`, null, '', null);
      const lossOf = (x) => (x ? `${x.linesSkippedByKeptUpReaders} = ${fmt(x.skippedPctKeptUp, '%')}; ${x.linesRepeatedOrOutOfOrder} / ${x.linesInFlightAtEnd}` : '—');
      add('', `${label}: lines skipped by readers that kept up; repeated / in flight at the end`, lossOf(s), lossOf(b), null, primary ? '0 skipped, 0 repeated' : '', gate(s.linesSkippedByKeptUpReaders === 0 && s.linesRepeatedOrOutOfOrder === 0));
      if (s.linesDroppedByFloodGuard || b?.linesDroppedByFloodGuard) {
        add('', `${label}: lines the agent's output rate limit (2000 per 100 ms) dropped at the source`, fmt(s.linesDroppedByFloodGuard ?? 0), fmt(b?.linesDroppedByFloodGuard ?? 0), null, '', null);
      }
      add('', `${label}: panel RSS with 1 stalled reader (before → peak → end)`, `${fmt(s.rss.beforeMiB)} → ${fmt(s.rss.peakMiB)} → ${fmt(s.rss.endMiB)} MiB`, `${fmt(b?.rss.beforeMiB)} → ${fmt(b?.rss.peakMiB)} → ${fmt(b?.rss.endMiB)} MiB`, null, primary ? 'flat (2nd half ≤ +32 MiB)' : '', gate(s.rss.flat));
    }
  }
  if (r.activity) {
    for (const [key, label] of [['list', '5. Activity log cost: REST server list as a user'], ['power', '5. Activity log cost: power action (no-op start)']]) {
      const a = r.activity[key];
      if (!a) continue;
      // CPU per request is the cost: requests/s on this shared 2-core machine swing ±30% between rounds
      add(label, 'panel + PostgreSQL CPU per request, recording on (off = baseline)', fmt(a.cpuOn, ' ms'), fmt(a.cpuOff, ' ms'), a.cpuRatio, '≤ 1.05× (cost ≤ 5%)', a.cpuRatio <= 1.05);
      add('', 'requests/s', fmt(a.on.requestsPerSec), fmt(a.off.requestsPerSec), a.ratio, '', null);
      add('', 'latency p99', fmt(a.on.latencyMs.p99, ' ms'), fmt(a.off.latencyMs.p99, ' ms'), ratio(a.on.latencyMs.p99, a.off.latencyMs.p99), '', null);
      add('', 'CPU ratio per round', a.cpuRatiosByRound.join(', '), '', null, '', null);
    }
  }
  if (r.files) {
    const t = r.files.transfer;
    const rssOf = (x) => `${fmt(x.rss.beforeMiB)} → ${fmt(x.rss.peakMiB)} MiB`;
    if (t) {
      add(`6. Files: ${t.sizeMiB} MiB through the panel`, 'upload (multipart) MiB/s (baseline: cp on the same disk)', fmt(t.upload.mibPerSec), fmt(t.copy.mibPerSec), t.upload.ratio, '≥ 0.5× cp', t.upload.ratio >= 0.5);
      add('', 'download MiB/s (baseline: cp)', fmt(t.download.mibPerSec), fmt(t.copy.mibPerSec), t.download.ratio, '≥ 0.5× cp', t.download.ratio >= 0.5);
      add('', 'panel + agent RSS during the upload / download (before → peak)', `${rssOf(t.upload)} / ${rssOf(t.download)}`, '—', null, 'flat', null);
    }
    const sf = r.files.sftp;
    if (sf && t) {
      add(`6c. Files: ${t.sizeMiB} MiB over SFTP`, 'upload MiB/s (baseline: cp)', fmt(sf.upload.mibPerSec), fmt(t.copy.mibPerSec), sf.upload.ratio, '', null);
      add('', 'download MiB/s (baseline: cp)', fmt(sf.download.mibPerSec), fmt(t.copy.mibPerSec), sf.download.ratio, '', null);
      add('', 'panel + agent RSS during both (before → peak)', rssOf(sf), '—', null, 'flat', null);
    }
    const l = r.files.list;
    if (l) add(`6b. Files: list a folder of ${l.files} files (page of ${l.pageSize})`, 'latency p50 / p99', `${fmt(l.latencyMs.p50)} / ${fmt(l.latencyMs.p99, ' ms')}`, '—', null, '', null);
  }
  if (r.backups) {
    const b = r.backups;
    add(`7. Backups: ${b.tree.mib} MiB of mixed files`, 'first backup MiB/s (baseline: tar czf of the tree)', fmt(b.first.mibPerSec), fmt(b.tar.mibPerSec), b.first.ratio, '', null);
    add('', 'second backup of the unchanged tree: MiB/s; bytes added to the store', `${fmt(b.second.mibPerSec)}; ${b.second.addedBytes} (${b.second.addedPercent}%)`, '—', b.second.ratio, '< 1% added', b.second.addedPercent < 1);
    add('', 'restore MiB/s (baseline: tar czf)', fmt(b.restore.mibPerSec), fmt(b.tar.mibPerSec), b.restore.ratio, '', null);
  }
  if (r.startup) {
    const s = r.startup;
    add('4. Startup on an existing embedded DB', `time to /health 200 (median of ${s.runs.length}; max)`, `${fmt(s.medianMs, ' ms')} (max ${fmt(s.maxMs, ' ms')})`, '—', null, '< 5 s', s.maxMs < 5000);
    add('', `idle RSS after ${s.idleSeconds} s (node process)`, fmt(s.idleRssMiB, ' MiB'), '—', null, '', null);
  }
  return rows;
}

/** A warning when other work kept the machine busy while we measured. */
function busyNote(r) {
  const before = [];
  if (r.http) for (const x of [r.http.baseline, r.http.rest, r.http.graphql]) before.push(x.machineBusyCoresBefore);
  for (const run of r.console ?? []) for (const x of [run.nodeChannel, run.graphql, run.baseline]) before.push(x?.drive?.cores?.machineBusyBefore);
  const worst = Math.max(...before.filter((x) => typeof x === 'number'));
  return worst >= 0.25 ? `other processes kept up to ${worst} of ${r.machine.cores} cores busy right before some measurements: absolute figures are pessimistic, compare ratios and CPU per request` : '';
}

/**
 * Whether this machine can reach the absolute targets at all, judged by the baselines measured in
 * the same run (the least any implementation has to do): a target the bare baseline misses here is
 * out of reach for the panel too, whatever it does.
 */
function feasibility(r) {
  const out = [];
  if (r.http) {
    const b = r.http.baseline;
    out.push(
      `p99 < 50 ms at 64 connections: the bare Express + pg handler's own p99 is ${fmt(b.latencyMs.p99, ' ms')} (${fmt(b.requestsPerSec)} requests/s; ` +
        `64 connections need ${Math.round(64 / 0.05)} requests/s for even the *mean* to be 50 ms) — ${b.latencyMs.p99 < 50 ? 'reachable here' : '**not reachable on this machine**'}.`,
    );
  }
  const primary = (r.console ?? []).find((run) => run.rate === r.params.linesPerSec);
  const b = primary?.baseline;
  if (b) {
    const asked = r.params.linesPerSec * r.params.consoleSeconds;
    const framesPerSec = r.params.linesPerSec * r.params.subscribers;
    const keptPace = b.publishedLines >= asked * 0.95;
    out.push(
      `${r.params.linesPerSec} lines/s to ${r.params.subscribers} subscribers is ${framesPerSec.toLocaleString('en')} frames/s (one frame per line): ` +
        `the bare ws baseline produced ${b.publishedLines} of the ${asked} lines in ${r.params.consoleSeconds} s and delivered ${fmt(b.deliveredLinesPerSecTotal)} frames/s — ` +
        `${keptPace ? 'reachable here' : '**not reachable on this machine**'}.`,
    );
  }
  return out;
}

function markdown(r, rows) {
  const m = r.machine;
  const lines = [
    `### Benchmarks (\`npm run bench\`, ${r.finishedAt.slice(0, 16).replace('T', ' ')} UTC)`,
    '',
    `Machine: ${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB RAM, Node ${m.node}, ${m.platform}; PostgreSQL ${r.database.version} (${r.database.kind}); console bus: ${r.params.redis ? 'Redis' : 'in-process'}.`,
    `Load generators run on the same machine. autocannon: 64 connections, ${r.params.httpSeconds} s after a ${r.params.warmupSeconds} s warm-up` +
      (r.http?.rounds > 1
        ? `; scenarios 1 and 2 ran ${r.http.rounds} rounds (order turning), and each comparison shows the round with its median ratio ` +
          `(REST vs baseline: round ${r.http.medianRounds.restVsBaseline}; GraphQL vs REST: round ${r.http.medianRounds.graphqlVsRest}; requests/s by round: ` +
          `baseline ${r.http.requestsPerSecByRound.baseline.join(', ')}; REST ${r.http.requestsPerSecByRound.rest.join(', ')}; GraphQL ${r.http.requestsPerSecByRound.graphql.join(', ')})`
        : '') +
      '. ' +
      `Load average at start/end: ${m.loadAverageAtStart?.[0]} / ${m.loadAverageAtEnd?.[0]}` +
      (busyNote(r) ? ` — ${busyNote(r)}` : '') + '.',
    '',
    '| scenario | metric | panel | baseline | ratio | target | met |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    lines.push(`| ${row.scenario} | ${row.metric} | ${row.value} | ${row.baseline} | ${row.ratio === null ? '' : row.ratio + '×'} | ${row.target} | ${row.met === null ? '' : row.met ? 'yes' : '**no**'} |`);
  }
  const t = rows.filter((x) => x.met !== null);
  lines.push('', `Targets met: ${t.filter((x) => x.met).length} of ${t.length}.`);
  const f = feasibility(r);
  if (f.length) lines.push('', 'Can this machine reach the absolute targets? Judged by the baselines of the same run:', '', ...f.map((x) => `- ${x}`));
  lines.push(
    '',
    'Baselines: (1) a bare Express 5 + `pg` handler running the same page + count(*) queries on the same database, no auth; ' +
      '(3) a bare `ws` server broadcasting the same lines (same JSON envelope, one serialisation per line) to the same number of clients. ' +
      'Line latency = receipt time − the line\'s `ts` (when the agent read it from the game, or the baseline produced it); ' +
      'marker latency = receipt time − the send time written into `say t=<ms>` (stdin → game → agent → reader).',
  );
  if (r.errors?.length) lines.push('', 'Errors: ' + r.errors.map((e) => `${e.phase}: ${e.message.split('\n')[0]}`).join('; '));
  return lines.join('\n') + '\n';
}

module.exports = { buildRows, markdown, feasibility };
