'use strict';
/** Targets, the markdown table (bench/results/latest.md) and the console summary. */

const { fmt, ratio } = require('./report-format');
const { consoleRows, memoryRows, PHASES } = require('./report-console');

// HTTP targets, as ratios to the same run's baselines
const REST_P99_MAX_RATIO = 1.15; // REST list p99 ≤ 1.15× the bare Express + pg handler's
const GRAPHQL_MIN_RATIO = 0.8; // GraphQL list requests/s ≥ 0.8× REST's

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
    const p99Ratio = ratio(rest.latencyMs.p99, b.latencyMs.p99);
    add('', 'latency p99', fmt(rest.latencyMs.p99, ' ms'), fmt(b.latencyMs.p99, ' ms'), p99Ratio, `≤ ${REST_P99_MAX_RATIO}× baseline`, p99Ratio !== null && p99Ratio <= REST_P99_MAX_RATIO);
    add('', 'server CPU per request', fmt(rest.serverCpuMsPerRequest, ' ms'), fmt(b.serverCpuMsPerRequest, ' ms'), ratio(rest.serverCpuMsPerRequest, b.serverCpuMsPerRequest), '', null);
    add('', 'PostgreSQL CPU per request', fmt(rest.databaseCpuMsPerRequest, ' ms'), fmt(b.databaseCpuMsPerRequest, ' ms'), ratio(rest.databaseCpuMsPerRequest, b.databaseCpuMsPerRequest), '', null);
    if (rest.non2xx || rest.errors) add('', 'non-2xx / errors', `${rest.non2xx} / ${rest.errors}`, `${b.non2xx} / ${b.errors}`, null, '0', false);
    add('2. GraphQL same page (+owner, node, blueprint)', 'requests/s', fmt(graphql.requestsPerSec), `${fmt(restG.requestsPerSec)} (REST)`, ratio(graphql.requestsPerSec, restG.requestsPerSec), `≥ ${GRAPHQL_MIN_RATIO}× REST`, ratio(graphql.requestsPerSec, restG.requestsPerSec) >= GRAPHQL_MIN_RATIO);
    add('', 'latency p50 / p99', `${fmt(graphql.latencyMs.p50)} / ${fmt(graphql.latencyMs.p99, ' ms')}`, `${fmt(restG.latencyMs.p50)} / ${fmt(restG.latencyMs.p99, ' ms')} (REST)`, ratio(graphql.latencyMs.p99, restG.latencyMs.p99), '', null);
    add('', 'server CPU per request', fmt(graphql.serverCpuMsPerRequest, ' ms'), `${fmt(restG.serverCpuMsPerRequest, ' ms')} (REST)`, ratio(graphql.serverCpuMsPerRequest, restG.serverCpuMsPerRequest), '', null);
    add('', 'PostgreSQL CPU per request', fmt(graphql.databaseCpuMsPerRequest, ' ms'), `${fmt(restG.databaseCpuMsPerRequest, ' ms')} (REST)`, ratio(graphql.databaseCpuMsPerRequest, restG.databaseCpuMsPerRequest), '', null);
    if (graphql.non2xx || graphql.errors) add('', 'non-2xx / errors', `${graphql.non2xx} / ${graphql.errors}`, '', null, '0', false);
  }
  consoleRows(add, r);
  if (r.activity) {
    const probe = r.activity.probe;
    const q = (x, unit = '') => `${fmt(x.median, unit)} [${fmt(x.p25)}–${fmt(x.p75)}]`;
    for (const [key, label] of [['list', '5. Activity log cost: REST server list as a user'], ['power', '5. Activity log cost: power action (no-op start)']]) {
      const a = r.activity[key];
      if (!a) continue;
      // by parts: entries per request × CPU of an entry (probe) ÷ CPU per request without recording
      add(label, 'panel + PostgreSQL CPU per request with recording, by parts (entries per request × CPU per entry; off = baseline)', `${fmt(a.cpuOff + a.costMs, ' ms')} (${fmt(a.entriesPerRequest)} × ${fmt(probe.usPerEntry.median, ' µs')})`, fmt(a.cpuOff, ' ms'), a.costRatio, '≤ 1.05× (cost ≤ 5%)', a.costRatio <= 1.05);
      add('', 'the same with the dearer quartile of an entry and the cheaper quartile of a request', '', '', a.costRatioUpper, '', null);
      add('', "the same over the request's own CPU (without the idle panel's and PostgreSQL's share of each second)", fmt(a.cpuOffOwn + a.costMs, ' ms'), fmt(a.cpuOffOwn, ' ms'), a.costRatioOwn, '', null);
      add('', `end to end: panel + PostgreSQL CPU per request (median of ${r.activity.rounds} rounds; ratio: median of the per-round ratios)`, fmt(a.cpuOn, ' ms'), fmt(a.cpuOff, ' ms'), a.endToEnd.median, '', null);
      add('', 'end to end: per-round ratio, quartiles; range', `${fmt(a.endToEnd.p25)}–${fmt(a.endToEnd.p75)}; ${fmt(a.endToEnd.min)}–${fmt(a.endToEnd.max)}`, '', null, '', null);
      add('', 'requests/s (median of rounds)', fmt(a.requestsPerSecOn), fmt(a.requestsPerSecOff), ratio(a.requestsPerSecOn, a.requestsPerSecOff), '', null);
      add('', 'latency p99 (median of rounds)', fmt(a.p99On, ' ms'), fmt(a.p99Off, ' ms'), ratio(a.p99On, a.p99Off), '', null);
      if (a.non2xx) add('', 'non-2xx / errors', fmt(a.non2xx), '', null, '0', false);
    }
    if (probe) {
      add(`5. Activity log cost: one entry (${probe.runs.length} probe pairs at ${probe.ratePerSec} entries/s, ${probe.seconds} s)`, 'CPU per entry: panel + PostgreSQL [quartiles]', `${q(probe.panelUsPerEntry, ' µs')} + ${q(probe.postgresUsPerEntry, ' µs')}`, '', null, '', null);
      add('', 'CPU of the idle panel and PostgreSQL per second [quartiles]', q(probe.idleCpuMsPerSecond, ' ms'), '', null, '', null);
    }
  }
  if (r.files) {
    const t = r.files.transfer;
    const rssOf = (x) => `${fmt(x.rss.beforeMiB)} → ${fmt(x.rss.peakMiB)} MiB`;
    if (t) {
      // the ratios are the medians of the rounds' own (each transfer against the cp of its round)
      const spread = (x) => (x.ratios ? `median of ${x.ratios.length} rounds (${x.ratios.join(', ')})` : '');
      const cp = t.copy.mibPerSecMin === undefined ? fmt(t.copy.mibPerSec) : `${fmt(t.copy.mibPerSec)} (${fmt(t.copy.mibPerSecMin)}–${fmt(t.copy.mibPerSecMax)})`;
      add(`6. Files: ${t.sizeMiB} MiB through the panel`, 'upload (multipart) MiB/s (baseline: cp on the same disk)', fmt(t.upload.mibPerSec), cp, t.upload.ratio, '≥ 0.5× cp', t.upload.ratio >= 0.5);
      add('', 'download MiB/s (baseline: cp)', fmt(t.download.mibPerSec), cp, t.download.ratio, '≥ 0.5× cp', t.download.ratio >= 0.5);
      if (t.upload.ratios) add('', 'per-round ratio to that round\'s cp: upload / download', `${spread(t.upload)} / ${spread(t.download)}`, '', null, '', null);
      if (t.bare) add('', 'download from a bare Node server in one hop (same curl) MiB/s (baseline: cp)', fmt(t.bare.mibPerSec), cp, t.bare.ratio, '', null);
      if (t.bareUpload) add('', 'upload to a bare Node server in one hop (same curl, raw body, 1 MiB writes + fsync) MiB/s (baseline: cp)', fmt(t.bareUpload.mibPerSec), cp, t.bareUpload.ratio, '', null);
      if (t.relayUpload) add('', 'the same bare server through a bare relay in its own process (two hops, as the file worker\'s process makes the least): download; upload MiB/s (baseline: cp)', `${fmt(t.relayDownload.mibPerSec)}; ${fmt(t.relayUpload.mibPerSec)}`, cp, `${t.relayDownload.ratio}×; ${t.relayUpload.ratio}`, '', null);
      if (t.rawUpload) add('', 'upload as a raw body (PUT /files/contents) MiB/s (baseline: cp)', fmt(t.rawUpload.mibPerSec), cp, t.rawUpload.ratio, '', null);
      const cpuOf = (c) => `${c.panel.user}+${c.panel.sys} / ${c.worker.user}+${c.worker.sys} / ${c.client.user}+${c.client.sys}`;
      if (t.download.cpuMs) add('', `CPU ms (user+kernel) of the median round, panel / file worker / curl: download; upload${t.rawUpload ? '; raw PUT' : ''}`, [t.download, t.upload, t.rawUpload].filter(Boolean).map((x) => cpuOf(x.cpuMs)).join('; '), t.bare ? `${cpuOf(t.bare.cpuMs)}${t.bareUpload ? `; ${cpuOf(t.bareUpload.cpuMs)}` : ''} (bare server)` : '—', null, '', null);
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
    add('4. Startup on an existing embedded DB', `time to /health 200 (median of ${s.runs.length}; max)`, `${fmt(s.medianMs, ' ms')} (max ${fmt(s.maxMs, ' ms')})`, '—', null, '', null);
    add('', `idle RSS after ${s.idleSeconds} s (node process)`, fmt(s.idleRssMiB, ' MiB'), '—', null, '', null);
  }
  memoryRows(add, r);
  return rows;
}

