/**
 * What a server's files take on disk as its disk limit counts them, the one rule of the three places
 * that measure it: the check before a start (server.ts), the check while it runs (monitor.ts) and the
 * file manager's budget (budget.ts). Every entry below the server's directory counts, its blocks and
 * one block at least (environment/proc.ts diskUsage), the temporary files of writes too: they take
 * the disk. A temporary file that no write owns any more (the worker or the agent was killed in the
 * middle of one) is removed before anything is measured: each measurement first waits for the
 * server's file worker to have swept its directory (FileWorkers.sweep, Jail.sweepTemps).
 *
 * The budget leaves the temporary files out of its measurement and counts them through the writes
 * that make them instead: each write under way holds what it has written so far (budget.ts), and
 * its file counted twice would refuse the writes that fit. After the sweep, every temporary file is a
 * write's under way (only the file worker makes them, and the file manager refuses their names), so
 * the budget counts what the other two count.
 */
import { diskUsage } from '../environment/proc';
import { isTempName } from './paths';

/** Per server directory: what removes the temporary files interrupted writes left there (see ServerManager). */
const sweepers = new Map<string, () => Promise<void>>();

/** Sets (or with null, forgets) what sweeps the server directory `dir` before it is measured. */
export function sweepBeforeMeasuring(dir: string, sweep: (() => Promise<void>) | null): void {
  if (sweep) sweepers.set(dir, sweep);
  else sweepers.delete(dir);
}

/**
 * The disk the server directory `dir` takes, in bytes, once what interrupted writes left there is gone.
 * `writesHeld`: the temporary files of writes under way are left out (the budget counts them through
 * the writes' holds).
 */
export async function serverDiskUsage(dir: string, writesHeld = false): Promise<number> {
  // a sweep that fails is logged where it fails; the measurement counts what is there
  await sweepers.get(dir)?.().catch(() => undefined);
  return diskUsage(dir, writesHeld ? isTempName : undefined);
}
