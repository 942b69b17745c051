/**
 * A server's schedules: cron expressions in a time zone and the tasks they run, with the history of
 * their runs. Keys: schedule.read (list, get, runs), schedule.create, schedule.update (also run now),
 * schedule.delete; each task also needs the key of its action, checked on the tasks stored (a change
 * and a run now read the schedule with its row locked). A server holds at most MAX_SCHEDULES
 * schedules. The runs themselves are the runner's (src/schedules/runner.ts).
 */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { Schedule, type ScheduleTask } from '../entities/Schedule.js';
import { ScheduleRun, type RunTask } from '../entities/ScheduleRun.js';
import { Server } from '../entities/Server.js';
import { AppError } from '../errors.js';
import { demand, demandTasks, type ServerAccess } from '../permissions/policy.js';
import { nextRun, unreadablePart } from '../schedules/cron.js';
import type { ScheduleRunner } from '../schedules/runner.js';
import { parseId, parseInput } from '../validation/common.js';
import type { Page, Paginated } from '../validation/pagination.js';
import { createScheduleInput, MAX_SCHEDULES, MAX_TASKS, updateScheduleInput } from '../validation/schedules.js';
import type { AccessService } from './access.service.js';
import type { ActivityRecorder } from './activity.service.js';
import { requireActor, type Actor } from './actor.js';

export interface ScheduleView {
  id: string;
  serverId: string;
  name: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  onlyWhenOnline: boolean;
  tasks: ScheduleTask[];
  lastRunAt: Date | null;
  nextRunAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ScheduleRunView {
  id: string;
  trigger: ScheduleRun['trigger'];
  status: ScheduleRun['status'];
  startedAt: Date;
  finishedAt: Date | null;
  tasks: RunTask[];
}

const view = (s: Schedule): ScheduleView => ({
  id: s.id,
  serverId: s.server.id,
  name: s.name,
  cron: s.cron,
  timezone: s.timezone,
  enabled: s.enabled,
  onlyWhenOnline: s.onlyWhenOnline,
  tasks: s.tasks.map((t) => ({ ...t, payload: { ...t.payload } })),
  lastRunAt: s.lastRunAt,
  nextRunAt: s.nextRunAt,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
});

const runView = (r: ScheduleRun): ScheduleRunView => ({
  id: r.id,
  trigger: r.trigger,
  status: r.status,
  startedAt: r.startedAt,
  finishedAt: r.finishedAt,
  tasks: r.tasks.map((t) => ({ ...t })),
});

/**
 * The next run of an enabled schedule, from the runner's clock; null while disabled. A stored cron
 * or time zone that no longer reads (the runner disabled the schedule) is a 422 on that field.
 */
function nextRunOf(s: Pick<Schedule, 'enabled' | 'cron' | 'timezone'>, now: Date): Date | null {
  if (!s.enabled) return null;
  try {
    return nextRun(s.cron, s.timezone, now);
  } catch (err) {
    throw AppError.validation({ [unreadablePart(s.timezone)]: `the stored value no longer reads (${(err as Error).message}): send a new one` });
  }
}

/** Throws QUOTA_EXCEEDED when the server holds MAX_SCHEDULES schedules; concurrent creates take turns. */
async function assertRoomForSchedule(em: EntityManager, serverId: string): Promise<void> {
  await em.execute(`select pg_advisory_xact_lock(hashtext('hostpanel:schedules:' || ?))`, [serverId]);
  const used = await em.count(Schedule, { server: serverId });
  if (used < MAX_SCHEDULES) return;
  const message = `This server has ${used} schedules, the most it may have is ${MAX_SCHEDULES}: delete one, or add these tasks to an existing schedule (up to ${MAX_TASKS} tasks each).`;
  throw new AppError('QUOTA_EXCEEDED', message, { exceeded: ['schedules'], limits: { schedules: MAX_SCHEDULES }, used: { schedules: used }, requested: { schedules: 1 } });
}

export class SchedulesService {
  constructor(
    private readonly orm: MikroORM,
    private readonly access: AccessService,
    private readonly activity: ActivityRecorder,
    private readonly runner: ScheduleRunner,
  ) {}

  async list(actor: Actor | null, serverId: string, page: Page): Promise<Paginated<ScheduleView>> {
    const a = await this.access.resolve(actor, serverId);
    demand(a, 'schedule.read');
    const [rows, total] = await this.orm.em.fork().findAndCount(
      Schedule,
      { server: a.serverId },
      { orderBy: { createdAt: 'asc', id: 'asc' }, limit: page.limit, offset: page.offset },
    );
    return { items: rows.map(view), meta: { total, page: page.page, limit: page.limit } };
  }

