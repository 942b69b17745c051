/**
 * A server's output budget (CONSOLE_MAX_LINES_PER_SECOND): which lines pass, how many were dropped,
 * and when the console says so.
 */

/**
 * Token bucket: holds one second's worth of lines and refills continuously, so a burst of up to
 * `perSecond` lines passes whole and a steady flood passes at `perSecond` lines a second.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly perSecond: number,
    now = Date.now(),
  ) {
    this.tokens = perSecond;
    this.last = now;
  }

  /** Whether one more line fits now (and takes its token). */
  take(now = Date.now()): boolean {
    if (now > this.last) {
      this.tokens = Math.min(this.perSecond, this.tokens + ((now - this.last) * this.perSecond) / 1000);
      this.last = now;
    }
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** Time without a dropped line after which a flood episode is over. */
const EPISODE_GAP_MS = 1000;
/** Least time between two flood notices. */
const NOTICE_EVERY_MS = 10_000;

/** Decides when a dropped line earns the console's notice: once per flood episode, at most every 10 s. */
export class FloodNotices {
  private lastDrop = -Infinity;
  private lastNotice = -Infinity;

  /** Records a dropped line; true when the console should say that lines are being dropped. */
  dropped(now = Date.now()): boolean {
    const newEpisode = now - this.lastDrop >= EPISODE_GAP_MS;
    this.lastDrop = now;
    if (!newEpisode || now - this.lastNotice < NOTICE_EVERY_MS) return false;
    this.lastNotice = now;
    return true;
  }
}

/** How many lines were dropped since the previous report, with when it was made. */
export interface SkipReport {
  skipped: number;
  ts: string; // ISO time
}

/** Least time between two skip reports of one server. */
export const SKIP_REPORT_EVERY_MS = 50;

/**
 * Counts dropped lines and reports the count at most every 50 ms, only when lines were dropped:
 * one timer while a flood lasts, none when the output fits.
 */
export class SkipCounter {
  private pending = 0;
  private lastReport = -Infinity;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly report: (r: SkipReport) => void) {}

  add(count = 1): void {
    this.pending += count;
    if (this.timer) return;
    const wait = Math.max(0, this.lastReport + SKIP_REPORT_EVERY_MS - Date.now());
    this.timer = setTimeout(() => this.flush(), wait);
    this.timer.unref();
  }

  private flush(): void {
    this.timer = null;
    this.lastReport = Date.now();
    const skipped = this.pending;
    this.pending = 0;
    if (skipped > 0) this.report({ skipped, ts: new Date(this.lastReport).toISOString() });
  }
}
