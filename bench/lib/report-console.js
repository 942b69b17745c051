'use strict';
/**
 * The rows of scenario 3 (console fan-out) and of the panel's memory over the whole bench. Every
 * console target is a ratio to the bare per-line `ws` broadcast of the same run, except the echo
 * latency of the batched channels (≤ 250 ms: what a user typing a command waits for).
 */
const { fmt, ratio } = require('./report-format');

const PHASES = [
  ['nodeChannel', 'node', 'node channel'],
  ['nodeBatches', 'node-batch', 'node channel, batches'],
  ['graphql', 'graphql', 'GraphQL consoleOutput'],
  ['graphqlBatches', 'graphql-batch', 'GraphQL consoleBatches'],
];
const ECHO_P99_MAX_MS = 250;

/** The targets a phase is held to: batches at the offered flood, GraphQL per line below saturation. */
function targetsOf(kind, primary) {
  if (kind.endsWith('-batch') && primary) return { delivered: 3, cpu: 0.3, echoMs: ECHO_P99_MAX_MS, lossless: true };
  if (kind === 'graphql' && !primary) return { p99: 1.5, cpu: 1.5 };
  return {};
}

const describe = (t) =>
  [t.delivered && `lines/s ≥ ${t.delivered}× bare`, t.cpu && `CPU per line ≤ ${t.cpu}× bare`, t.p99 && `p99 ≤ ${t.p99}× bare`, t.echoMs && `echo p99 ≤ ${t.echoMs} ms`].filter(Boolean).join(', ');

function phaseRows(add, label, s, b, t) {
  const lat = (x) => (x ? `${fmt(x.latencyMs.p50)} / ${fmt(x.latencyMs.p99, ' ms')}` : '—');
  const p99Ratio = ratio(s.latencyMs.p99, b?.latencyMs.p99);
  add(`${label}: line latency p50 / p99`, lat(s), lat(b), p99Ratio, t.p99 ? `≤ ${t.p99}× bare` : '', t.p99 ? p99Ratio !== null && p99Ratio <= t.p99 : null);
  const echo = `${fmt(s.markerLatencyMs.p99, ' ms')} (${s.echoes.delivered} of ${s.echoes.sent} = ${fmt(s.echoes.deliveredPct, '%')})`;
  const bareEcho = b ? `${fmt(b.markerLatencyMs.p99, ' ms')} (${fmt(b.echoes.deliveredPct, '%')})` : '—';
  add(`${label}: command echo latency p99 at every reader (say t=…); echoes delivered`, echo, bareEcho, ratio(s.markerLatencyMs.p99, b?.markerLatencyMs.p99), t.echoMs ? `≤ ${t.echoMs} ms` : '', t.echoMs ? s.markerLatencyMs.p99 !== null && s.markerLatencyMs.p99 <= t.echoMs : null);
  const dRatio = ratio(s.deliveredLinesPerSecTotal, b?.deliveredLinesPerSecTotal);
  add(`${label}: lines delivered/s (sum over readers)`, fmt(s.deliveredLinesPerSecTotal), fmt(b?.deliveredLinesPerSecTotal), dRatio, t.delivered ? `≥ ${t.delivered}× bare` : '', t.delivered ? dRatio !== null && dRatio >= t.delivered : null);
  const cRatio = ratio(s.serverCpuUsPerDelivery, b?.serverCpuUsPerDelivery);
  add(`${label}: panel CPU per delivered line`, fmt(s.serverCpuUsPerDelivery, ' µs'), fmt(b?.serverCpuUsPerDelivery, ' µs'), cRatio, t.cpu ? `≤ ${t.cpu}× bare` : '', t.cpu ? cRatio !== null && cRatio <= t.cpu : null);
  add(`${label}: cores busy, server / reader processes`, `${fmt(s.drive.cores?.server)} / ${fmt(s.readerCpuCores)}`, b ? `${fmt(b.drive.cores?.server)} / ${fmt(b.readerCpuCores)}` : '—', null, '', null);
  add(`${label}: readers kept up / disconnected`, `${s.readersKeptUp} / ${s.readersDisconnected}`, b ? `${b.readersKeptUp} / ${b.readersDisconnected}` : '—', null, '', null);
  add(`${label}: lines published in the window (of offered)`, `${s.publishedLines} (of ${s.offeredLines})`, b ? `${b.publishedLines} (of ${b.offeredLines})` : '—', ratio(s.publishedLines, b?.publishedLines), '', null);
  add(`${label}: lines per reader min / median / max`, `${s.linesPerReader.min} / ${s.linesPerReader.median} / ${s.linesPerReader.max}`, b ? `${b.linesPerReader.min} / ${b.linesPerReader.median} / ${b.linesPerReader.max}` : '—', null, '', null);
  const lossOf = (x) => (x ? `${x.linesSkippedByKeptUpReaders} = ${fmt(x.skippedPctKeptUp, '%')}; ${x.linesRepeatedOrOutOfOrder} / ${x.linesInFlightAtEnd}` : '—');
  const lossless = s.linesSkippedByKeptUpReaders === 0 && s.linesRepeatedOrOutOfOrder === 0;
  add(`${label}: lines skipped by readers that kept up; repeated / in flight at the end`, lossOf(s), lossOf(b), null, t.lossless ? '0 skipped, 0 repeated' : '', t.lossless ? lossless : null);
  if (s.kind?.endsWith('-batch') || s.linesDroppedByFloodGuard || b?.linesDroppedByFloodGuard) {
    const dropped = (x) => (x ? `${fmt(x.linesDroppedByFloodGuard)}; ${fmt(x.deliveredPctOfRead, '%')}` : '—');
    add(`${label}: lines the agent's flood budget dropped (one reader's sum of skipped); share of the lines read that a reader got`, dropped(s), dropped(b), null, '', null);
  }
  const rssOf = (x) => (x ? `${fmt(x.rss.beforeMiB)} → ${fmt(x.rss.peakMiB)} → ${fmt(x.rss.endMiB)} MiB` : '—');
  add(`${label}: RSS with 1 stalled reader (before → peak → end)`, rssOf(s), rssOf(b), null, '', null);
}

