/**
 * A server's schedules: cron expressions in a time zone and the tasks they run, with the history of
 * their runs. Keys: schedule.read (list, get, runs), schedule.create, schedule.update (also run now),
 * schedule.delete. The runs themselves are the runner's (src/schedules/runner.ts).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Schedule, type ScheduleTask } from '../entities/Schedule.js';
import { ScheduleRun, type RunTask } from '../entities/ScheduleRun.js';
import { Server } from '../entities/Server.js';
import { AppError } from '../errors.js';
import { demand, demandTasks, type ServerAccess } from '../permissions/policy.js';
import { nextRun } from '../schedules/cron.js';
import type { ScheduleRunner } from '../schedules/runner.js';
import { parseId, parseInput } from '../validation/common.js';
import type { Page, Paginated } from '../validation/pagination.js';
import { createScheduleInput, updateScheduleInput } from '../validation/schedules.js';
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

/** The next run of an enabled schedule, from the runner's clock; null while disabled. */
function nextRunOf(s: Pick<Schedule, 'enabled' | 'cron' | 'timezone'>, now: Date): Date | null {
  return s.enabled ? nextRun(s.cron, s.timezone, now) : null;
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
    const em = this.orm.em.fork();
    const schedule = em.create(Schedule, { ...data, server: em.getReference(Server, a.serverId), nextRunAt: nextRunOf(data, this.runner.now()) });
    await this.activity.record({ event: 'server:schedule.create', serverId: a.serverId, actor, properties: summary(schedule) }, em);
    await em.flush();
    return view(schedule);
  }

  async update(actor: Actor | null, serverId: string, scheduleId: string, input: unknown): Promise<ScheduleView> {
    const a = await this.access.resolve(actor, serverId);
    demand(a, 'schedule.update');
    const data = parseInput(updateScheduleInput, input);
    const em = this.orm.em.fork();
    const schedule = await this.find(em, a, scheduleId);
    const given = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined));
    // nothing named: nothing changes, nothing is recorded
    if (!Object.keys(given).length) return view(schedule);
    // any change (its times, enabling it, its tasks) decides what the tasks will do: they act for the changer
    demandTasks(a, data.tasks ?? schedule.tasks);
    const timing = data.cron !== undefined || data.timezone !== undefined || data.enabled !== undefined;
    em.assign(schedule, given);
    if (timing) schedule.nextRunAt = nextRunOf(schedule, this.runner.now());
    await this.activity.record({ event: 'server:schedule.update', serverId: a.serverId, actor, properties: { ...summary(schedule), changed: Object.keys(given) } }, em);
    await em.flush();
    return view(schedule);
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
    const schedule = await this.find(this.orm.em.fork(), a, scheduleId);
    demandTasks(a, schedule.tasks);
    return runView(await this.runner.runNow(schedule.id, requireActor(actor)));
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

  private async find(em: ReturnType<MikroORM['em']['fork']>, a: ServerAccess, scheduleId: string): Promise<Schedule> {
    const id = parseId(scheduleId, 'Schedule');
    const schedule = await em.findOne(Schedule, { id, server: a.serverId });
    if (!schedule) throw AppError.notFound('Schedule');
    return schedule;
  }
}

function summary(s: Schedule): Record<string, unknown> {
  return { scheduleId: s.id, name: s.name, cron: s.cron, timezone: s.timezone, enabled: s.enabled, tasks: s.tasks.map((t) => t.action) };
}
