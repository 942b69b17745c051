/**
 * The node's backup store, outside every server's directory (`DATA_DIR/agent/backups`, root only):
 * per server, the files' contents by SHA-256 (`blobs/ab/abcd…`, each stored once however many
 * backups hold it) and one manifest per backup (every entry's path, type, mode, and a file's hash or
 * a link's target). A backup under way has a marker (`pending/<id>`), written before the agent
 * answers the request for it and removed once its end is reported (on the agent's queue file,
 * src/agent/panel-client.ts): an agent that died during one finds it at its next start and reports it
 * failed (removing what it stored), or completed when its manifest was written. A restore under way
 * has a marker too (`restoring.json`: the backup, and how many of its files are back), so that one
 * the agent's death cut off is reported failed at its next start.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync, promises as fsp, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import type { WalkEntry } from '../filesystem/protocol';

export interface ManifestEntry extends Omit<WalkEntry, 'disk'> {
  /** a file's SHA-256 (hex) */
  sha256?: string;
}

export interface Manifest {
  id: string;
  serverId: string;
  createdAt: string;
  entries: ManifestEntry[];
  files: number;
  /** bytes of the files */
  size: number;
  /** SHA-256 of the entries (the backup's identity) */
  sha256: string;
}

const ID = /^[A-Za-z0-9_-]{1,64}$/;
const SHA = /^[0-9a-f]{64}$/;

/** A restore under way (`<server>/restoring.json`): `done` of the backup's `files` are back (at least). */
export interface RestoreMarker {
  backupId: string;
  truncate: boolean;
  files: number;
  done: number;
  startedAt: string;
}

const SUBFOLDERS = ['blobs', 'manifests', 'pending', 'tmp'];

export class BackupStore {
  constructor(readonly root: string) {}

  private dir(serverId: string): string {
    if (!ID.test(serverId)) throw new Error('invalid server id');
    return path.join(this.root, serverId);
  }

  private manifestPath(serverId: string, id: string): string {
    if (!ID.test(id)) throw new Error('invalid backup id');
    return path.join(this.dir(serverId), 'manifests', `${id}.json`);
  }

  blobPath(serverId: string, sha: string): string {
    if (!SHA.test(sha)) throw new Error('invalid hash');
    return path.join(this.dir(serverId), 'blobs', sha.slice(0, 2), sha);
  }

  private markerPath(serverId: string, id: string): string {
    if (!ID.test(id)) throw new Error('invalid backup id');
    return path.join(this.dir(serverId), 'pending', id);
  }

  /**
   * The marker of a backup about to begin, written synchronously: it is on disk before the agent
   * answers the request, so an agent that dies from then on finds it at its next start.
   */
  mark(serverId: string, id: string): void {
    for (const sub of SUBFOLDERS) mkdirSync(path.join(this.dir(serverId), sub), { recursive: true, mode: 0o700 });
    writeFileSync(this.markerPath(serverId, id), new Date().toISOString());
  }

  /** Removes a backup's marker (synchronously): once its end is on the agent's event queue. */
  unmark(serverId: string, id: string): void {
    rmSync(this.markerPath(serverId, id), { force: true });
  }

  /** The folders a backup writes in (its marker is mark()'s). */
  async begin(serverId: string, _id: string): Promise<void> {
    for (const sub of SUBFOLDERS) await fsp.mkdir(path.join(this.dir(serverId), sub), { recursive: true, mode: 0o700 });
    await fsp.chmod(this.root, 0o700).catch(() => undefined);
  }

  async hasBlob(serverId: string, sha: string): Promise<boolean> {
    return fsp.access(this.blobPath(serverId, sha)).then(
      () => true,
      () => false,
    );
  }

  /**
   * The first of `shas` that has no blob, or null: one listing per two-letter folder, not one look
   * per file (a backup of 100,000 files is checked in at most 256 listings).
   */
  async firstMissing(serverId: string, shas: string[]): Promise<string | null> {
    const byPrefix = new Map<string, Set<string>>();
    for (const sha of new Set(shas)) {
      if (!SHA.test(sha)) throw new Error('invalid hash');
      const prefix = sha.slice(0, 2);
      byPrefix.set(prefix, (byPrefix.get(prefix) ?? new Set<string>()).add(sha));
    }
    const missing = await Promise.all(
      [...byPrefix].map(async ([prefix, wanted]) => {
        const present = new Set(await fsp.readdir(path.join(this.dir(serverId), 'blobs', prefix)).catch(() => [] as string[]));
        return [...wanted].find((sha) => !present.has(sha)) ?? null;
      }),
    );
    const first = new Set(missing.filter((m): m is string => m !== null));
    return shas.find((sha) => first.has(sha)) ?? null;
  }

