/**
 * Claiming runs in the shared database. A due schedule is claimed by moving its `next_run_at`
 * forward with a compare-and-set (`UPDATE … WHERE id = $1 AND next_run_at = $2`): of several panel
 * instances ticking at once, exactly one sees its update change the row, and only that one records
 * and starts the run (in the same transaction). A run due more than MISSED_AFTER_MS ago (everything
 * was down) is recorded as `skipped` and not replayed; the next run is then the first one after
 * now − MISSED_AFTER_MS, so a run still within the window is claimed on the next tick.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { Schedule, type ScheduleTask } from '../entities/Schedule.js';
import { ScheduleRun, type RunStatus, type RunTask, type RunTrigger } from '../entities/ScheduleRun.js';
import type { ActivityRecorder } from '../services/activity.service.js';
import type { Actor } from '../services/actor.js';
import { nextRun } from './cron.js';

export const MISSED_AFTER_MS = 60_000;
const DUE_BATCH = 50;

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
  const next = nextRun(s.cron, s.timezone, missed ? new Date(now.getTime() - MISSED_AFTER_MS) : s.nextRunAt);
  return orm.em.fork().transactional(async (em) => {
    const changed = await em.nativeUpdate(Schedule, { id: s.id, nextRunAt: s.nextRunAt, enabled: true }, { nextRunAt: next, ...(missed ? {} : { lastRunAt: now }) });
    if (changed !== 1) return null;
    const schedule = await em.findOneOrFail(Schedule, { id: s.id });
    const run = missed
      ? newRun(em, schedule, 'cron', 'skipped', now, runTasks(schedule.tasks, 'skipped', `missed: due at ${s.nextRunAt.toISOString()}, the panel was not running then`))
      : newRun(em, schedule, 'cron', 'running', now, runTasks(schedule.tasks, 'pending'));
    await recordRun(activity, em, schedule, run, null, { dueAt: s.nextRunAt.toISOString() });
    return run;
  });
}

/** Records a run started by hand (whether the schedule is enabled or not). */
export async function startManualRun(orm: MikroORM, activity: ActivityRecorder, scheduleId: string, actor: Actor, now: Date): Promise<ScheduleRun> {
  return orm.em.fork().transactional(async (em) => {
    const schedule = await em.findOneOrFail(Schedule, { id: scheduleId });
    schedule.lastRunAt = now;
    const run = newRun(em, schedule, 'manual', 'running', now, runTasks(schedule.tasks, 'pending'));
    await recordRun(activity, em, schedule, run, actor);
    return run;
  });
}

function newRun(em: EntityManager, schedule: Schedule, trigger: RunTrigger, status: RunStatus, now: Date, tasks: RunTask[]): ScheduleRun {
  return em.create(ScheduleRun, { schedule, trigger, status, tasks, startedAt: now, finishedAt: status === 'running' ? null : now });
}

function recordRun(activity: ActivityRecorder, em: EntityManager, schedule: Schedule, run: ScheduleRun, actor: Actor | null, extra: Record<string, unknown> = {}): Promise<void> {
  const properties = { scheduleId: schedule.id, name: schedule.name, runId: run.id, trigger: run.trigger, status: run.status, ...extra };
  return activity.record({ event: 'server:schedule.run', serverId: schedule.server.id, actor, properties }, em);
}
