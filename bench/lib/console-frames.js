'use strict';
/**
 * What a console reader of scenario 3 does with each frame it receives, without JSON.parse and
 * without converting the frame to a string: the readers must cost far less than the servers they
 * measure (at 10,000 lines/s the batched channels deliver about a million lines a second).
 *
 * Loss is judged by the lines' numbers. The node numbers the lines it passes (`seq`); the lines its
 * flood budget drops take no number (docs/node-channel.md) and are counted for the readers instead
 * (`console_skipped` frames, a batch's `skipped`), so a gap in a reader's `seq` is a line it missed.
 * Frames without `seq` (the bare baseline, GraphQL `consoleOutput { line ts }`) are judged by the demo
 * game's numbers of its spam lines (` #<k>`); a gap right after the agent's notice that it dropped
 * lines is not the reader's.
 * Per-line frames (node `console_output`, a graphql-ws `next` of `consoleOutput`): one line each.
 * Batch frames (node `console_batch`, a graphql-ws `next` of `consoleBatches { lines { line ts seq }
 * skipped }`): every line's `ts` gives its latency (one `"ts":"` per line, so they count the lines
 * too); the batch's first and last `seq` are checked against the reader's last.
 */
const { Histogram } = require('./util');

const TS_KEY = Buffer.from('"ts":"');
const SEQ_KEY = Buffer.from('"seq":');
const SKIPPED_KEY = Buffer.from('"skipped":');
const SPAM = Buffer.from('spam line ');
const MARKER = Buffer.from('[Server] t=');
const NOTICE = Buffer.from('Output rate limit exceeded');
const SKIPPED_FRAME = Buffer.from('"console_skipped"');
const LINES_KEY = Buffer.from('"lines":[');
const HASH = 0x23; // '#'
const HOUR_LEN = 14; // "YYYY-MM-DDTHH:" of an ISO-8601 time

/** The measurements of one reader process: line and marker latency, whether it counts now, when a line last came. */
function newTally() {
  return { hist: new Histogram(), markerHist: new Histogram(), measuring: false, arrivals: 0, lastArrival: 0 };
}

/** A reader's record: lines and markers counted while measuring, its numbering, what it was told was dropped. */
function newRecord(stalled) {
  return {
    lines: 0,
    markers: 0,
    frames: 0,
    closed: null,
    stalled,
    errors: [],
    // frames without seq: the demo game's spam numbers
    first: null,
    last: null,
    repeated: 0,
    floodDropped: 0,
    afterNotice: false,
    notices: 0,
    // the agent's seq numbers, and what it said it dropped (`skipped` summed)
    firstSeq: null,
    lastSeq: null,
    seqGaps: 0,
    agentSkipped: 0,
  };
}

/** The unsigned integer written at `at` (digits), or -1. */
function uintAt(buf, at) {
  let n = -1;
  for (let i = at; i < buf.length && buf[i] >= 48 && buf[i] <= 57; i++) n = (n < 0 ? 0 : n * 10) + buf[i] - 48;
  return n;
}

const hourKey = Buffer.alloc(HOUR_LEN);
let hourMs = NaN;
const two = (buf, i) => (buf[i] - 48) * 10 + buf[i + 1] - 48;

/** Milliseconds of the ISO-8601 time at `at` ("YYYY-MM-DDTHH:MM:SS.mmmZ"); the hour part is parsed once per hour. */
function isoMsAt(buf, at) {
  if (buf.compare(hourKey, 0, HOUR_LEN, at, at + HOUR_LEN) !== 0) {
    buf.copy(hourKey, 0, at, at + HOUR_LEN);
    hourMs = Date.parse(buf.toString('latin1', at, at + HOUR_LEN) + '00:00.000Z');
  }
  return hourMs + two(buf, at + 14) * 60_000 + two(buf, at + 17) * 1000 + uintAt(buf, at + 20);
}

/** Every `say t=<ms>` echo in the frame: its latency from the moment the command was sent. */
function countMarkers(tally, r, buf, now) {
  let n = 0;
  for (let i = buf.indexOf(MARKER); i >= 0; i = buf.indexOf(MARKER, i + MARKER.length)) {
    tally.markerHist.add(now - uintAt(buf, i + MARKER.length));
    n++;
  }
  r.markers += n;
  return n;
}

