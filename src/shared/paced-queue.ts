/**
 * Work that must not hold the event loop: a console's lines on their way to its readers. Each turn of
 * the event loop spends at most SLICE_MS on it; what is left waits for the next turn (setImmediate),
 * so that timers, other sockets and the process's pipe get their turn in between and the pipe is
 * read however many readers there are. When the hand-out itself is what falls behind (a turn's slice
 * ran out with items left, at more than COSTLY_ITEM_MS an item: about a hundred per-line readers), an
 * item that has waited longer than `maxWaitMs` is dropped (counted to `onDrop`) unless it is marked to
 * keep: when the readers cost more than the output leaves time for, lines are dropped and counted
 * instead of piling up in memory and arriving late. Cheap items that waited only because the machine
 * was busy with other work are all handed out: dropping them would save nothing.
 *
 * With the fan-out keeping up, an item is handled at once, in the caller's turn.
 */
import { setImmediate } from 'node:timers';

/** Time one turn of the event loop spends handling items. */
export const SLICE_MS = 10;
/** An item that costs more than this to hand out makes a hand-out that falls behind drop late items. */
export const COSTLY_ITEM_MS = 0.1;

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
  /** The last slice ran out with items left, at more than COSTLY_ITEM_MS an item: the hand-out is slower than what comes. */
  private behind = false;

  constructor(
    private readonly handle: (item: T) => void,
    private readonly maxWaitMs: number,
    private readonly onDrop: (count: number) => void,
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
    const cpuStart = process.cpuUsage();
    const tooOld = this.behind ? Date.now() - this.maxWaitMs : -Infinity;
    let dropped = 0;
    let handled = 0;
    while (this.head < this.waiting.length) {
      const w = this.waiting[this.head]!;
      if (!w.keep && w.at < tooOld) {
        this.head++;
        dropped++;
        continue;
      }
      if (performance.now() - start >= SLICE_MS) break;
      this.head++;
      handled++;
      this.handle(w.item);
    }
    // CPU time, not wall time: a process that the machine's other work keeps waiting is not costly
    const cpu = process.cpuUsage(cpuStart);
    const costly = handled > 0 && (cpu.user + cpu.system) / 1000 / handled > COSTLY_ITEM_MS;
    if (this.head === this.waiting.length) {
      this.waiting = [];
      this.head = 0;
    } else if (this.head > 1024) {
      this.waiting = this.waiting.slice(this.head);
      this.head = 0;
    }
    this.behind = this.length > 0 && costly;
    if (dropped) this.onDrop(dropped);
    if (this.length) this.scheduleDrain();
  }
}
