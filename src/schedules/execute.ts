/**
 * Runs the tasks of one claimed run in order: waits each task's `offsetSeconds`, performs it, and
 * writes the run's progress after every step. A failing task (node offline, server deleted, …) is
 * recorded as failed with its error; unless it has `continueOnFailure` the tasks after it are
 * skipped. The run ends `failed` when a task failed, else `completed`; `skipped` when the schedule
 * is `onlyWhenOnline` and the server is not running. Before each task (after its wait) the run
 * stops when its schedule was deleted: the tasks left are skipped and, as for a run whose server
 * was deleted, nothing more is written (its record went with the schedule). A schedule merely
 * disabled or edited meanwhile does not stop the run: it goes on with the tasks it started with.
 * Every write changes the run only while it is `running`: a run ended elsewhere meanwhile (as
 * abandoned, src/schedules/abandoned.ts) is final, so the first write that finds it ended stops the
 * run with RunEnded: the task it was to start is not performed and nothing more is written.
 */
import { RequestContext } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Schedule, type ScheduleTask } from '../entities/Schedule.js';
import { ScheduleRun, type RunStatus, type RunTask } from '../entities/ScheduleRun.js';
import { Server } from '../entities/Server.js';
import { AppError } from '../errors.js';
import type { ActedBy } from '../services/power.service.js';
import { SERVER_DELETED, type PerformTask } from './tasks.js';

export const NOT_RUNNING = 'the server was not running (the schedule runs only when it is online)';
export const EARLIER_FAILED = 'an earlier task failed';
export const PANEL_STOPPED = 'the panel stopped before this task ran';
export const PANEL_STOPPED_WAITING = 'the panel stopped while this task waited for what it started (which goes on)';
export const SCHEDULE_DELETED = 'the schedule was deleted';

export interface ExecuteDeps {
  orm: MikroORM;
  perform: PerformTask;
  now: () => Date;
  /** Waits `ms`; rejects with RunnerStopped when the runner stops (the tasks left are then skipped). */
  sleep: (ms: number) => Promise<void>;
  /** Whether the runner is stopping: no task starts any more. */
  stopped: () => boolean;
}

/** How a wait of a stopping runner ends. */
export class RunnerStopped extends Error {
  constructor() {
    super('the schedule runner stopped');
  }
}

/** How a run stops that another instance ended meanwhile (its row is no longer `running`). */
export class RunEnded extends Error {
  constructor(readonly runId: string) {
    super('the schedule run was ended elsewhere meanwhile (as abandoned): it stops, nothing more is performed or written');
  }
}

export interface ClaimedRun {
  runId: string;
  scheduleId: string;
  serverId: string;
  tasks: ScheduleTask[];
  onlyWhenOnline: boolean;
  by: ActedBy;
  /** the schedule's IANA time zone, the clock of the names its tasks give (a backup's) */
  timezone: string;
}

export async function executeRun(deps: ExecuteDeps, run: ClaimedRun): Promise<RunStatus> {
  const state: RunTask[] = run.tasks.map((t) => ({ sequence: t.sequence, status: 'pending', error: null }));
  const gate = run.onlyWhenOnline ? await onlineProblem(deps.orm, run.serverId) : null;
  if (gate) {
    for (const t of state) Object.assign(t, { status: 'skipped', error: gate });
    return finish(deps, run.runId, state, gate === NOT_RUNNING ? 'skipped' : 'failed');
  }
  for (const [i, task] of run.tasks.entries()) {
    const stop = (await waited(deps, task)) ? await scheduleProblem(deps.orm, run.scheduleId) : PANEL_STOPPED;
    if (stop) {
      for (const t of state.slice(i)) Object.assign(t, { status: 'skipped', error: stop });
      break;
    }
    const outcome = await performOne(deps, run, task, state, i);
    if (outcome === 'stopped' || (outcome === 'failed' && !task.continueOnFailure)) {
      const error = outcome === 'stopped' ? PANEL_STOPPED : EARLIER_FAILED;
      for (const t of state.slice(i + 1)) Object.assign(t, { status: 'skipped', error });
      break;
    }
  }
  return finish(deps, run.runId, state, state.some((t) => t.status === 'failed') ? 'failed' : 'completed');
}

/** Runs one task; a task whose wait the runner's stop cut short is skipped. */
async function performOne(deps: ExecuteDeps, run: ClaimedRun, task: ScheduleTask, all: RunTask[], i: number): Promise<'completed' | 'failed' | 'stopped'> {
  const state = all[i]!;
  state.status = 'running';
  await save(deps.orm, run.runId, { tasks: all });
  try {
    await RequestContext.create(deps.orm.em, () => deps.perform(run.serverId, task, run.by, deps.sleep, run.timezone));
    Object.assign(state, { status: 'completed', error: null });
    return 'completed';
  } catch (err) {
    if (err instanceof RunnerStopped) {
      Object.assign(state, { status: 'skipped', error: PANEL_STOPPED_WAITING });
      return 'stopped';
    }
    Object.assign(state, { status: 'failed', error: describe(err) });
    return 'failed';
  }
}

/** Whether the task may start: its offset has passed and the runner is not stopping. */
async function waited(deps: ExecuteDeps, task: ScheduleTask): Promise<boolean> {
  if (deps.stopped()) return false;
  if (task.offsetSeconds === 0) return true;
  return deps.sleep(task.offsetSeconds * 1000).then(
    () => true,
    () => false,
  );
}

/** Whether the run's schedule was deleted (with its runs) meanwhile. */
async function scheduleProblem(orm: MikroORM, scheduleId: string): Promise<string | null> {
  return (await orm.em.fork().count(Schedule, { id: scheduleId })) ? null : SCHEDULE_DELETED;
}

async function onlineProblem(orm: MikroORM, serverId: string): Promise<string | null> {
  const server = await orm.em.fork().findOne(Server, { id: serverId }, { fields: ['status'] });
  if (!server) return SERVER_DELETED;
  return server.status === 'running' ? null : NOT_RUNNING;
}

async function finish(deps: ExecuteDeps, runId: string, tasks: RunTask[], status: RunStatus): Promise<RunStatus> {
  await save(deps.orm, runId, { tasks, status, finishedAt: deps.now() });
  return status;
}

/**
 * Writes the run's progress, only while it is `running`. A run removed meanwhile (by RUNS_KEPT, with its
 * schedule or server) changes nothing and goes on; a run still there but ended elsewhere rejects with
 * RunEnded.
 */
async function save(orm: MikroORM, runId: string, change: Partial<Pick<ScheduleRun, 'tasks' | 'status' | 'finishedAt'>>): Promise<void> {
  const data = Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined));
  if (!Object.keys(data).length) return;
  const em = orm.em.fork();
  if (await em.nativeUpdate(ScheduleRun, { id: runId, status: 'running' }, data)) return;
  if (await em.count(ScheduleRun, { id: runId })) throw new RunEnded(runId);
}

function describe(err: unknown): string {
  if (err instanceof AppError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
