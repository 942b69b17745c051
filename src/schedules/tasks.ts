/**
 * What one task of a schedule does on its server: `command` writes a console line, `power` runs a
 * power action, both through PowerService and the server's node. Backups do not exist on this panel
 * yet, so a `backup` task fails with a message saying so.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { Server } from '../entities/Server.js';
import type { ScheduleTask } from '../entities/Schedule.js';
import type { ActedBy, PowerService } from '../services/power.service.js';
import type { PowerAction } from '../shared/node-protocol.js';

export const BACKUPS_UNAVAILABLE = 'backups are not available on this panel yet';
export const SERVER_DELETED = 'the server was deleted';

/** Runs one task; throws (with the reason as message) when it fails. */
export type PerformTask = (serverId: string, task: ScheduleTask, by: ActedBy) => Promise<void>;

export function taskPerformer(power: PowerService, em: () => EntityManager): PerformTask {
  return async (serverId, task, by) => {
    if (task.action === 'backup') throw new Error(BACKUPS_UNAVAILABLE);
    const server = await em().findOne(Server, { id: serverId }, { populate: ['node'], refresh: true });
    if (!server) throw new Error(SERVER_DELETED);
    if (task.action === 'command') await power.sendCommand(server, String(task.payload.command), by);
    else await power.powerServer(server, task.payload.action as PowerAction, by);
  };
}
