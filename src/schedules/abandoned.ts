/**
 * Runs whose panel died. A run is carried out by the instance that claimed it, which marks its runs
 * under way alive every ALIVE_EVERY_MS (`aliveAt`). A run still `running` that nothing has marked for
 * ABANDONED_AFTER_MS (its panel was killed, or could not reach the database that long) is ended as
 * failed by whichever instance looks first: the task under way fails and the tasks left are skipped,
 * each saying why. The end is a compare-and-set on the mark it read, so a run its instance marks
 * meanwhile goes on, and each abandoned run is ended once.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { ScheduleRun, type RunTask } from '../entities/ScheduleRun.js';

export const ALIVE_EVERY_MS = 60_000;
export const ABANDONED_AFTER_MS = 5 * 60_000;
export const ABANDONED = 'the panel running this run stopped before it ended (nothing was heard of it for 5 minutes)';
/** Runs ended per look; the next look ends more. */
const BATCH = 100;

/** Marks the runs `runIds` (under way on this instance) alive at `now`. */
export async function markAlive(orm: MikroORM, runIds: readonly string[], now: Date): Promise<void> {
  if (!runIds.length) return;
  await orm.em.fork().nativeUpdate(ScheduleRun, { id: { $in: [...runIds] }, status: 'running' }, { aliveAt: now });
}

/** The tasks of a run that ended with its panel: the one under way failed, those not begun skipped. */
function abandonedTasks(tasks: readonly RunTask[]): RunTask[] {
  return tasks.map((t) =>
    t.status === 'running' ? { ...t, status: 'failed', error: ABANDONED } : t.status === 'pending' ? { ...t, status: 'skipped', error: ABANDONED } : t,
  );
}

/** Ends the runs abandoned at `now` (at most BATCH); resolves with how many this call ended. */
export async function endAbandoned(orm: MikroORM, now: Date): Promise<number> {
  const before = new Date(now.getTime() - ABANDONED_AFTER_MS);
  const em = orm.em.fork();
  const runs = await em.find(
    ScheduleRun,
    { status: 'running', $or: [{ aliveAt: { $lt: before } }, { aliveAt: null, startedAt: { $lt: before } }] },
    { limit: BATCH, orderBy: { startedAt: 'asc' }, fields: ['id', 'tasks', 'aliveAt'] },
  );
  let ended = 0;
  for (const run of runs) {
    const change = { status: 'failed' as const, finishedAt: now, tasks: abandonedTasks(run.tasks) };
    ended += await em.nativeUpdate(ScheduleRun, { id: run.id, status: 'running', aliveAt: run.aliveAt }, change);
  }
  return ended;
}
