'use strict';
/**
 * The clock of console scenario 3, shared by the load driver (which makes the demo game print) and
 * the bare ws baseline (which prints itself), so that both are driven the same way: `onTick(perTick)`
 * every `tickMs` (perTick lines per tick make `rate` lines/s) and `onMarker(now)` `markersPerSec` times
 * a second, for at most `seconds`. Bounded in time: when the sender cannot keep up, fewer ticks happen
 * (and late ones are counted).
 */
function runTicks({ rate, seconds, tickMs, markersPerSec }, { onTick, onMarker }) {
  return new Promise((resolve) => {
    const perTick = Math.max(1, Math.round((rate * tickMs) / 1000));
    const ticks = Math.round((seconds * 1000) / tickMs);
    const t0 = Date.now();
    let sent = 0;
    let markers = 0;
    let late = 0;
    const markerEvery = markersPerSec > 0 ? 1000 / markersPerSec : Infinity;
    let nextMarker = t0 + markerEvery / 2;
    const tick = () => {
      const now = Date.now();
      if (now >= nextMarker) {
        onMarker(now);
        markers++;
        nextMarker += markerEvery;
      }
      const due = t0 + sent * tickMs;
      if (now >= due) {
        if (now - due > tickMs) late++;
        onTick(perTick);
        sent++;
      }
      if (sent >= ticks || Date.now() - t0 >= seconds * 1000) {
        return resolve({ lines: sent * perTick, perTick, markers, ticks: sent, lateTicks: late, elapsedMs: Date.now() - t0 });
      }
      setTimeout(tick, Math.max(0, Math.min(t0 + sent * tickMs, nextMarker) - Date.now()));
    };
    tick();
  });
}

module.exports = { runTicks };
