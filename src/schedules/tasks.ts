/**
 * What one task of a schedule does on its server: `command` writes a console line and `power` runs a
 * power action (PowerService and the server's node); `backup` makes a backup (BackupsService, which
 * rotates out the oldest unlocked backup at the server's limit) and waits until the node has made
 * it, so that a restart after it restarts a server whose files are saved.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { Server } from '../entities/Server.js';
import type { ScheduleTask } from '../entities/Schedule.js';
import type { ActedBy, PowerService } from '../services/power.service.js';
import type { BackupsService } from '../services/backups.service.js';
import { Backup } from '../entities/Backup.js';
import type { PowerAction } from '../shared/node-protocol.js';

export const SERVER_DELETED = 'the server was deleted';

/**
 * Runs one task; throws (with the reason as message) when it fails. `wait` is the run's wait, which
 * rejects (RunnerStopped) when the panel stops: a task that waits for something waits with it.
 */
export type PerformTask = (serverId: string, task: ScheduleTask, by: ActedBy, wait: (ms: number) => Promise<void>) => Promise<void>;

/** How long a backup task waits for its backup. */
const BACKUP_WAIT_MS = 6 * 60 * 60_000;

async function backupAndWait(backups: BackupsService, em: () => EntityManager, serverId: string, by: ActedBy, wait: (ms: number) => Promise<void>): Promise<void> {
  const made = await backups.createRotating(serverId, `Scheduled ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`, by);
  const until = Date.now() + BACKUP_WAIT_MS;
  for (;;) {
    const b = await em().fork().findOne(Backup, { id: made.id });
    if (!b) throw new Error('the backup was deleted before it completed');
    if (b.status === 'completed') return;
    if (b.status === 'failed') throw new Error(`the backup failed: ${b.error ?? 'no reason given'}`);
    if (Date.now() > until) throw new Error('the backup did not complete within 6 hours');
    await wait(500);
  }
}

export function taskPerformer(power: PowerService, backups: BackupsService, em: () => EntityManager): PerformTask {
  return async (serverId, task, by, wait) => {
    if (task.action === 'backup') return backupAndWait(backups, em, serverId, by, wait);
    const server = await em().findOne(Server, { id: serverId }, { populate: ['node'], refresh: true });
    if (!server) throw new Error(SERVER_DELETED);
    if (task.action === 'command') await power.sendCommand(server, String(task.payload.command), by);
    else await power.powerServer(server, task.payload.action as PowerAction, by);
  };
}
