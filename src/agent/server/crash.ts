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

  /** When the last crash was (epoch ms), to be kept across the agent's restarts (state.json). */
  get lastCrash(): number | null {
    return this.lastCrashAt;
  }

  /** Takes the last crash's time from before the agent's restart: a crash soon after it is still a loop. */
  remember(at: number | null): void {
    this.lastCrashAt = at;
  }

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
