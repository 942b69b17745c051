/**
 * Work that must not hold the event loop: a console's lines on their way to its readers. Each turn of
 * the event loop spends at most SLICE_MS on it; what is left waits for the next turn (setImmediate),
 * so that timers, other sockets and the process's pipe get their turn in between and the pipe is
 * read however many readers there are. When the hand-out itself is what falls behind (a turn's slice
 * ran out with items left while each item goes to WIDE_FANOUT or more readers one by one), an item
 * that has waited longer than `maxWaitMs` is dropped (counted to `onDrop`) unless it is marked to
 * keep: when the readers cost more than the output leaves time for, lines are dropped and counted
 * instead of piling up in memory and arriving late. A narrow hand-out (a batcher, a few readers)
 * drops nothing: when it falls behind, the machine is busy with other work, and dropping would save
 * next to nothing. The width is counted, not timed, so that a loaded machine never makes a cheap
 * hand-out look costly.
 *
 * With the fan-out keeping up, an item is handled at once, in the caller's turn.
 */
import { setImmediate } from 'node:timers';

/** Time one turn of the event loop spends handling items. */
export const SLICE_MS = 10;
/** A hand-out to this many readers one by one (or more) drops late items when it falls behind. */
export const WIDE_FANOUT = 16;

interface Waiting<T> {
  item: T;
  at: number;
  keep: boolean;
}

export class PacedQueue<T> {
  private waiting: Waiting<T>[] = [];
  private head = 0;
  private turnStart = 0;
  private turnOpen = false;
  private drainScheduled = false;
  /** The last slice ran out with items left: the hand-out is slower than what comes. */
  private behind = false;

  /**
   * @param width how many readers an item goes to one by one now (a batcher that takes it for many
   *   counts as one)
   */
  constructor(
    private readonly handle: (item: T) => void,
    private readonly maxWaitMs: number,
    private readonly onDrop: (count: number) => void,
    private readonly width: () => number,
  ) {}

  /** How many items wait. */
  get length(): number {
    return this.waiting.length - this.head;
  }

  /** Handles `item` now when nothing waits and this turn has time left, else queues it. */
  push(item: T, keep = false): void {
    if (this.length === 0 && this.inSlice()) return this.handle(item);
    this.waiting.push({ item, at: Date.now(), keep });
    this.scheduleDrain();
  }

  /** Whether this turn has spent less than SLICE_MS on handling (a turn starts at its first call). */
  private inSlice(): boolean {
    const now = performance.now();
    if (!this.turnOpen) {
      this.turnOpen = true;
      this.turnStart = now;
      setImmediate(() => (this.turnOpen = false));
    }
    return now - this.turnStart < SLICE_MS;
  }

  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    setImmediate(() => this.drain());
  }

  private drain(): void {
    this.drainScheduled = false;
    const start = performance.now();
    const tooOld = this.behind && this.width() >= WIDE_FANOUT ? Date.now() - this.maxWaitMs : -Infinity;
    let dropped = 0;
    while (this.head < this.waiting.length) {
      const w = this.waiting[this.head]!;
      if (!w.keep && w.at < tooOld) {
        this.head++;
        dropped++;
        continue;
      }
      if (performance.now() - start >= SLICE_MS) break;
      this.head++;
      this.handle(w.item);
    }
    if (this.head === this.waiting.length) {
      this.waiting = [];
      this.head = 0;
    } else if (this.head > 1024) {
      this.waiting = this.waiting.slice(this.head);
      this.head = 0;
    }
    this.behind = this.length > 0;
    if (dropped) this.onDrop(dropped);
    if (this.length) this.scheduleDrain();
  }
}