  /** Stores `data` by its hash (once: a blob already there is kept); returns the hash and size. */
  async putBlob(serverId: string, data: Readable, signal?: AbortSignal): Promise<{ sha256: string; size: number }> {
    await fsp.mkdir(path.join(this.dir(serverId), 'tmp'), { recursive: true, mode: 0o700 });
    const tmp = path.join(this.dir(serverId), 'tmp', randomBytes(8).toString('hex'));
    const hash = createHash('sha256');
    let size = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        hash.update(chunk);
        size += chunk.length;
        cb(null, chunk);
      },
    });
    try {
      await pipeline(data, tap, (await fsp.open(tmp, 'wx', 0o600)).createWriteStream(), { signal });
      const sha256 = hash.digest('hex');
      const target = this.blobPath(serverId, sha256);
      if (await this.hasBlob(serverId, sha256)) await fsp.unlink(tmp);
      else {
        await fsp.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
        await fsp.rename(tmp, target);
      }
      return { sha256, size };
    } catch (err) {
      await fsp.unlink(tmp).catch(() => undefined);
      throw err;
    }
  }

  readBlob(serverId: string, sha: string): Readable {
    return createReadStream(this.blobPath(serverId, sha), { highWaterMark: 1024 * 1024 });
  }

  /** Writes the manifest of a backup made (its marker stays until its end is reported: unmark()). */
  async finish(manifest: Manifest): Promise<void> {
    const file = this.manifestPath(manifest.serverId, manifest.id);
    await fsp.writeFile(`${file}.tmp`, JSON.stringify(manifest), { mode: 0o600 });
    await fsp.rename(`${file}.tmp`, file);
  }

  async manifest(serverId: string, id: string): Promise<Manifest | null> {
    const text = await fsp.readFile(this.manifestPath(serverId, id), 'utf8').catch(() => null);
    return text ? (JSON.parse(text) as Manifest) : null;
  }

  async manifests(serverId: string): Promise<Manifest[]> {
    const names = await fsp.readdir(path.join(this.dir(serverId), 'manifests')).catch(() => [] as string[]);
    const all = await Promise.all(names.filter((n) => n.endsWith('.json')).map((n) => this.manifest(serverId, n.slice(0, -5))));
    return all.filter((m): m is Manifest => m !== null).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** Drops a backup's manifest and marker (finished or not; the marker stays with `keepMarker`); its blobs go at the next collect. */
  async drop(serverId: string, id: string, keepMarker = false): Promise<void> {
    await fsp.rm(this.manifestPath(serverId, id), { force: true });
    if (!keepMarker) this.unmark(serverId, id);
  }

  /**
   * Deletes the blobs no manifest holds (and half-written temporary files); returns how many. Only
   * while no backup of the server has stored anything yet (the caller's to ensure:
   * src/agent/backups/index.ts): a backup holds blobs no manifest names yet, some of them already
   * there before it began. `ignore`: markers of backups that have not begun storing (they wait for
   * this collection), or that recover() is settling.
   */
  async collect(serverId: string, ignore: (id: string) => boolean = () => false): Promise<number> {
    const used = new Set((await this.manifests(serverId)).flatMap((m) => m.entries.map((e) => e.sha256).filter((s): s is string => !!s)));
    const pending = (await fsp.readdir(path.join(this.dir(serverId), 'pending')).catch(() => [] as string[])).filter((id) => !ignore(id));
    if (pending.length) return 0; // a backup a dead agent left: recover() settles it first
    let removed = 0;
    const blobs = path.join(this.dir(serverId), 'blobs');
    for (const prefix of await fsp.readdir(blobs).catch(() => [] as string[])) {
      for (const sha of await fsp.readdir(path.join(blobs, prefix))) {
        if (used.has(sha)) continue;
        await fsp.rm(path.join(blobs, prefix, sha), { force: true });
        removed++;
      }
    }
    // half-written files of backups that ended (begin() makes the folder again for the next one)
    await fsp.rm(path.join(this.dir(serverId), 'tmp'), { recursive: true, force: true });
    return removed;
  }

  /** Servers with backups on this node (folders of the store). */
  async servers(): Promise<string[]> {
    return (await fsp.readdir(this.root).catch(() => [] as string[])).filter((id) => ID.test(id));
  }

  /** The markers of a server's backups (under way, or left by a dead agent). */
  async markers(serverId: string): Promise<string[]> {
    return (await fsp.readdir(path.join(this.dir(serverId), 'pending')).catch(() => [] as string[])).filter((id) => ID.test(id));
  }

  private restoreMarkerPath(serverId: string): string {
    return path.join(this.dir(serverId), 'restoring.json');
  }

  /** Writes (or updates) the marker of a restore under way of the server (temporary file + rename). */
  async markRestore(serverId: string, marker: RestoreMarker): Promise<void> {
    const file = this.restoreMarkerPath(serverId);
    await fsp.writeFile(`${file}.tmp`, JSON.stringify(marker), { mode: 0o600 });
    await fsp.rename(`${file}.tmp`, file);
  }

  /** Removes the marker of the server's restore (synchronously): once its end is on the agent's event queue. */
  unmarkRestore(serverId: string): void {
    rmSync(this.restoreMarkerPath(serverId), { force: true });
  }

  /**
   * The marker of a restore of the server a dead agent left: what it says, `{}` when it cannot be
   * read whole, or null when there is none.
   */
  async restoreMarker(serverId: string): Promise<Partial<RestoreMarker> | null> {
    const text = await fsp.readFile(this.restoreMarkerPath(serverId), 'utf8').catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? null : ''));
    if (text === null) return null;
    try {
      const m = JSON.parse(text) as Partial<RestoreMarker> | null;
      return m && typeof m === 'object' ? m : {};
    } catch {
      return {};
    }
  }

  /** Every backup of a server goes with it. */
  async removeServer(serverId: string): Promise<void> {
    // a backup of the server may still be writing into the folder (it fails once the server is gone)
    await fsp.rm(this.dir(serverId), { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }

  /** Bytes the server's blobs take (what its backups cost on disk). */
  async storedBytes(serverId: string): Promise<number> {
    let total = 0;
    const blobs = path.join(this.dir(serverId), 'blobs');
    for (const prefix of await fsp.readdir(blobs).catch(() => [] as string[])) {
      for (const sha of await fsp.readdir(path.join(blobs, prefix))) total += (await fsp.stat(path.join(blobs, prefix, sha))).size;
    }
    return total;
  }
}
