/**
 * The node's backups: made and restored in the background, one at a time per server, with their
 * progress and outcome reported to the panel on the ordered event queue.
 *
 * What the agent's death must not lose: a backup's marker is written before the request for it is
 * answered and removed only once its end is on the event queue, which is kept on disk
 * (src/agent/panel-client.ts); a restore has a marker too, from before it begins until its end is on
 * the queue. At the next start recover() reports what a marker says was cut off.
 */
import type { Readable } from 'node:stream';
import { childLogger } from '../../logger';
import type { AgentEvent } from '../../shared/node-protocol';
import { AgentError, invalidState, notFound } from '../errors';
import type { ServerFiles } from '../filesystem/server-files';
import type { Server } from '../server/server';
import { backupArchive, makeBackup, restoreBackup } from './backup';
import type { BackupStore, Manifest, RestoreMarker } from './store';

const log = childLogger('agent');

/** How often (at most) a restore notes in its marker how many files are back. */
const MARKER_EVERY_MS = 100;

/** What a restore the agent's death cut off is reported with. */
function restoreCutOff(m: Partial<RestoreMarker>): string {
  const counted = Number.isInteger(m.done) && Number.isInteger(m.files) && m.done! >= 0 && m.done! <= m.files!;
  return counted
    ? `The node agent stopped during the restore; at least ${m.done} of ${m.files} files were put back: run it again.`
    : 'The node agent stopped during the restore; some files may not have been put back: run it again.';
}

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

  /**
   * At start, what a dead agent left under way: a backup without its manifest is reported failed and
   * what it stored is removed; one whose manifest was written (the agent died before it reported the
   * end) is reported completed; a restore is reported failed (with how many of its files were back).
   * Each report is on the event queue before its marker goes.
   */
  async recover(): Promise<void> {
    const at = () => new Date().toISOString();
    for (const serverId of await this.store.servers()) {
      try {
        const markers = await this.store.markers(serverId);
        for (const id of markers) {
          const manifest = await this.store.manifest(serverId, id).catch(() => null);
          if (manifest) {
            log.warn({ serverId, backupId: id }, 'the agent stopped before it reported a backup it had made: reported completed');
            this.report({ kind: 'backup', serverId, backupId: id, status: 'completed', files: manifest.files, bytes: manifest.size, sha256: manifest.sha256, at: at() });
          } else {
            log.warn({ serverId, backupId: id }, 'a backup was cut off by the agent stopping: marked failed');
            this.report({ kind: 'backup', serverId, backupId: id, status: 'failed', files: 0, bytes: 0, error: 'The node agent stopped during the backup; nothing of it was kept.', at: at() });
          }
          this.store.unmark(serverId, id);
        }
        if (markers.length) await this.store.collect(serverId);
        const restore = await this.store.restoreMarker(serverId);
        if (restore) {
          log.warn({ serverId, backupId: restore.backupId, done: restore.done, files: restore.files }, 'a restore was cut off by the agent stopping: reported failed');
          if (typeof restore.backupId === 'string') this.report({ kind: 'restore', serverId, backupId: restore.backupId, status: 'failed', error: restoreCutOff(restore), at: at() });
          this.store.unmarkRestore(serverId);
        }
      } catch (err) {
        log.error({ serverId, err: (err as Error).message }, 'could not settle what a dead agent left of the server’s backups');
      }
    }
  }

  /** Removes a backup's marker, its end being on the event queue (synchronously: it is gone before the backup is released). */
  private unmark(serverId: string, backupId: string): void {
    try {
      this.store.unmark(serverId, backupId);
    } catch (err) {
      log.warn({ serverId, backupId, err: (err as Error).message }, 'could not remove the marker of a backup');
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
      // the markers of backups that wait for this collection (they have stored nothing yet)
      .collect(serverId, (id) => this.running.has(id))
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
    // before the request is answered: an agent that dies from here on reports the backup at its next start
    try {
      this.store.mark(serverId, backupId);
    } catch (err) {
      release();
      throw err;
    }
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
      .then((m) => {
        this.report({ kind: 'backup', serverId, backupId, status: 'completed', files: m.files, bytes: m.size, sha256: m.sha256, at: at() });
        // (a marker left here is settled at the next start: the backup is reported completed again)
        this.unmark(serverId, backupId);
      })
      .catch(async (err: Error) => {
        log.warn({ serverId, backupId, err: err.message }, stop.signal.aborted ? 'backup stopped: it was deleted' : 'backup failed');
        await this.store.drop(serverId, backupId, true).catch(() => undefined);
        this.toCollect.add(serverId);
        // the server was deleted while it ran: what the backup wrote after the store went goes too
        if (server.deleted) await this.store.removeServer(serverId).catch(() => undefined);
        if (!stop.signal.aborted) this.report({ kind: 'backup', serverId, backupId, status: 'failed', files: 0, bytes: 0, error: err.message, at: at() });
        this.unmark(serverId, backupId);
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
    let marker: RestoreMarker;
    try {
      manifest = await this.store.manifest(serverId, backupId);
      if (!manifest) throw notFound('Backup not found on this node');
      // before the restore begins (and the request is answered): an agent that dies during it
      // reports it failed at its next start
      marker = { backupId, truncate, files: manifest.files, done: 0, startedAt: new Date().toISOString() };
      await this.store.markRestore(serverId, marker);
      try {
        server.beginRestore();
      } catch (err) {
        this.store.unmarkRestore(serverId);
        throw err;
      }
    } catch (err) {
      release();
      throw err;
    }
    // how many files are back, written to the marker at most every 0.1 s (one write at a time)
    let saving: Promise<void> = Promise.resolve();
    let inFlight = false;
    let savedAt = 0;
    const progress = (done: number) => {
      marker.done = done;
      if (inFlight || Date.now() - savedAt < MARKER_EVERY_MS) return;
      inFlight = true;
      savedAt = Date.now();
      saving = this.store
        .markRestore(serverId, { ...marker })
        .catch((err: Error) => log.warn({ serverId, err: err.message }, 'could not note the progress of a restore'))
        .finally(() => (inFlight = false));
    };
    void restoreBackup({ files: this.files, store: this.store, server, manifest, truncate, progress })
      .then(
        (): AgentEvent => ({ kind: 'restore', serverId, backupId, status: 'completed', at: new Date().toISOString() }),
        (err: Error): AgentEvent => {
          log.warn({ serverId, backupId, err: err.message }, 'restore failed');
          return { kind: 'restore', serverId, backupId, status: 'failed', error: err.message, at: new Date().toISOString() };
        },
      )
      .then(async (end) => {
        // the marker's last update written, the end is queued (on disk), then the marker goes
        await saving;
        this.report(end);
        try {
          this.store.unmarkRestore(serverId);
        } catch (err) {
          log.warn({ serverId, err: (err as Error).message }, 'could not remove the marker of a restore');
        }
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
