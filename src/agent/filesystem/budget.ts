/**
 * How many bytes a server may still write: its disk limit less what it uses (measured at most every
 * few seconds: a measurement walks the whole tree as the start's and the running server's checks do,
 * usage.ts, leaving out only the temporary files of writes under way, which their holds count) less
 * what writes under way hold. A streamed write (an upload, an editor's save, SFTP, a
 * restore) holds what it has written so far as the limit counts it (footprint.ts: whole blocks, one
 * at least, so an empty file or a folder takes one too), charged chunk by chunk as they pass: writes
 * at once share the free space, and together they cannot take more than it. A write that replaces a
 * file it is told of (a restore's) is judged on its result: the blocks of the file it replaces are
 * freed by the replacement, so it holds only what it takes beyond them. An operation the file worker
 * does on its own (copy, compress, decompress) holds all the free space while it runs.
 */
import { footprint } from './footprint';
import { serverDiskUsage } from './usage';

const MEASURE_EVERY_MS = 5_000;

/** A streamed write's hold on the budget. */
export interface Meter {
  /** what the write may take at most, as it starts */
  allowance: number;
  /** Holds `bytes` more (the first charge, even of 0 bytes, holds the entry's block); false (and nothing held) when the free space has not got them. */
  charge(bytes: number): boolean;
  /** Ends the hold: `grown` is how much more the disk holds after the write (negative when a file shrank). */
  done(grown: number): void;
}

export class DiskBudget {
  private measured = 0;
  private measuredAt = 0;
  private held = 0;
  /** counts invalidate(): a measurement started before the last one does not count as fresh */
  private generation = 0;
  private measuring: { generation: number; usage: Promise<number> } | null = null;

  constructor(
    private readonly dir: string,
    private readonly limitBytes: () => number,
  ) {}

  private async usage(): Promise<number> {
    if (Date.now() - this.measuredAt < MEASURE_EVERY_MS) return this.measured;
    const generation = this.generation;
    // one started before the last invalidate() may not see what changed since: a new one then
    if (this.measuring?.generation !== generation) {
      const m: { generation: number; usage: Promise<number> } = { generation, usage: serverDiskUsage(this.dir, true) };
      void m.usage.finally(() => this.measuring === m && (this.measuring = null)).catch(() => undefined);
      this.measuring = m;
    }
    const measured = await this.measuring.usage;
    if (generation === this.generation) {
      this.measured = measured;
      this.measuredAt = Date.now();
    } else if (this.measuredAt === 0) this.measured = measured;
    return this.measured;
  }

  private free(): number {
    return Math.max(0, this.limitBytes() - this.measured - this.held);
  }

  /** Ends a hold of `bytes`; the disk holds `grown` bytes more than before it. */
  private release(bytes: number, grown: number): void {
    this.held -= bytes;
    this.measured = Math.max(0, this.measured + grown);
  }

  /**
   * Starts a streamed write: it holds nothing until it charges its bytes. `frees`: the disk the file it
   * replaces takes (freed when the new one takes its place); only what the write takes beyond that is held.
   */
  async meter(frees = 0): Promise<Meter> {
    await this.usage();
    let written = 0;
    let charged = 0;
    let ended = false;
    return {
      allowance: this.free() + frees,
      charge: (bytes) => {
        const need = Math.max(0, footprint(written + bytes) - frees) - charged;
        if (ended || need > this.free()) return false;
        this.held += need;
        charged += need;
        written += bytes;
        return true;
      },
      done: (grown) => {
        if (ended) return;
        ended = true;
        this.release(charged, grown);
      },
    };
  }

  /** Holds all the free space for an operation of the worker's own; `done(grown)` gives it back. */
  async reserve(): Promise<{ allowance: number; done: (grown: number) => void }> {
    await this.usage();
    const allowance = this.free();
    this.held += allowance;
    let ended = false;
    return {
      allowance,
      done: (grown) => {
        if (ended) return;
        ended = true;
        this.release(allowance, grown);
      },
    };
  }

  /** Forgets the measurement (after deletes, archives and other changes of many files). */
  invalidate(): void {
    this.generation += 1;
    this.measuredAt = 0;
  }
}
