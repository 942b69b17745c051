'use strict';
/**
 * The figures of one console phase from its readers' records (console-frames.js): latency, lines
 * delivered per second and CPU per delivered line, loss judged by the lines' numbers, what the agent's
 * flood budget dropped, and the share of `say t=<ms>` echoes that reached the readers.
 */

const pct = (part, whole) => (whole > 0 ? Math.round((part / whole) * 10000) / 100 : null);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : 0;
};

/**
 * Readers of lines without `seq`: loss is judged against what was published, by the demo game's spam numbers (from
 * the lowest to the highest any reader got in the window). A kept-up reader skipped a line when it
 * lacks one before its own last line (a reader is sent its lines in order), apart from the gaps right
 * after the agent's flood notice; the lines after its last one were still on their way when the
 * window closed.
 */
/** What the agent told a per-line reader it dropped: its `console_skipped` counts, or the gaps after its notices. */
const perLineDropped = (r) => Math.max(r.floodDropped, r.agentSkipped);

function perLineLoss(keptUp, numbered) {
  const firstNo = numbered.length ? Math.min(...numbered.map((r) => r.first)) : 0;
  const lastNo = numbered.length ? Math.max(...numbered.map((r) => r.last)) : -1;
  const published = lastNo - firstNo + 1;
  let skipped = 0;
  let inFlight = 0;
  for (const r of keptUp) {
    if (r.first === null) {
      skipped += published;
      continue;
    }
    skipped += r.first - firstNo + (r.last - r.first + 1) - (r.lines - r.repeated) - r.floodDropped;
    inFlight += lastNo - r.last;
  }
  return { published, skipped, inFlight, agentDropped: Math.max(0, ...keptUp.map(perLineDropped)) };
}

/**
 * Readers of the node's numbered lines (`seq`): the lines the agent's flood budget drops take no
 * number, so every gap in a reader's numbers is a line it missed.
 */
function seqLoss(keptUp, numbered) {
  const firstNo = numbered.length ? Math.min(...numbered.map((r) => r.firstSeq)) : 0;
  const lastNo = numbered.length ? Math.max(...numbered.map((r) => r.lastSeq)) : -1;
  let skipped = 0;
  let inFlight = 0;
  for (const r of keptUp) {
    if (r.firstSeq === null) continue;
    skipped += r.seqGaps;
    inFlight += lastNo - r.lastSeq;
  }
  return { published: lastNo - firstNo + 1, skipped, inFlight, agentDropped: median(keptUp.map((r) => r.agentSkipped)) };
}

function summarize(name, { kind, report, measured, expected, subscribers, readerCpuMs }) {
  const batch = kind.endsWith('-batch');
  const live = report.readers.filter((r) => !r.stalled);
  const keptUp = live.filter((r) => r.closed === null);
  const counts = live.map((r) => r.lines).sort((a, b) => a - b);
  const bySeq = live.some((r) => r.firstSeq !== null);
  const numbered = live.filter((r) => (bySeq ? r.firstSeq !== null : r.first !== null));
  const loss = bySeq ? seqLoss(keptUp, numbered) : perLineLoss(keptUp, numbered);
  const repeated = keptUp.reduce((a, r) => a + r.repeated, 0);
  const delivered = live.reduce((a, r) => a + r.lines, 0);
  const d = measured.driven;
  const seconds = d.elapsedMs / 1000;
  const deliverySeconds = Math.max(seconds, d.lastArrivalS ?? 0);
  const echoesSent = (d.markers ?? 0) * keptUp.length;
  const echoes = keptUp.reduce((a, r) => a + r.markers, 0);
  return {
    name,
    kind,
    subscribers,
    offeredLines: expected,
    offeredLinesPerSec: Math.round(expected / seconds),
    publishedLines: loss.published,
    deliveredLinesPerSecTotal: Math.round(delivered / deliverySeconds),
    latencyMs: report.hist.summary(),
    markerLatencyMs: report.markerHist.summary(),
    echoes: { sent: echoesSent, delivered: echoes, deliveredPct: pct(echoes, echoesSent) },
    readersKeptUp: keptUp.length,
    readersDisconnected: live.length - keptUp.length,
    readersComplete: keptUp.filter((r) => r.lines >= expected).length,
    linesPerReader: { min: counts[0] ?? 0, median: median(counts), max: counts.at(-1) ?? 0 },
    publishedPctOfOffered: pct(loss.published, expected),
    linesSkippedByKeptUpReaders: loss.skipped,
    linesRepeatedOrOutOfOrder: repeated,
    linesInFlightAtEnd: loss.inFlight,
    skippedPctKeptUp: keptUp.length && loss.published > 0 ? pct(loss.skipped, keptUp.length * loss.published) : null,
    floodNotices: Math.max(0, ...live.map((r) => r.notices)),
    // lines the agent's flood budget dropped, as one reader was told (`skipped`, or the per-line notice)
    linesDroppedByFloodGuard: loss.agentDropped,
    // of the lines the agent read from the game, the share one reader got (median reader)
    deliveredPctOfRead: median(keptUp.map((r) => pct(r.lines, r.lines + (batch ? r.agentSkipped : perLineDropped(r))) ?? 0)),
    // CPU the serving process spent per line delivered to one reader (load-robust)
    serverCpuUsPerDelivery: delivered ? Math.round((((d.serverCpuMs ?? 0) * 1000) / delivered) * 10) / 10 : null,
    readerCpuCores: Math.round((readerCpuMs / 1000 / deliverySeconds) * 100) / 100,
    subscriberErrors: [...new Set(report.readers.flatMap((r) => r.errors ?? []))].slice(0, 5),
    drive: d,
    rss: measured.rss,
  };
}

/** A phase that could not run because its channel is not there (no batches yet). */
function notAvailable(name, kind, reason) {
  return { name, kind, notAvailable: reason };
}

function logPhase(log, s) {
  if (s.notAvailable) return log(`    ${s.name}: not available (${s.notAvailable})`);
  log(
    `    ${s.name}: offered ${s.offeredLinesPerSec} lines/s; latency p50 ${s.latencyMs.p50} ms p99 ${s.latencyMs.p99} ms (echoes p99 ${s.markerLatencyMs.p99} ms, ${s.echoes.delivered} of ${s.echoes.sent}); ` +
      `delivered ${s.deliveredLinesPerSecTotal} lines/s at ${s.serverCpuUsPerDelivery} µs of server CPU each; ` +
      `kept up ${s.readersKeptUp}/${s.subscribers}, lines/reader min ${s.linesPerReader.min} median ${s.linesPerReader.median} max ${s.linesPerReader.max} ` +
      `of ${s.publishedLines} published (${s.offeredLines} offered); skipped ${s.linesSkippedByKeptUpReaders}, repeated ${s.linesRepeatedOrOutOfOrder}, in flight at the end ${s.linesInFlightAtEnd}; ` +
      `dropped by the agent's flood budget ${s.linesDroppedByFloodGuard} (delivered ${s.deliveredPctOfRead}% of what it read); ` +
      `cores busy: server ${s.drive.cores?.server}, readers ${s.readerCpuCores}, machine ${s.drive.cores?.machine}; ` +
      `RSS ${s.rss.beforeMiB}→peak ${s.rss.peakMiB}→${s.rss.endMiB} MiB`,
  );
}

module.exports = { summarize, notAvailable, logPhase };
