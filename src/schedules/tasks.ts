/**
 * What one task of a schedule does on its server: `command` writes a console line; `power` runs a
 * power action (PowerService and the server's node) and waits until the server is in the state the
 * action leads to (POWER_WAITS), so that the task after a `stop` finds the game stopped and its
 * files saved; `backup` makes a backup (BackupsService, which rotates out the oldest unlocked backup
 * at the server's limit) and waits until the node has made it, so that a restart after it restarts a
 * server whose files are saved.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { Server } from '../entities/Server.js';
import type { ScheduleTask } from '../entities/Schedule.js';
import type { ActedBy, PowerService } from '../services/power.service.js';
import type { BackupsService } from '../services/backups.service.js';
import { Backup } from '../entities/Backup.js';
import { KILL_WAIT_MS, type PowerAction, type ServerStatus } from '../shared/node-protocol.js';
import type { AccessService } from '../services/access.service.js';
import { AppError } from '../errors.js';
import { taskKeys } from '../permissions/keys.js';
import { may } from '../permissions/policy.js';

export const SERVER_DELETED = 'the server was deleted';

/**
 * Runs one task; throws (with the reason as message) when it fails. `wait` is the run's wait, which
 * rejects (RunnerStopped) when the panel stops: a task that waits for something waits with it.
 * `timezone` is the schedule's (IANA), the clock of the names it gives.
 */
export type PerformTask = (serverId: string, task: ScheduleTask, by: ActedBy, wait: (ms: number) => Promise<void>, timezone: string) => Promise<void>;

/** How long a backup task waits for its backup. */
const BACKUP_WAIT_MS = 6 * 60 * 60_000;

/**
 * How often a power task reads the server's recorded status while it waits. The nodes' state events
 * write it (NodeAgentService.applyEvents, on whichever instance the node reaches); the panel has no
 * feed of status changes of its own to subscribe to, so the task reads the row, once a second.
 */
const STATUS_POLL_MS = 1000;

/** Added to each bound of a power task's wait: the node's report reaching the panel, a slow node. */
export const POWER_WAIT_MARGIN_MS = 15_000;

/** What a power task waits for after its action, and at most how long (`graceMs`: STOP_GRACE_SECONDS). */
interface PowerWait {
  /** the statuses that end the wait */
  reached: readonly ServerStatus[];
  boundMs: (graceMs: number) => number;
  /** what to do when the bound passes */
  advice: string;
}

/**
 * The one rule of what each power task waits for (docs/schedules.md says the same):
 * - `stop`: `offline` (the game stopped and saved, or the node killed it at the end of the grace);
 * - `kill`: `offline`;
 * - `restart`: back up, `starting` or `running` (its stop done, its start begun);
 * - `start`: `starting` or `running` (the process runs; not its ready line, which may take minutes).
 *   A `start` that finds the server `stopping` first waits, as a `stop` does, for `offline`.
 */
export const POWER_WAITS: Record<PowerAction, PowerWait> = {
  stop: {
    reached: ['offline'],
    boundMs: (grace) => grace + POWER_WAIT_MARGIN_MS,
    advice: "its node did not report it stopped (is the node reachable, and its STOP_GRACE_SECONDS no longer than the panel's?); see the server's console, and kill it if it still runs",
  },
  kill: {
    reached: ['offline'],
    boundMs: () => KILL_WAIT_MS + POWER_WAIT_MARGIN_MS,
    advice: "its node did not report it stopped (is the node reachable?); see the server's console and kill it again",
  },
  restart: {
    reached: ['starting', 'running'],
    boundMs: (grace) => grace + 2 * POWER_WAIT_MARGIN_MS,
    advice: "see the server's console for why it did not start again, and start it by hand once it is offline",
  },
  start: {
    reached: ['starting', 'running'],
    boundMs: () => POWER_WAIT_MARGIN_MS,
    advice: "see the server's console for why it did not start, and start it by hand",
  },
};

/** "Scheduled 2026-11-29 04:00 Europe/Berlin": the time `at` on the schedule's clock, which it names. */
export function scheduledBackupName(at: Date, timezone: string): string {
  let zone = timezone;
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = localParts(at, zone);
  } catch {
    zone = 'UTC'; // a zone this runtime no longer reads (src/schedules/claim.ts disables such schedules)
    parts = localParts(at, zone);
  }
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `Scheduled ${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')} ${zone}`;
}

function localParts(at: Date, timeZone: string): Intl.DateTimeFormatPart[] {
  return new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(at);
}