  async get(actor: Actor | null, serverId: string, scheduleId: string): Promise<ScheduleView> {
    const a = await this.access.resolve(actor, serverId);
    demand(a, 'schedule.read');
    return view(await this.find(this.orm.em.fork(), a, scheduleId));
  }

  async create(actor: Actor | null, serverId: string, input: unknown): Promise<ScheduleView> {
    const a = await this.access.resolve(actor, serverId);
    demand(a, 'schedule.create');
    const data = parseInput(createScheduleInput, input);
    demandTasks(a, data.tasks);
    return this.orm.em.fork().transactional(async (em) => {
      await assertRoomForSchedule(em, a.serverId);
      const schedule = em.create(Schedule, { ...data, server: em.getReference(Server, a.serverId), nextRunAt: nextRunOf(data, this.runner.now()) });
      await this.activity.record({ event: 'server:schedule.create', serverId: a.serverId, actor, properties: summary(schedule) }, em);
      await em.flush();
      return view(schedule);
    });
  }

  async update(actor: Actor | null, serverId: string, scheduleId: string, input: unknown): Promise<ScheduleView> {
    const a = await this.access.resolve(actor, serverId);
    demand(a, 'schedule.update');
    const data = parseInput(updateScheduleInput, input);
    return this.orm.em.fork().transactional(async (em) => {
      const schedule = await this.find(em, a, scheduleId, LockMode.PESSIMISTIC_WRITE);
      const given = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined));
      // nothing named: nothing changes, nothing is recorded
      if (!Object.keys(given).length) return view(schedule);
      // any change (its times, enabling it, its tasks) decides what the tasks will do: they act for the
      // changer, checked on the tasks stored (the row stays locked until the change is committed)
      demandTasks(a, data.tasks ?? schedule.tasks);
      // the next run moves only when what decides it changes: a form sent back whole, with the same
      // cron, zone and switch, keeps a run that is due and not yet claimed
      const timing = (['cron', 'timezone', 'enabled'] as const).some((k) => data[k] !== undefined && data[k] !== schedule[k]);
      em.assign(schedule, given);
      if (timing) schedule.nextRunAt = nextRunOf(schedule, this.runner.now());
      await this.activity.record({ event: 'server:schedule.update', serverId: a.serverId, actor, properties: { ...summary(schedule), changed: Object.keys(given) } }, em);
      await em.flush();
      return view(schedule);
    });
  }

  async remove(actor: Actor | null, serverId: string, scheduleId: string): Promise<void> {
    const a = await this.access.resolve(actor, serverId);
    demand(a, 'schedule.delete');
    const em = this.orm.em.fork();
    const schedule = await this.find(em, a, scheduleId);
    em.remove(schedule);
    await this.activity.record({ event: 'server:schedule.delete', serverId: a.serverId, actor, properties: { scheduleId: schedule.id, name: schedule.name } }, em);
    await em.flush();
  }

  /** Runs the schedule now, enabled or not (schedule.update); the answer is the run just started. */
  async run(actor: Actor | null, serverId: string, scheduleId: string): Promise<ScheduleRunView> {
    const a = await this.access.resolve(actor, serverId);
    demand(a, 'schedule.update');
    const by = requireActor(actor);
    // the tasks are checked on the locked row the run is made of, not on an earlier read
    const run = await this.runner.runNow(by, async (em) => {
      const schedule = await this.find(em, a, scheduleId, LockMode.PESSIMISTIC_WRITE);
      demandTasks(a, schedule.tasks);
      return schedule;
    });
    return runView(run);
  }

  /** The schedule's runs, newest first. */
  async runs(actor: Actor | null, serverId: string, scheduleId: string, page: Page): Promise<Paginated<ScheduleRunView>> {
    const a = await this.access.resolve(actor, serverId);
    demand(a, 'schedule.read');
    const em = this.orm.em.fork();
    const schedule = await this.find(em, a, scheduleId);
    const [rows, total] = await em.findAndCount(ScheduleRun, { schedule: schedule.id }, { orderBy: { startedAt: 'desc', id: 'desc' }, limit: page.limit, offset: page.offset });
    return { items: rows.map(runView), meta: { total, page: page.page, limit: page.limit } };
  }

  /** The server's schedule (404 otherwise); `lockMode` locks its row until the transaction ends. */
  private async find(em: EntityManager, a: ServerAccess, scheduleId: string, lockMode?: LockMode): Promise<Schedule> {
    const id = parseId(scheduleId, 'Schedule');
    const schedule = await em.findOne(Schedule, { id, server: a.serverId }, lockMode ? { lockMode } : {});
    if (!schedule) throw AppError.notFound('Schedule');
    return schedule;
  }
}

function summary(s: Schedule): Record<string, unknown> {
  return { scheduleId: s.id, name: s.name, cron: s.cron, timezone: s.timezone, enabled: s.enabled, tasks: s.tasks.map((t) => t.action) };
}
