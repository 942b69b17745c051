'use strict';
/**
 * The panel's RSS over the whole bench: sampled from /proc every 200 ms, each sample under the label
 * of what ran then (`mark`), so that the peak says where it happened.
 */
const { rssMiB } = require('./util');

const EVERY_MS = 200;

function trackRss(pid, t0 = Date.now()) {
  let where = 'startup';
  let peak = { rssMiB: 0, where, atS: 0 };
  const peaks = new Map();
  const timer = setInterval(() => {
    const rss = rssMiB(pid);
    if (rss === null) return;
    if (rss > peak.rssMiB) peak = { rssMiB: rss, where, atS: Math.round((Date.now() - t0) / 100) / 10 };
    if (rss > (peaks.get(where) ?? 0)) peaks.set(where, rss);
  }, EVERY_MS);
  timer.unref();
  return {
    mark(label) {
      where = label;
    },
    /** The peak, where it happened (seconds into the run), and the peak of each labelled stretch. */
    stop() {
      clearInterval(timer);
      return { everyMs: EVERY_MS, peakMiB: peak.rssMiB, where: peak.where, atS: peak.atS, peakByStretch: Object.fromEntries(peaks) };
    },
  };
}

module.exports = { trackRss };
