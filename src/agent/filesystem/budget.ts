/**
 * How many bytes a server may still write: its disk limit less what it uses (measured at most every
 * few seconds: a measurement walks the whole tree) less what writes under way have reserved. Each
 * write takes the whole remaining allowance while it runs and gives back what it did not use, so two
 * uploads at once cannot both fill the same free space.
 */
import { diskUsage } from '../environment/proc';

const MEASURE_EVERY_MS = 5_000;

export class DiskBudget {
  private measured = 0;
  private measuredAt = 0;
  private reserved = 0;
  private measuring: Promise<number> | null = null;

  constructor(
    private readonly dir: string,
    private readonly limitBytes: () => number,
  ) {}

  private async usage(): Promise<number> {
    if (Date.now() - this.measuredAt < MEASURE_EVERY_MS) return this.measured;
    this.measuring ??= diskUsage(this.dir).finally(() => (this.measuring = null));
    this.measured = await this.measuring;
    this.measuredAt = Date.now();
    return this.measured;
  }

  /**
   * Reserves what is left; `done(grown)` records how much more the disk holds after the write (the
   * bytes written less those of a file it replaced: negative when a file shrank) and frees the rest.
   */
  async reserve(): Promise<{ allowance: number; done: (written: number) => void }> {
    const left = Math.max(0, this.limitBytes() - (await this.usage()) - this.reserved);
    this.reserved += left;
    let released = false;
    return {
      allowance: left,
      done: (grown) => {
        if (released) return;
        released = true;
        this.reserved -= left;
        this.measured = Math.max(0, this.measured + grown);
      },
    };
  }

  /** Forgets the measurement (after deletes, archives and other changes of many files). */
  invalidate(): void {
    this.measuredAt = 0;
  }
}
