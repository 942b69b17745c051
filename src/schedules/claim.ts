/**
 * Claiming runs in the shared database. A due schedule is claimed by moving its `next_run_at`
 * forward with a compare-and-set (`UPDATE … WHERE id = $1 AND next_run_at = $2`): of several panel
 * instances ticking at once, exactly one sees its update change the row, and only that one records
 * and starts the run (in the same transaction). A run due more than MISSED_AFTER_MS ago (the panel
 * was down or fell behind) is recorded as `skipped` and not replayed; the next run is then the first
 * one after now − MISSED_AFTER_MS, so a run still within the window is claimed next. A schedule
 * whose next run cannot be computed (a stored cron or time zone that no longer reads) is disabled
 * with a `failed` run saying why. Recording a run deletes the schedule's runs beyond the RUNS_KEPT
 * newest.
 */
import type { EntityData, EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { Schedule, type ScheduleTask } from '../entities/Schedule.js';
import { ScheduleRun, type RunStatus, type RunTask, type RunTrigger } from '../entities/ScheduleRun.js';
import { childLogger } from '../logger.js';
import type { ActivityRecorder } from '../services/activity.service.js';
import type { Actor } from '../services/actor.js';
import { nextRun, unreadablePart } from './cron.js';

const log = childLogger('schedules');

export const MISSED_AFTER_MS = 60_000;
/** Due schedules read at once; a tick reads batch after batch (src/schedules/runner.ts). */
export const DUE_BATCH = 50;
/** Runs kept per schedule: the older ones are deleted when a run is recorded. */
export const RUNS_KEPT = 100;

export interface DueSchedule {
  id: string;
  serverId: string;
  name: string;
  cron: string;
  timezone: string;
  nextRunAt: Date;
}

/** Enabled schedules due at `now`, oldest due first (unlocked: claim() settles who runs them). */
export async function dueSchedules(orm: MikroORM, now: Date): Promise<DueSchedule[]> {
  const rows = await orm.em.fork().find(Schedule, { enabled: true, nextRunAt: { $lte: now } }, { orderBy: { nextRunAt: 'asc' }, limit: DUE_BATCH });
  return rows.map((s) => ({ id: s.id, serverId: s.server.id, name: s.name, cron: s.cron, timezone: s.timezone, nextRunAt: s.nextRunAt! }));
}

export const runTasks = (tasks: ScheduleTask[], status: RunTask['status'], error: string | null = null): RunTask[] =>
  tasks.map((t) => ({ sequence: t.sequence, status, error }));

/** Claims one due run; null when another instance (or a change of the schedule) got there first. */
export async function claim(orm: MikroORM, activity: ActivityRecorder, s: DueSchedule, now: Date): Promise<ScheduleRun | null> {
  const missed = now.getTime() - s.nextRunAt.getTime() > MISSED_AFTER_MS;
  let next: Date | null;
  try {
    next = nextRun(s.cron, s.timezone, missed ? new Date(now.getTime() - MISSED_AFTER_MS) : s.nextRunAt);
  } catch (err) {
    const reason = unreadable(s, err as Error);
    log.warn({ scheduleId: s.id, reason }, 'the next run of a due schedule cannot be computed; disabling it');
    return moveOn(orm, activity, s, now, { enabled: false, nextRunAt: null }, 'failed', reason);
  }
  if (missed) return moveOn(orm, activity, s, now, { nextRunAt: next }, 'skipped', missedReason(s.nextRunAt));
  return moveOn(orm, activity, s, now, { nextRunAt: next, lastRunAt: now }, 'running', null);
}

const missedReason = (dueAt: Date): string =>
  `missed: due at ${dueAt.toISOString()}, more than ${MISSED_AFTER_MS / 1000} s before the panel could run it`;

function unreadable(s: DueSchedule, err: Error): string {
  const what = unreadablePart(s.timezone) === 'timezone' ? 'time zone' : 'cron expression';
  return `the schedule's ${what} no longer reads (${err.message}); the schedule is disabled until its cron and time zone are set again`;
}

/**
 * Moves the due schedule on (`change`) with a compare-and-set and, when this instance did, records
 * its cron run: `running` with its tasks pending, or else with each task skipped for `reason`.
 */
async function moveOn(orm: MikroORM, activity: ActivityRecorder, s: DueSchedule, now: Date, change: EntityData<Schedule>, status: RunStatus, reason: string | null): Promise<ScheduleRun | null> {
  return orm.em.fork().transactional(async (em) => {
    const changed = await em.nativeUpdate(Schedule, { id: s.id, nextRunAt: s.nextRunAt, enabled: true }, change);
    if (changed !== 1) return null;
    const schedule = await em.findOneOrFail(Schedule, { id: s.id });
    const tasks = status === 'running' ? runTasks(schedule.tasks, 'pending') : runTasks(schedule.tasks, 'skipped', reason);
    const run = await newRun(em, schedule, 'cron', status, now, tasks);
    await recordRun(activity, em, schedule, run, null, { dueAt: s.nextRunAt.toISOString() });
    return run;
  });
}

/**
 * Records a run started by hand (whether the schedule is enabled or not) of the schedule `pick`
 * returns. `pick` reads it with its row locked and checks that the caller may run its tasks, so the
 * tasks checked are the tasks run: a change made meanwhile waits for this transaction.
 */
export async function startManualRun(orm: MikroORM, activity: ActivityRecorder, pick: (em: EntityManager) => Promise<Schedule>, actor: Actor, now: Date): Promise<ScheduleRun> {
  return orm.em.fork().transactional(async (em) => {
    const schedule = await pick(em);
    schedule.lastRunAt = now;
    const run = await newRun(em, schedule, 'manual', 'running', now, runTasks(schedule.tasks, 'pending'));
    await recordRun(activity, em, schedule, run, actor);
    return run;
  });
}

/** A new run of the schedule; its runs beyond the RUNS_KEPT newest (this one counted) are deleted. */
async function newRun(em: EntityManager, schedule: Schedule, trigger: RunTrigger, status: RunStatus, now: Date, tasks: RunTask[]): Promise<ScheduleRun> {
  await em.execute(
    'delete from "schedule_runs" where "id" in (select "id" from "schedule_runs" where "schedule_id" = ? order by "started_at" desc, "id" desc offset ?)',
    [schedule.id, RUNS_KEPT - 1],
  );
  return em.create(ScheduleRun, { schedule, trigger, status, tasks, startedAt: now, finishedAt: status === 'running' ? null : now });
}

function recordRun(activity: ActivityRecorder, em: EntityManager, schedule: Schedule, run: ScheduleRun, actor: Actor | null, extra: Record<string, unknown> = {}): Promise<void> {
  const properties = { scheduleId: schedule.id, name: schedule.name, runId: run.id, trigger: run.trigger, status: run.status, ...extra };
  return activity.record({ event: 'server:schedule.run', serverId: schedule.server.id, actor, properties }, em);
}
