/**
 * Automatic restart after a crash, unless the server crashes again within `loopWindowMs` of the
 * previous crash (a crash loop is left offline).
 */
export class CrashGuard {
  private lastCrashAt: number | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly loopWindowMs: number,
    private readonly restartDelayMs: number,
  ) {}

  /** Records a crash; 'loop' when the previous one was within the window. */
  crashed(): 'restart' | 'loop' {
    const now = Date.now();
    const loop = this.lastCrashAt !== null && now - this.lastCrashAt < this.loopWindowMs;
    this.lastCrashAt = now;
    return loop ? 'loop' : 'restart';
  }

  /** Runs `restart` after the restart delay (unless cancelled meanwhile). */
  schedule(restart: () => void): void {
    this.cancel();
    this.timer = setTimeout(() => {
      this.timer = null;
      restart();
    }, this.restartDelayMs);
  }

  /** Cancels the restart; whether one was waiting. */
  cancel(): boolean {
    const waiting = this.timer !== null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    return waiting;
  }
}
