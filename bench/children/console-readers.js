'use strict';
/**
 * A share of scenario 3's readers in a process of its own: the bench spreads them over several such
 * processes so that the readers do not become the bottleneck of what they measure. Driven over IPC:
 *   open { specs }       opens the readers (console-readers.js); replies `failure` (+ notAvailable) if one cannot
 *   measure { on }       counts lines and latencies from now on (or stops counting)
 *   progress             { arrivals, lines, minLiveLines, lastArrival }: for settling and draining
 *   report               histograms (sparse) and each reader's record
 *   close_readers        closes this phase's readers
 */
const { newTally } = require('../lib/console-frames');
const { openReader } = require('../lib/console-readers');

const OPEN_AT_ONCE = 50;
let tally = newTally();
let readers = [];
const sockets = new Set(); // every socket opened, subscribed or not

async function open(specs) {
  const track = (ws) => sockets.add(ws);
  for (let i = 0; i < specs.length; i += OPEN_AT_ONCE) {
    readers.push(...(await Promise.all(specs.slice(i, i + OPEN_AT_ONCE).map((s) => openReader(tally, s, track)))));
  }
  return { opened: readers.length };
}

function progress() {
  let lines = 0;
  let minLiveLines = Infinity;
  for (const r of readers) {
    lines += r.lines;
    if (!r.stalled && r.closed === null) minLiveLines = Math.min(minLiveLines, r.lines);
  }
  return { arrivals: tally.arrivals, lines, minLiveLines: Number.isFinite(minLiveLines) ? minLiveLines : null, lastArrival: tally.lastArrival };
}

function report() {
  return {
    hist: tally.hist.toSparse(),
    markerHist: tally.markerHist.toSparse(),
    readers: readers.map(({ ws: _ws, ...record }) => ({ ...record, errors: [...new Set(record.errors)].slice(0, 3) })),
  };
}

function closeReaders() {
  for (const ws of sockets) ws.terminate();
  sockets.clear();
  readers = [];
  tally = newTally();
  return {};
}

const handlers = {
  open: (m) => open(m.specs),
  measure: (m) => {
    tally.measuring = Boolean(m.on);
    return {};
  },
  progress,
  report,
  close_readers: closeReaders,
};

process.on('message', async (m) => {
  if (m?.type === 'close') {
    closeReaders();
    process.exit(0);
  }
  const handler = handlers[m?.type];
  if (!handler) return;
  try {
    process.send({ type: `${m.type}_done`, ...(await handler(m)) });
  } catch (err) {
    process.send({ type: `${m.type}_done`, failure: String(err.message || err), notAvailable: Boolean(err.notAvailable) });
  }
});
process.on('disconnect', () => process.exit(0));
process.send({ type: 'ready', pid: process.pid });
