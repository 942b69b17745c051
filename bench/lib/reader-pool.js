'use strict';
/**
 * Scenario 3's readers spread over several processes (bench/children/console-readers.js), asked
 * together: open, measure on/off, progress (summed), report (merged), close.
 */
const path = require('node:path');
const { startChild, ask, stopChild, procCpuMs, Histogram } = require('./util');

const SCRIPT = path.join(__dirname, '..', 'children', 'console-readers.js');

class ReaderPool {
  constructor(children) {
    this.children = children;
    this.pids = children.map((c) => c.pid);
  }

  static async start(processes) {
    const started = Array.from({ length: processes }, () => startChild(SCRIPT));
    const ready = await Promise.all(started.map((s) => s.ready));
    return new ReaderPool(started.map((s, i) => ({ child: s.child, pid: ready[i].pid })));
  }

  askAll(msg, timeoutMs = 30_000) {
    return Promise.all(this.children.map((c, i) => ask(c.child, typeof msg === 'function' ? msg(i) : msg, timeoutMs)));
  }

  /** Opens the readers, dealt round-robin; resolves { failure, notAvailable } when one could not subscribe. */
  async open(specs) {
    const shares = this.children.map(() => []);
    specs.forEach((s, i) => shares[i % shares.length].push(s));
    const replies = await this.askAll((i) => ({ type: 'open', specs: shares[i] }), 180_000);
    const failed = replies.find((r) => r.failure);
    return failed ? { failure: failed.failure, notAvailable: Boolean(replies.find((r) => r.notAvailable)) } : { failure: null };
  }

  measure(on) {
    return this.askAll({ type: 'measure', on });
  }

  async progress() {
    const all = await this.askAll({ type: 'progress' });
    const live = all.map((p) => p.minLiveLines).filter((x) => x !== null);
    return {
      arrivals: all.reduce((a, p) => a + p.arrivals, 0),
      lines: all.reduce((a, p) => a + p.lines, 0),
      minLiveLines: live.length ? Math.min(...live) : null,
      lastArrival: Math.max(...all.map((p) => p.lastArrival)),
    };
  }

  /** The readers' records and their latency histograms, merged over the processes. */
  async report() {
    const all = await this.askAll({ type: 'report' }, 60_000);
    const hist = new Histogram();
    const markerHist = new Histogram();
    for (const rep of all) {
      hist.addSparse(rep.hist);
      markerHist.addSparse(rep.markerHist);
    }
    return { hist, markerHist, readers: all.flatMap((rep) => rep.readers) };
  }

  closeReaders() {
    return this.askAll({ type: 'close_readers' });
  }

  cpuMs() {
    return this.pids.reduce((a, pid) => a + (procCpuMs(pid) ?? 0), 0);
  }

  stop() {
    return Promise.all(this.children.map((c) => stopChild(c.child, 5000)));
  }
}

module.exports = { ReaderPool };