function consoleRows(add, r) {
  for (const run of r.console ?? []) {
    const primary = run.rate === r.params.linesPerSec;
    let head = `3${primary ? '' : 'b'}. Console fan-out (${run.rate} lines/s offered → ${r.params.subscribers} readers${primary ? '' : ', below saturation'})`;
    const addRow = (metric, value, baseline, rat, target, met) => {
      add(head, metric, value, baseline, rat, target, met);
      head = '';
    };
    for (const [key, kind, label] of PHASES) {
      const s = run[key];
      if (!s) continue;
      const t = targetsOf(kind, primary);
      if (s.notAvailable) addRow(`${label}`, `not available: ${s.notAvailable.slice(0, 160)}`, '', null, describe(t), null);
      else phaseRows(addRow, label, s, run.baseline, t);
    }
  }
}

function memoryRows(add, r) {
  const p = r.panelRss;
  if (!p) return;
  const head = '8. Panel memory (the panel and its local agent: one process)';
  const idle = r.startup?.idleRssMiB;
  add(head, `peak RSS over the whole bench (sampled every ${p.everyMs} ms); where`, `${fmt(p.peakMiB, ' MiB')} (${p.where}, ${p.atS} s into the run)`, idle ? `${fmt(idle, ' MiB')} (idle, scenario 4)` : '—', ratio(p.peakMiB, idle), '≤ 400 MiB', p.peakMiB <= 400);
  const stretches = Object.entries(p.peakByStretch).sort((a, b) => b[1] - a[1]).slice(0, 6);
  add('', 'peak RSS by part of the run (the highest six, MiB)', stretches.map(([k, v]) => `${k}: ${fmt(v)}`).join('; '), '', null, '', null);
  const m = r.memoryAfterConsole;
  if (m) {
    const snap = m.heapSnapshot ? `; heap snapshot ${m.heapSnapshot.split('/').slice(-2).join('/')}` : '';
    add('', 'after the console scenarios: RSS / heap used / heap total / external (array buffers)', `${fmt(m.rssMiB)} / ${fmt(m.heapUsedMiB)} / ${fmt(m.heapTotalMiB)} / ${fmt(m.externalMiB)} (${fmt(m.arrayBuffersMiB)}) MiB${snap}`, '', null, '', null);
  }
}

module.exports = { consoleRows, memoryRows, PHASES };
