/**
 * Failed signatures per client address, in a sliding minute: past `limit`, the address's requests
 * are refused before their body is read. Bounded: at most `maxAddresses` addresses are tracked (the
 * oldest are forgotten first).
 */
export class FailureCounter {
  private readonly seen = new Map<string, number[]>();

  constructor(
    private readonly limit = 20,
    private readonly windowMs = 60_000,
    private readonly maxAddresses = 10_000,
  ) {}

  private recent(address: string, now: number): number[] {
    const times = (this.seen.get(address) ?? []).filter((t) => now - t < this.windowMs);
    if (times.length) this.seen.set(address, times);
    else this.seen.delete(address);
    return times;
  }

  /** Seconds until the address's requests are taken again (the oldest counted failure leaves the window); 0: now. */
  refusedFor(address: string): number {
    const now = Date.now();
    const times = this.recent(address, now);
    if (times.length < this.limit) return 0;
    return Math.max(1, Math.ceil((times[times.length - this.limit]! + this.windowMs - now) / 1000));
  }

  failed(address: string): void {
    const now = Date.now();
    const times = this.recent(address, now);
    times.push(now);
    this.seen.delete(address);
    this.seen.set(address, times.slice(-this.limit));
    if (this.seen.size > this.maxAddresses) this.seen.delete(this.seen.keys().next().value!);
  }
}