/** Counts the frame; true while measuring. */
function arrived(tally, r) {
  tally.arrivals++;
  if (!tally.measuring) return false;
  r.frames++;
  return true;
}

/** A per-line frame: a spam line, a marker, or the agent's notice that it dropped lines. */
function onLineFrame(tally, r, buf) {
  if (!arrived(tally, r)) return;
  const now = Date.now();
  const si = buf.indexOf(SPAM);
  const qi = buf.lastIndexOf(SEQ_KEY);
  if (qi >= 0) {
    const seq = uintAt(buf, qi + SEQ_KEY.length);
    countSeqs(r, seq, seq, 1);
  }
  if (si >= 0) {
    const ti = buf.lastIndexOf(TS_KEY);
    if (ti >= 0) tally.hist.add(now - isoMsAt(buf, ti + TS_KEY.length));
    r.lines++;
    tally.lastArrival = now;
    if (qi < 0) countNumber(r, uintAt(buf, buf.indexOf(HASH, si + SPAM.length) + 1));
    return;
  }
  if (countMarkers(tally, r, buf, now) > 0) return;
  if (buf.indexOf(SKIPPED_FRAME) >= 0) {
    const ki = buf.indexOf(SKIPPED_KEY);
    if (ki >= 0) r.agentSkipped += Math.max(0, uintAt(buf, ki + SKIPPED_KEY.length));
    r.notices++;
    r.afterNotice = true;
  } else if (buf.indexOf(NOTICE) >= 0) {
    r.notices++;
    r.afterNotice = true;
  }
}

/** The game's number of a spam line: a gap is a line this reader skipped, unless the agent said it dropped lines. */
function countNumber(r, k) {
  if (k <= 0) return;
  if (r.first === null) r.first = k;
  if (r.afterNotice && r.last !== null && k > r.last + 1) r.floodDropped += k - r.last - 1;
  r.afterNotice = false;
  if (r.last !== null && k <= r.last) r.repeated++;
  else r.last = k;
}

/** A batch frame: each line's latency, the batch's seq range against the reader's last, `skipped`. */
function onBatchFrame(tally, r, buf) {
  if (!arrived(tally, r)) return;
  if (buf.indexOf(LINES_KEY) < 0) return onOtherFrame(r, buf); // status, stats, a console_skipped frame
  const now = Date.now();
  let n = 0;
  for (let i = buf.indexOf(TS_KEY); i >= 0; i = buf.indexOf(TS_KEY, i + 30)) {
    tally.hist.add(now - isoMsAt(buf, i + TS_KEY.length));
    n++;
  }
  r.lines += n;
  if (n > 0) tally.lastArrival = now;
  countMarkers(tally, r, buf, now);
  const ki = buf.lastIndexOf(SKIPPED_KEY);
  if (ki >= 0) r.agentSkipped += Math.max(0, uintAt(buf, ki + SKIPPED_KEY.length));
  const si = buf.indexOf(SEQ_KEY);
  if (n > 0 && si >= 0) countSeqs(r, uintAt(buf, si + SEQ_KEY.length), uintAt(buf, buf.lastIndexOf(SEQ_KEY) + SEQ_KEY.length), n);
}

/** A frame of a batch reader that holds no lines: only a `console_skipped` count matters. */
function onOtherFrame(r, buf) {
  if (buf.indexOf(SKIPPED_FRAME) < 0) return;
  const ki = buf.indexOf(SKIPPED_KEY);
  if (ki >= 0) r.agentSkipped += Math.max(0, uintAt(buf, ki + SKIPPED_KEY.length));
}

/** A batch's first and last seq: numbers missing between the reader's last line and this batch's last are gaps. */
function countSeqs(r, firstSeq, lastSeq, n) {
  if (firstSeq < 0 || lastSeq < 0) return;
  if (r.firstSeq === null) r.firstSeq = firstSeq;
  if (r.lastSeq !== null && firstSeq <= r.lastSeq) {
    r.repeated += Math.min(n, r.lastSeq - firstSeq + 1);
  } else {
    const from = r.lastSeq === null ? firstSeq : r.lastSeq + 1;
    r.seqGaps += Math.max(0, lastSeq - from + 1 - n);
  }
  if (lastSeq > (r.lastSeq ?? -1)) r.lastSeq = lastSeq;
}

module.exports = { newTally, newRecord, onLineFrame, onBatchFrame };
