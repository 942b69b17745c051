/**
 * The node's backups: made and restored in the background, one at a time per server, with their
 * progress and outcome reported to the panel on the ordered event queue.
 */
import type { Readable } from 'node:stream';
import { childLogger } from '../../logger';
import type { AgentEvent } from '../../shared/node-protocol';
import { AgentError, invalidState, notFound } from '../errors';
import type { ServerFiles } from '../filesystem/server-files';
import type { Server } from '../server/server';
import { backupArchive, makeBackup, restoreBackup } from './backup';
import type { BackupStore, Manifest } from './store';

const log = childLogger('agent');

export class Backups {
  /** per server: how many backups are under way, or -1 for a restore (which runs alone) */
  private readonly busy = new Map<string, number>();
  /** backups under way, by id: how to stop one, and its run (settled, never rejected, when it ends) */
  private readonly running = new Map<string, { stop: AbortController; run: Promise<void> }>();
  /** servers whose unused blobs go once none of their backups is under way */
  private readonly toCollect = new Set<string>();
  /** collections under way, by server: a backup waits for its server's before it begins */
  private readonly collecting = new Map<string, Promise<void>>();
  /** per server: how many deletes of its backups are under way (a restore is refused meanwhile) */
  private readonly deleting = new Map<string, number>();

  constructor(
    readonly store: BackupStore,
    private readonly files: ServerFiles,
    private readonly report: (e: AgentEvent) => void,
  ) {}

  /** At start: backups a dead agent left unfinished are failed, and what they stored is removed. */
  async recover(): Promise<void> {
    for (const { serverId, id } of await this.store.abandoned()) {
      log.warn({ serverId, backupId: id }, 'a backup was cut off by the agent stopping: marked failed');
      this.report({ kind: 'backup', serverId, backupId: id, status: 'failed', files: 0, bytes: 0, error: 'The node agent stopped during the backup; nothing of it was kept.', at: new Date().toISOString() });
    }
  }

  /** Backups of a server may run together; a restore runs alone, and not while one of its backups is being deleted. */
  private claim(server: Server, what: 'backup' | 'restore'): () => void {
    const id = server.spec.id;
    const under = this.busy.get(id) ?? 0;
    if (under < 0) throw invalidState('A restore of this server is under way; try again when it is done.');
    if (what === 'restore' && under > 0) throw invalidState('A backup of this server is under way; restore once it is done.');
    if (what === 'restore' && this.deleting.has(id)) throw invalidState('A backup of this server is being deleted; restore once that is done.');
    this.busy.set(id, what === 'restore' ? -1 : under + 1);
    return () => {
      const now = this.busy.get(id) ?? 0;
      if (now > 1) this.busy.set(id, now - 1);
      else this.busy.delete(id);
    };
  }

  /**
   * Deletes the server's unused blobs when one was asked for and neither a backup (it holds blobs no
   * manifest names yet) nor a restore (it reads them) of the server is under way; resolves when that
   * collection is done.
   */
  private collectWhenIdle(serverId: string): Promise<void> {
    const under = this.collecting.get(serverId);
    // one asked for during a collection runs after it
    if (under) return under.then(() => this.collectWhenIdle(serverId));
    if (!this.toCollect.has(serverId) || this.busy.has(serverId)) return Promise.resolve();
    this.toCollect.delete(serverId);
    const collection = this.store
      .collect(serverId)
      .then(() => undefined)
      .catch((err: Error) => log.warn({ serverId, err: err.message }, 'could not delete the unused blobs of the server\u2019s backups'))
      .finally(() => this.collecting.delete(serverId));
    this.collecting.set(serverId, collection);
    return collection;
  }

  /** Starts a backup; its outcome is reported. */
  start(server: Server, backupId: string, ignored: string[]): void {
    const release = this.claim(server, 'backup');
    const serverId = server.spec.id;
    const at = () => new Date().toISOString();
    const stop = new AbortController();
    const run = (this.collecting.get(serverId) ?? Promise.resolve())
      .then(() =>
        makeBackup({
          files: this.files,
          store: this.store,
          server,
          id: backupId,
          ignored,
          signal: stop.signal,
          progress: (p) => this.report({ kind: 'backup', serverId, backupId, status: 'pending', ...p, at: at() }),
        }),
      )
      .then((m) => this.report({ kind: 'backup', serverId, backupId, status: 'completed', files: m.files, bytes: m.size, sha256: m.sha256, at: at() }))
      .catch(async (err: Error) => {
        log.warn({ serverId, backupId, err: err.message }, stop.signal.aborted ? 'backup stopped: it was deleted' : 'backup failed');
        await this.store.drop(serverId, backupId).catch(() => undefined);
        this.toCollect.add(serverId);
        // the server was deleted while it ran: what the backup wrote after the store went goes too
        if (server.deleted) await this.store.removeServer(serverId).catch(() => undefined);
        if (!stop.signal.aborted) this.report({ kind: 'backup', serverId, backupId, status: 'failed', files: 0, bytes: 0, error: err.message, at: at() });
      })
      .finally(() => {
        this.running.delete(backupId);
        release();
        void this.collectWhenIdle(serverId);
      });
    this.running.set(backupId, { stop, run });
  }

  /** Starts putting a backup back (the server must be offline); its outcome is reported. */
  async restore(server: Server, backupId: string, truncate: boolean): Promise<void> {
    const serverId = server.spec.id;
    // claimed first: a delete of the backup is refused from here on
    const claimed = this.claim(server, 'restore');
    const release = () => {
      claimed();
      void this.collectWhenIdle(serverId);
    };
    let manifest: Manifest | null;
    try {
      manifest = await this.store.manifest(serverId, backupId);
      if (!manifest) throw notFound('Backup not found on this node');
      server.beginRestore();
    } catch (err) {
      release();
      throw err;
    }
    void restoreBackup({ files: this.files, store: this.store, server, manifest, truncate })
      .then(() => this.report({ kind: 'restore', serverId, backupId, status: 'completed', at: new Date().toISOString() }))
      .catch((err: Error) => {
        log.warn({ serverId, backupId, err: err.message }, 'restore failed');
        this.report({ kind: 'restore', serverId, backupId, status: 'failed', error: err.message, at: new Date().toISOString() });
      })
      .finally(() => {
        server.endRestore();
        release();
      });
  }

  async download(serverId: string, backupId: string): Promise<Readable> {
    const manifest = await this.store.manifest(serverId, backupId);
    if (!manifest) throw notFound('Backup not found on this node');
    return backupArchive(this.store, manifest);
  }

  /**
   * Deletes a backup (refused during a restore of the server, and a restore is refused during it): one
   * under way is stopped first. Its blobs no other backup holds are deleted before this resolves, or,
   * while other backups of the server are under way, when they end.
   */
  async remove(serverId: string, backupId: string): Promise<void> {
    if ((this.busy.get(serverId) ?? 0) < 0) throw new AgentError(422, 'INVALID_STATE', 'A restore of this server is under way; delete the backup once it is done.');
    // counted at once: a restore asked for from here on is refused until the delete is done
    this.deleting.set(serverId, (this.deleting.get(serverId) ?? 0) + 1);
    try {
      const under = this.running.get(backupId);
      if (under) {
        under.stop.abort();
        await under.run;
      }
      await this.store.drop(serverId, backupId);
      this.toCollect.add(serverId);
      await this.collectWhenIdle(serverId);
    } finally {
      const left = this.deleting.get(serverId)! - 1;
      if (left) this.deleting.set(serverId, left);
      else this.deleting.delete(serverId);
    }
  }
}
