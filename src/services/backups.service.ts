/**
 * Backups of a server's files: the records and the rules here, the data on the server's node
 * (src/agent/backups). Creating one checks the server's backup limit with the server's row locked,
 * so concurrent requests cannot pass it; the node makes it in the background and reports progress
 * and the outcome (NodeAgentService.applyEvents → `progress`), which reach subscribers of
 * `serverBackups` through the console bus.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import type { ConsoleBus } from '../console/bus.js';
import { eventIterator } from '../console/iterator.js';
import { Backup } from '../entities/Backup.js';
import { Server } from '../entities/Server.js';
import { AppError } from '../errors.js';
import { childLogger } from '../logger.js';
import type { AgentClient, NodeAnswer } from '../nodes/agent-client.js';
import type { ActedBy } from './power.service.js';
import { demand } from '../permissions/policy.js';
import type { BackupReport, RestoreReport } from '../shared/node-protocol.js';
import { createBackupInput, restoreBackupInput } from '../validation/backups.js';
import { parseId, parseInput } from '../validation/common.js';
import type { Page, Paginated } from '../validation/pagination.js';
import type { AccessService } from './access.service.js';
import type { ActivityRecorder } from './activity.service.js';
import { requireActor, type Actor } from './actor.js';
import { guardedServerFeed } from './access-guard.js';

/**
 * How long the node may take to delete a backup: it stops one under way and frees the stored files no
 * other backup holds before it answers (tens of thousands of files for a big world).
 */
const DELETE_TIMEOUT_MS = 120_000;
/**
 * A delete asks the node outside any transaction (a slow node holds no database connection); the
 * record says meanwhile that it is being deleted, and is gone for every request until the node
 * answers. A mark older than this is left by a panel that stopped during the call, and counts for nothing.
 */
const DELETING_FOR_MS = DELETE_TIMEOUT_MS + 60_000;

const beingDeleted = (b: Backup): boolean => b.deletingSince !== null && Date.now() - b.deletingSince.getTime() < DELETING_FOR_MS;
/** The filter of the backups not being deleted. */
const notBeingDeleted = () => ({ $or: [{ deletingSince: null }, { deletingSince: { $lt: new Date(Date.now() - DELETING_FOR_MS) } }] });

const log = childLogger('backups');

