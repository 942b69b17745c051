/**
 * How much unsent data the live sockets of one endpoint may hold, together. Each socket may hold its
 * own limit (`perSocket`), but no more than an equal share of `total`: 500 console viewers of 4 MiB
 * each would otherwise be 2 GiB of the process's memory when they all fall behind at once. A socket
 * over its allowance is a client too slow, and its endpoint closes it (the client may reconnect).
 */
export class SendBudget {
  private open = 0;

  constructor(
    readonly perSocket: number,
    readonly total: number,
    /** no share is smaller than this (a few frames), however many sockets are open */
    readonly floor = 64 * 1024,
  ) {}

  opened(): void {
    this.open++;
  }

  closed(): void {
    this.open = Math.max(0, this.open - 1);
  }

  /** What one socket may hold unsent now. */
  allowance(): number {
    return Math.min(this.perSocket, Math.max(this.floor, Math.floor(this.total / Math.max(1, this.open))));
  }

  /** Whether a socket holding `buffered` unsent bytes is over its allowance. */
  over(buffered: number): boolean {
    return buffered > this.perSocket || (buffered > this.floor && buffered > this.allowance());
  }
}