/** A warning when other work kept the machine busy while we measured. */
function busyNote(r) {
  const before = [];
  if (r.http) for (const x of [r.http.baseline, r.http.rest, r.http.graphql]) before.push(x.machineBusyCoresBefore);
  for (const run of r.console ?? []) for (const key of [...PHASES.map(([k]) => k), 'baseline']) before.push(run[key]?.drive?.cores?.machineBusyBefore);
  const worst = Math.max(...before.filter((x) => typeof x === 'number'));
  return worst >= 0.25 ? `other processes kept up to ${worst} of ${r.machine.cores} cores busy right before some measurements: absolute figures are pessimistic, compare ratios and CPU per request` : '';
}

/** The command that made the run: `npm run bench` with the knobs it was given. */
function command(r) {
  const knobs = Object.entries(r.knobs ?? {}).map(([k, v]) => `${k}=${v}`);
  return [...knobs, 'npm run bench'].join(' ');
}

function markdown(r, rows) {
  const m = r.machine;
  const lines = [
    `### Benchmarks (\`${command(r)}\`, ${r.finishedAt.slice(0, 16).replace('T', ' ')} UTC)`,
    '',
    `Machine: ${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB RAM, Node ${m.node}, ${m.platform}; PostgreSQL ${r.database.version} (${r.database.kind}); console bus: ${r.params.redis ? 'Redis' : 'in-process'}.`,
    'Load generators run on the same machine' +
      (r.console?.length ? `; console: ${r.params.subscribers} readers in ${r.params.readerProcesses} processes, ${r.params.consoleSeconds} s per phase` : '') +
      (r.http ? `; autocannon: 64 connections, ${r.params.httpSeconds} s after a ${r.params.warmupSeconds} s warm-up` : '') +
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
  lines.push(
    '',
    'Baselines: (1) a bare Express 5 + `pg` handler running the same page + count(*) queries on the same database, no auth; ' +
      `(3) a bare \`ws\` server broadcasting the same lines (same JSON envelope, one serialisation per line, one frame per line) to the same number of readers, spread over the same ${r.params.readerProcesses ?? 4} reader processes. ` +
      'Line latency = receipt time − the line\'s `ts` (when the agent read it from the game, or the baseline produced it; every line of a batch counts); ' +
      'command echo latency = receipt time at each reader − the send time written into `say t=<ms>` (stdin → game → agent → reader); ' +
      'the agent\'s flood budget (`CONSOLE_MAX_LINES_PER_SECOND`, 2,000 lines/s by default) drops lines above it, and batched readers are told how many (`skipped`).',
  );
  if (r.errors?.length) lines.push('', 'Errors: ' + r.errors.map((e) => `${e.phase}: ${e.message.split('\n')[0]}`).join('; '));
  return lines.join('\n') + '\n';
}

module.exports = { buildRows, markdown };