export class BackupsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly access: AccessService,
    private readonly agents: AgentClient,
    private readonly activity: ActivityRecorder,
    private readonly bus: ConsoleBus,
  ) {}

  private get em() {
    return this.orm.em;
  }

  /** The server (with its node) when the caller holds `key` on it. */
  private async server(actor: Actor | null, serverId: string, key: Parameters<typeof demand>[1]): Promise<{ server: Server; actor: Actor }> {
    const a = await this.access.resolve(actor, serverId);
    demand(a, key);
    const server = await this.em.findOneOrFail(Server, { id: a.serverId }, { populate: ['node'] });
    return { server, actor: requireActor(actor) };
  }

  private async backup(actor: Actor | null, serverId: string, backupId: string, key: Parameters<typeof demand>[1]) {
    const t = await this.server(actor, serverId, key);
    const backup = await this.em.findOne(Backup, { id: parseId(backupId, 'Backup'), server: t.server.id });
    if (!backup || beingDeleted(backup)) throw AppError.notFound('Backup');
    return { ...t, backup };
  }

  async list(actor: Actor | null, serverId: string, page: Page): Promise<Paginated<Backup>> {
    const { server } = await this.server(actor, serverId, 'backup.read');
    const [items, total] = await this.em.findAndCount(Backup, { server: server.id, ...notBeingDeleted() }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: page.limit, offset: page.offset });
    return { items, meta: { total, page: page.page, limit: page.limit } };
  }

  async get(actor: Actor | null, serverId: string, backupId: string): Promise<Backup> {
    return (await this.backup(actor, serverId, backupId, 'backup.read')).backup;
  }

  /** A new backup, `pending` until the node reports it done. 422 BACKUP_LIMIT at the server's limit. */
  async create(actor: Actor | null, serverId: string, input: unknown): Promise<Backup> {
    const { server, actor: a } = await this.server(actor, serverId, 'backup.create');
    return this.start(server, parseInput(createBackupInput, input), { actor: a });
  }

  /**
   * A backup a schedule makes (no caller to check): at the server's limit, the oldest unlocked
   * completed backup is deleted first to make room; a locked one is never rotated out.
   */
  async createRotating(serverId: string, name: string, by: ActedBy): Promise<Backup> {
    const server = await this.em.findOne(Server, { id: serverId }, { populate: ['node'] });
    if (!server) throw AppError.notFound('Server');
    return this.start(server, { name }, by, true);
  }

  /**
   * Records a new backup and has the node make it. The server's row lock makes the count, a rotation
   * (`rotate`: a schedule's backup at the limit) and the insert one step for concurrent requests: the
   * room a rotation makes is the new backup's. The backup rotated out is only marked as being deleted
   * there; the node deletes it after the commit (no connection held for its answer), and only then is
   * the new backup started. When the node cannot delete it, it is back as it was and the new backup fails.
   */
  private async start(server: Server, data: { name?: string | undefined; ignored?: string[] | undefined; locked?: boolean | undefined }, by: ActedBy, rotate = false): Promise<Backup> {
    const { backup, rotated } = await this.em.transactional(async (em) => {
      const locked = await em.findOne(Server, { id: server.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      if (!locked) throw AppError.notFound('Server');
      // refused before a record is made (the node would refuse it too, leaving a failed one behind)
      if (locked.status === 'restoring') throw AppError.invalidState('A restore of this server is under way; back it up once it is done.');
      let kept = await em.count(Backup, { server: server.id, status: { $ne: 'failed' } });
      const rotated = rotate && locked.backupLimit > 0 && kept >= locked.backupLimit ? await this.markOldest(em, server, locked.backupLimit, kept) : null;
      if (rotated) kept -= 1;
      if (kept >= locked.backupLimit) {
        throw new AppError('BACKUP_LIMIT', locked.backupLimit === 0 ? 'This server may not keep backups (its backup limit is 0).' : `This server keeps at most ${locked.backupLimit} backups: delete one first.`, { limit: locked.backupLimit });
      }
      const b = em.create(Backup, { server: locked, name: data.name ?? `Backup ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`, ignored: data.ignored ?? [], locked: data.locked ?? false });
      await this.activity.record({ event: 'server:backup.create', serverId: server.id, actor: by.actor, properties: { ...by.properties, backupId: b.id, name: b.name } }, em);
      return { backup: b, rotated };
    });
    try {
      if (rotated) await this.deleteMarked(server, rotated, by.actor, { ...by.properties, rotated: true });
      await this.agents.call(server.node, 'POST', `/api/servers/${server.id}/backups`, { id: backup.id, ignored: backup.ignored });
    } catch (err) {
      await this.fail(backup, err instanceof AppError ? err.message : 'The node could not start the backup.');
      this.announce(server.id, backup);
      throw err;
    }
    this.announce(server.id, backup);
    return backup;
  }

  /**
   * Marks the server's oldest unlocked completed backup as being deleted, to make room at the limit
   * in the transaction that holds the server's row; null when there is none. Past the limit (a limit
   * lowered since) nothing goes: one out would not make room.
   */
  private async markOldest(em: EntityManager, server: Server, limit: number, kept: number): Promise<Backup | null> {
    if (kept > limit) {
      const leaving = await em.count(Backup, { server: server.id, status: { $ne: 'failed' }, deletingSince: { $gte: new Date(Date.now() - DELETING_FOR_MS) } });
      if (leaving > 0 && kept - leaving <= limit) throw new AppError('BACKUP_LIMIT', `This server is at its limit of ${limit} backups and one is being deleted to make room for another backup; run the task again once it is gone.`, { limit });
      throw new AppError('BACKUP_LIMIT', `This server holds ${kept} backups, more than its limit of ${limit}; a backup task makes room by deleting one only. Delete some backups first.`, { limit });
    }
    // the row lock waits for a delete of the same backup under way; a backup deleted meanwhile is not found
    const oldest = await em.findOne(Backup, { server: server.id, locked: false, status: 'completed', ...notBeingDeleted() }, { orderBy: { createdAt: 'asc', id: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (oldest) oldest.deletingSince = new Date();
    return oldest;
  }

  /** The backup as a `.tar.gz`, streamed from the node. */
  async download(actor: Actor | null, serverId: string, backupId: string): Promise<{ response: NodeAnswer; backup: Backup }> {
    const { server, backup, actor: a } = await this.backup(actor, serverId, backupId, 'backup.download');
    if (backup.status !== 'completed') throw AppError.invalidState('Only a completed backup can be downloaded.');
    const response = await this.agents.stream(server.node, 'GET', `/api/servers/${server.id}/backups/${backup.id}/download`);
    await this.activity.record({ event: 'server:backup.download', serverId: server.id, actor: a, properties: { backupId: backup.id } });
    return { response, backup };
  }

  /** Puts the backup back (the server must be offline); it is `restoring` until the node reports the end. */
  async restore(actor: Actor | null, serverId: string, backupId: string, input: unknown): Promise<Backup> {
    const { server, backup, actor: a } = await this.backup(actor, serverId, backupId, 'backup.restore');
    const { truncate = false } = parseInput(restoreBackupInput, input ?? {});
    if (backup.status !== 'completed') throw AppError.invalidState('Only a completed backup can be restored.');
    if (server.status !== 'offline' && server.status !== 'install_failed') throw AppError.invalidState(`Stop the server before restoring a backup (it is ${server.status}).`);
    // restoring before the node is asked: the node's report of the end, which may come before its
    // answer, moves the server from restoring to offline
    const was = server.status;
    if (!(await this.em.nativeUpdate(Server, { id: server.id, status: was }, { status: 'restoring' }))) throw AppError.invalidState('The server changed meanwhile; look at its status and try again.');
    try {
      await this.agents.call(server.node, 'POST', `/api/servers/${server.id}/backups/${backup.id}/restore`, { truncate });
    } catch (err) {
      await this.em.nativeUpdate(Server, { id: server.id, status: 'restoring' }, { status: was });
      throw err;
    }
    await this.activity.record({ event: 'server:backup.restore', serverId: server.id, actor: a, properties: { backupId: backup.id, truncate } });
    return backup;
  }

  async setLocked(actor: Actor | null, serverId: string, backupId: string, locked: boolean): Promise<Backup> {
    const { server, backup, actor: a } = await this.backup(actor, serverId, backupId, 'backup.delete');
    const changed = await this.em.transactional(async (em) => {
      const row = await this.lockedRow(em, backup.id);
      row.locked = locked;
      await this.activity.record({ event: locked ? 'server:backup.lock' : 'server:backup.unlock', serverId: server.id, actor: a, properties: { backupId: row.id } }, em);
      return row;
    });
    this.announce(server.id, changed);
    return changed;
  }

  /**
   * Deletes a backup (not a locked one) on the node, then its record. Under the record's row lock it
   * is marked as being deleted, which orders it with a lock or another delete of the same backup
   * (each sees what the one before it did: the later finds nothing); the node is asked after the
   * commit. When the node cannot do it the mark goes, and the backup is back as it was.
   */
  async remove(actor: Actor | null, serverId: string, backupId: string): Promise<void> {
    const { server, backup, actor: a } = await this.backup(actor, serverId, backupId, 'backup.delete');
    const row = await this.em.transactional(async (em) => {
      const row = await this.lockedRow(em, backup.id);
      if (row.locked) throw AppError.invalidState('This backup is locked: unlock it first.');
      row.deletingSince = new Date();
      return row;
    });
    await this.deleteMarked(server, row, a);
  }

  /**
   * Deletes a backup marked as being deleted (committed) on the node, then its record, and logs it;
   * when the node cannot, the mark goes and the backup is back as it was.
   */
  private async deleteMarked(server: Server, row: Backup, actor: Actor | null | undefined, properties: Record<string, unknown> = {}): Promise<void> {
    try {
      await this.deleteOnNode(server, row.id);
    } catch (err) {
      await this.em.fork().nativeUpdate(Backup, { id: row.id, deletingSince: row.deletingSince }, { deletingSince: null });
      throw err;
    }
    await this.em.transactional((em) => this.forget(em, server, row, actor, properties));
  }

  /** Drops the record of a backup its node no longer holds, and logs it. */
  private async forget(em: EntityManager, server: Server, backup: Backup, actor: Actor | null | undefined, properties: Record<string, unknown> = {}): Promise<void> {
    await em.nativeDelete(Backup, { id: backup.id });
    await this.activity.record({ event: 'server:backup.delete', serverId: server.id, actor, properties: { ...properties, backupId: backup.id, name: backup.name } }, em);
  }

  private deleteOnNode(server: Server, backupId: string): Promise<unknown> {
    return this.agents.call(server.node, 'DELETE', `/api/servers/${server.id}/backups/${backupId}`, undefined, DELETE_TIMEOUT_MS);
  }

  /** The backup's record, locked until the transaction of `em` ends; 404 once it is gone or being deleted. */
  private async lockedRow(em: EntityManager, id: string): Promise<Backup> {
    const row = await em.findOne(Backup, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!row || beingDeleted(row)) throw AppError.notFound('Backup');
    return row;
  }

  /** New states of the server's backups (backup.read). */
  async subscribe(actor: Actor | null, serverId: string): Promise<AsyncIterableIterator<Backup>> {
    const { server, actor: who } = await this.server(actor, serverId, 'backup.read');
    // taking the key (or the subuser) away ends the subscription, as it ends the activity feed's
    const subscribe = guardedServerFeed(this.orm, this.access, this.bus, who, server.id, 'backup.read');
    return eventIterator<Backup>(subscribe, (e) => (e.type === 'backup' ? reviveBackup(e.data as Backup) : undefined), 1000);
  }

  /** What the node reported about a backup (progress, the end) or a restore. */
  async progress(report: BackupReport | RestoreReport): Promise<void> {
    const em = this.em.fork();
    const backup = await em.findOne(Backup, { id: report.backupId, server: report.serverId });
    if (report.kind === 'restore') {
      await em.nativeUpdate(Server, { id: report.serverId, status: 'restoring' }, { status: 'offline' });
      const event = report.status === 'completed' ? 'server:backup.restore-complete' : 'server:backup.restore-fail';
      await this.activity.record({ event, serverId: report.serverId, properties: { backupId: report.backupId, ...(report.error ? { error: report.error } : {}) } });
      return;
    }
    if (!backup || backup.status === 'failed') return this.dropStray(report);
    if (backup.status !== 'pending') return;
    backup.files = report.files;
    backup.size = report.bytes;
    if (report.status !== 'pending') {
      backup.status = report.status;
      backup.completedAt = new Date();
      backup.sha256 = report.sha256 ?? null;
      backup.error = report.error ?? null;
      const event = report.status === 'completed' ? 'server:backup.complete' : 'server:backup.fail';
      await this.activity.record({ event, serverId: report.serverId, properties: { backupId: backup.id, ...(report.error ? { error: report.error } : {}) } }, em);
    }
    await em.flush();
    this.announce(report.serverId, backup);
  }

  /**
   * A backup the node makes or made that the panel does not hold as under way: one whose start the
   * panel recorded as failed (the node answered too late, then made it), or one deleted meanwhile. The
   * node deletes it, so that it holds no backup the panel does not count.
   */
  private async dropStray(report: BackupReport): Promise<void> {
    if (report.status === 'failed') return;
    const server = await this.em.fork().findOne(Server, { id: report.serverId }, { populate: ['node'] });
    if (!server) return;
    log.info({ serverId: server.id, backupId: report.backupId }, 'the node reported a backup this panel does not hold as under way: deleting it on the node');
    await this.deleteOnNode(server, report.backupId).catch((err: unknown) => {
      log.warn({ serverId: server.id, backupId: report.backupId, err: err instanceof Error ? err.message : String(err) }, 'could not delete a backup the panel does not hold');
    });
  }

  private async fail(backup: Backup, error: string): Promise<void> {
    Object.assign(backup, { status: 'failed', error, completedAt: new Date() });
    await this.em.fork().nativeUpdate(Backup, { id: backup.id }, { status: backup.status, error, completedAt: backup.completedAt });
  }

  private announce(serverId: string, backup: Backup): void {
    void this.bus.publish(serverId, { type: 'backup', data: plain(backup) }).catch(() => undefined);
  }
}

/** A backup as it travels on the bus (no entity references). */
function plain(b: Backup): Backup {
  const { server, ...rest } = b;
  return { ...rest, serverId: server.id } as unknown as Backup;
}

const reviveBackup = (b: Backup): Backup => ({
  ...b,
  createdAt: new Date(b.createdAt),
  completedAt: b.completedAt ? new Date(b.completedAt) : null,
});