async function backupAndWait(backups: BackupsService, em: () => EntityManager, serverId: string, by: ActedBy, wait: (ms: number) => Promise<void>, timezone: string): Promise<void> {
  const made = await backups.createRotating(serverId, scheduledBackupName(new Date(), timezone), by);
  await pollRow(
    () => em().fork().findOne(Backup, { id: made.id }),
    (b) => {
      if (!b) throw new Error('the backup was deleted before it completed');
      if (b.status === 'failed') throw new Error(`the backup failed: ${b.error ?? 'no reason given'}`);
      return b.status === 'completed';
    },
    { boundMs: BACKUP_WAIT_MS, everyMs: 500, wait, timedOut: () => new Error('the backup did not complete within 6 hours') },
  );
}

/**
 * Reads a row every `everyMs` (with the run's `wait`, which the panel's stop cuts short) until `done`
 * says so (or throws); throws `timedOut(last row)` once `boundMs` has passed: what a task that waits
 * for what it started does (a backup made, a server in a state).
 */
async function pollRow<T>(read: () => Promise<T>, done: (row: T) => boolean, o: { boundMs: number; everyMs: number; wait: (ms: number) => Promise<void>; timedOut: (row: T) => Error }): Promise<void> {
  const until = Date.now() + o.boundMs;
  for (;;) {
    const row = await read();
    if (done(row)) return;
    if (Date.now() >= until) throw o.timedOut(row);
    await o.wait(Math.min(o.everyMs, Math.max(until - Date.now(), 1)));
  }
}

/**
 * Waits until the server's recorded status is one POWER_WAITS[action] waits for; throws, saying the
 * status it was in and what to do, when its bound passes first (`after`: since what).
 */
async function awaitStatus(em: () => EntityManager, serverId: string, action: PowerAction, graceMs: number, wait: (ms: number) => Promise<void>, after = `the ${action}`): Promise<void> {
  const rule = POWER_WAITS[action];
  const bound = rule.boundMs(graceMs);
  await pollRow(
    () => em().fork().findOne(Server, { id: serverId }, { fields: ['status'] }),
    (server) => {
      if (!server) throw new Error(SERVER_DELETED);
      return rule.reached.includes(server.status);
    },
    {
      boundMs: bound,
      everyMs: STATUS_POLL_MS,
      wait,
      timedOut: (server) => new Error(`the server was still ${server!.status} ${Math.round(bound / 1000)} s after ${after} (the task waits until it is ${rule.reached.join(' or ')}): ${rule.advice}`),
    },
  );
}

/**
 * A run started by a user acts for them (src/permissions/keys.ts taskKeys): each task needs their keys
 * when it starts, not only when the run did, so a subuser removed or narrowed during a run, an
 * administrator no longer one, or a deleted account stops acting at the next task. A cron run (no
 * actor) acts for the schedule.
 */
async function demandStillHeld(access: AccessService, by: ActedBy, serverId: string, task: ScheduleTask): Promise<void> {
  if (!by.actor) return;
  const a = await access.resolveNow(by.actor.user.id, serverId).catch((err: unknown) => {
    if (err instanceof AppError && err.code === 'NOT_FOUND') throw new Error('whoever started this run no longer has access to this server');
    throw err;
  });
  const lacking = taskKeys(task).find((key) => !may(a, key));
  if (lacking) throw new Error(`whoever started this run no longer holds the "${lacking}" permission this task needs`);
}

/** `stopGraceSeconds`: the panel's STOP_GRACE_SECONDS (src/config.ts), the bound of a stop's wait. */
export function taskPerformer(power: PowerService, backups: BackupsService, access: AccessService, em: () => EntityManager, stopGraceSeconds: number): PerformTask {
  return async (serverId, task, by, wait, timezone) => {
    await demandStillHeld(access, by, serverId, task);
    if (task.action === 'backup') return backupAndWait(backups, em, serverId, by, wait, timezone);
    const load = () => em().findOne(Server, { id: serverId }, { populate: ['node'], refresh: true });
    let server = await load();
    if (!server) throw new Error(SERVER_DELETED);
    if (task.action === 'command') return power.sendCommand(server, String(task.payload.command), by);
    const action = task.payload.action as PowerAction;
    const graceMs = stopGraceSeconds * 1000;
    if (action === 'start' && server.status === 'stopping') {
      // the node refuses to start a server that is stopping: start it once it is offline
      await awaitStatus(em, serverId, 'stop', graceMs, wait, 'the start task found it stopping');
      server = await load();
      if (!server) throw new Error(SERVER_DELETED);
    }
    await power.powerServer(server, action, by);
    await awaitStatus(em, serverId, action, graceMs, wait);
  };
}
