/**
 * Making, restoring and streaming a backup. The server's files are read and written by its file
 * worker (as its uid, through the jail), exactly as the file manager does; only the store
 * (store.ts) is the agent's own.
 *
 * - Making: every entry of the server's tree (links as links, never followed), less what the ignore
 *   patterns match (gitignore style: the request's, else `.hostpanelignore` at the root; bounded in
 *   ignored.ts). A file whose size and modification time are those of the previous backup (and
 *   older than it) keeps its hash without being read again; any other file is read and stored by
 *   its hash, several files at once (READ_AHEAD), the manifest in the walk's order. The server may
 *   be running: an entry deleted (or replaced by one of another type) after the walk listed it is
 *   left out, as is one made after the walk passed its folder.
 * - Restoring: each file is streamed from the store into an atomic write while its hash is checked;
 *   a mismatch fails the restore, names the file, and leaves that file as it was. A file that holds
 *   the backup's contents already is left as it is. Folders, links (their targets as they were) and
 *   modes follow; `truncate` first deletes what the backup does not have (names that are not UTF-8
 *   text included: a backup never has one), and without it such names are left as they are.
 * - Streaming: a `.tar.gz` made on the fly from the manifest and the stored files, its member names
 *   the stored paths as they are (tar-stream, not archiver: archiver rewrites names).
 */
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Transform, type Readable } from 'node:stream';
import { AgentError } from '../errors';
import type { WalkEntry } from '../filesystem/protocol';
import { answerError, type ServerFiles } from '../filesystem/server-files';
import { addTarEntry, tarGz, type TarPack } from '../filesystem/tar-gz';
import type { Server } from '../server/server';
import { BATCH, IgnoreMatcher } from './ignored';
import type { BackupStore, Manifest, ManifestEntry } from './store';

const IGNORE_FILE = '/.hostpanelignore';
/** A file changed within this long before the previous backup may have changed again unseen. */
const RACY_MS = 2_000;

/**
 * How many of a backup's files are read and stored at once. Each is a request to the server's file
 * worker and a file in the store: one at a time, a backup of many small files waited on every round
 * trip in turn (3,000 files: 20 s on an idle 2-core machine, over 100 s on a busy one).
 */
export const READ_AHEAD = 8;

/**
 * `fn` over `source`, at most `limit` under way at once, the results in the source's order. When one
 * fails (or the consumer stops), no new one starts, and the failure is thrown once those under way
 * have settled: nothing is still writing when the caller cleans up.
 */
async function* mapInOrder<T, R>(source: AsyncIterable<T>, limit: number, fn: (item: T) => Promise<R>): AsyncGenerator<R> {
  const running: Promise<R>[] = [];
  const start = (item: T) => {
    const p = fn(item);
    p.catch(() => undefined); // awaited in its turn below: not unhandled before that
    running.push(p);
  };
  try {
    for await (const item of source) {
      start(item);
      if (running.length >= limit) yield await running.shift()!;
    }
    while (running.length) yield await running.shift()!;
  } finally {
    await Promise.allSettled(running);
  }
}

export interface BackupProgress {
  files: number;
  bytes: number;
}

/**
 * The server's tree, as its worker walks it. A name that is not UTF-8 text fails the walk naming it,
 * unless `untext` says to leave it out or remove it (a restore's: no backup has such a name).
 */
async function* walk(files: ServerFiles, server: Server, untext?: 'skip' | 'remove'): AsyncGenerator<WalkEntry> {
  const { res, body } = await files.ask(server, { op: 'walk', path: '/', ...(untext ? { untext } : {}) });
  if (!res.ok) {
    body.destroy();
    throw answerError(res);
  }
  let ended = false;
  for await (const line of createInterface({ input: body, crlfDelay: Infinity })) {
    const entry = JSON.parse(line) as WalkEntry & { end?: true; error?: { status: number; code: string; message: string } };
    if (entry.error) {
      body.destroy();
      throw new AgentError(entry.error.status, entry.error.code, entry.error.message);
    }
    if (entry.end) {
      ended = true;
      break;
    }
    yield entry;
  }
  body.destroy();
  if (!ended) throw new AgentError(500, 'INTERNAL_ERROR', 'Reading the server\u2019s files was cut off.');
}

const IGNORE_MAX = 64 * 1024;

/**
 * The lines of `.hostpanelignore` at the server's root; none when there is no such file. One the node
 * cannot use (too large, unreadable, a folder...) fails the backup, naming it: leaving it out silently
 * would back up what the user asked to leave out.
 */
async function ignoreFileLines(files: ServerFiles, server: Server): Promise<string[]> {
  const name = IGNORE_FILE.slice(1);
  const { res, body } = await files.ask(server, { op: 'read', path: IGNORE_FILE, maxBytes: IGNORE_MAX });
  if (!res.ok) {
    body.destroy();
    if (res.code === 'NOT_FOUND') return [];
    if (res.code === 'FILE_TOO_LARGE') throw new AgentError(422, 'VALIDATION_ERROR', `${name} is larger than 64 KiB: shorten it (or give the patterns in the backup's request), then back up again.`);
    throw new AgentError(422, 'VALIDATION_ERROR', `${name} cannot be read (${res.message}): fix it or delete it, then back up again.`);
  }
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/);
}

/**
 * The contents of the file a walk listed at `path` (a link there is never followed), or null when it
 * is no longer there: deleted, or replaced by a folder or a link, since the walk passed it.
 */
async function openListed(files: ServerFiles, server: Server, path: string): Promise<Readable | null> {
  const { res, body } = await files.ask(server, { op: 'download', path, noFollow: true });
  if (res.ok) return body;
  body.destroy();
  if (res.code === 'NOT_FOUND') return null;
  const now = await files.simple(server, { op: 'stat', path });
  if (now.ok ? 'entry' in now.result && now.result.entry?.type !== 'file' : now.code === 'NOT_FOUND') return null;
  throw answerError(res);
}

/** The SHA-256 of the file at `path` as it is now, or null when it cannot be read whole. */
async function hashNow(files: ServerFiles, server: Server, path: string): Promise<string | null> {
  const file = await openListed(files, server, path).catch(() => null);
  if (!file) return null;
  const hash = createHash('sha256');
  try {
    for await (const chunk of file) hash.update(chunk as Buffer);
  } catch {
    return null;
  }
  return hash.digest('hex');
}

/** The walk's entries less those the patterns match, matched a batch at a time (ignored.ts). */
async function* kept(entries: AsyncIterable<WalkEntry>, matcher: IgnoreMatcher): AsyncGenerator<WalkEntry> {
  let batch: WalkEntry[] = [];
  const unmatched = () => {
    const ignored = matcher.ignores(batch.map((e) => e.path.slice(1) + (e.type === 'directory' ? '/' : '')));
    const out = batch.filter((_, i) => !ignored[i]);
    batch = [];
    return out;
  };
  for await (const e of entries) {
    batch.push(e);
    if (batch.length >= BATCH) yield* unmatched();
  }
  yield* unmatched();
}

/** Makes a backup of the server's files; `signal` stops it (rejecting) between two files or during one. */
export async function makeBackup(o: {
  files: ServerFiles;
  store: BackupStore;
  server: Server;
  id: string;
  ignored: string[];
  progress: (p: BackupProgress) => void;
  signal: AbortSignal;
}): Promise<Manifest> {
  const serverId = o.server.spec.id;
  await o.store.begin(serverId, o.id);
  const patterns = o.ignored.length ? o.ignored : await ignoreFileLines(o.files, o.server);
  const matcher = new IgnoreMatcher(patterns);
  const previous = (await o.store.manifests(serverId)).pop();
  const known = new Map((previous?.entries ?? []).filter((e) => e.type === 'file').map((e) => [e.path, e]));
  const racyAfter = previous ? Date.parse(previous.createdAt) - RACY_MS : 0;
  const entries: ManifestEntry[] = [];
  const done: BackupProgress = { files: 0, bytes: 0 };
  let shown = 0;
  const stored = mapInOrder(kept(walk(o.files, o.server), matcher), READ_AHEAD, async ({ disk: _disk, ...e }): Promise<ManifestEntry | null> => {
    o.signal.throwIfAborted();
    const entry: ManifestEntry = { ...e };
    if (e.type !== 'file') return entry;
    const before = known.get(e.path);
    if (before?.sha256 && before.size === e.size && before.mtimeMs === e.mtimeMs && e.mtimeMs < racyAfter && (await o.store.hasBlob(serverId, before.sha256))) {
      entry.sha256 = before.sha256;
      return entry;
    }
    const data = await openListed(o.files, o.server, e.path);
    // gone since the walk listed it (a running server deletes and renames files): left out
    if (!data) return null;
    const blob = await o.store.putBlob(serverId, data, o.signal);
    entry.sha256 = blob.sha256;
    entry.size = blob.size;
    return entry;
  });
  for await (const entry of stored) {
    if (!entry) continue;
    if (entry.type === 'file') {
      done.files += 1;
      done.bytes += entry.size;
      if (Date.now() - shown > 500) {
        shown = Date.now();
        o.progress({ ...done });
      }
    }
    entries.push(entry);
  }
  const manifest: Manifest = {
    id: o.id,
    serverId,
    createdAt: new Date().toISOString(),
    entries,
    files: done.files,
    size: done.bytes,
    sha256: createHash('sha256').update(JSON.stringify(entries)).digest('hex'),
  };
  o.signal.throwIfAborted();
  await o.store.finish(manifest);
  return manifest;
}

/** Passes the bytes through and fails at their end unless they hash to `sha256`. */
function verified(sha256: string, path: string): Transform {
  const hash = createHash('sha256');
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk);
      cb(null, chunk);
    },
    flush(cb) {
      const got = hash.digest('hex');
      if (got === sha256) return cb();
      cb(new AgentError(422, 'BACKUP_CORRUPT', `The backup\u2019s copy of ${path} is damaged (its SHA-256 is ${got}, not ${sha256}): that file was not restored.`));
    },
  });
}

/** Runs a request; returns the entry it answered with (its mode), if any. */
async function ask(files: ServerFiles, server: Server, req: Parameters<ServerFiles['simple']>[1], tolerate: string[] = []): Promise<string | null> {
  const res = await files.simple(server, req);
  if (!res.ok && !tolerate.includes(res.code)) throw answerError(res);
  return res.ok && 'entry' in res.result ? (res.result.entry?.mode ?? null) : null;
}

const octal = (mode: number): string => mode.toString(8).padStart(4, '0');

/**
 * Puts the file `e` back, unless the file there (`now`, as the restore's walk found it) holds its
 * contents already; returns the mode of the file written, if any. The write is atomic, and judged on
 * its result against the disk limit: the file it replaces frees its blocks.
 */
async function restoreFile(store: BackupStore, files: ServerFiles, server: Server, e: ManifestEntry, now: WalkEntry | undefined): Promise<string | null> {
  if (now && now.size === e.size && (await hashNow(files, server, e.path)) === e.sha256) return null;
  const blob = store.readBlob(server.spec.id, e.sha256!);
  const check = verified(e.sha256!, e.path);
  // (the store's own path stays out of the message: users read it in the activity log)
  blob.on('error', () => check.destroy(new AgentError(422, 'BACKUP_CORRUPT', `The backup\u2019s copy of ${e.path} is missing: that file was not restored. Make a new backup.`)));
  let failure: Error | null = null;
  check.on('error', (err) => (failure = err));
  // a refused check cuts the write off: its reason is the one to tell
  const res = await files.write(server, e.path, blob.pipe(check), Infinity, undefined, now?.disk ?? 0).catch((err: Error) => {
    throw failure ?? err;
  });
  if (failure) throw failure;
  if (!res.ok && res.code === 'DISK_LIMIT') {
    throw new AgentError(422, 'DISK_LIMIT', `${e.path} does not fit in the server\u2019s disk limit as the backup has it (${e.size} bytes): that file was not restored. Delete files or ask for more disk, then restore again.`);
  }
  if (!res.ok) throw answerError(res);
  return 'entry' in res.result && res.result.entry ? res.result.entry.mode : null;
}

/** Puts the server's files back as the backup has them; `progress` hears how many of its files are back so far. */
export async function restoreBackup(o: { files: ServerFiles; store: BackupStore; server: Server; manifest: Manifest; truncate: boolean; progress?: (filesBack: number) => void }): Promise<void> {
  try {
    await restoreAll(o);
  } finally {
    // what it deleted and wrote, whether it ended or failed: the next write measures the disk again
    o.files.changed(o.server);
  }
}

async function restoreAll(o: Parameters<typeof restoreBackup>[0]): Promise<void> {
  const { files, server, manifest } = o;
  const wanted = new Map(manifest.entries.map((e) => [e.path, e]));
  // what is in the way: entries of another type, and with `truncate` everything the backup lacks
  const remove: string[] = [];
  // the modes things have now: a chmod is sent only where the backup's differs
  const modes = new Map<string, string>();
  // folders kept that their owner may not write in now: opened for the restore, their modes set last;
  // and folders to remove that their owner may not write in: opened, so that what they hold goes too
  const readOnly: { path: string; mode: number }[] = [];
  // the files there are now, by path: one that holds the backup's contents already is not written again
  const current = new Map<string, WalkEntry>();
  // a name that is not UTF-8 text is never one the backup has (backups refuse them): with `truncate`
  // it is deleted as the walk meets it (a folder with all it holds, a link as a link), else it stays
  for await (const e of walk(files, server, o.truncate ? 'remove' : 'skip')) {
    modes.set(e.path, octal(e.mode));
    if (e.type === 'file') current.set(e.path, e);
    const w = wanted.get(e.path);
    const locked = e.type === 'directory' && !(e.mode & 0o200);
    const parentRemoved = remove.some((r) => e.path.startsWith(r + '/'));
    if (parentRemoved) {
      if (locked) readOnly.push({ path: e.path, mode: e.mode });
      continue;
    }
    const removed = (w && w.type !== e.type) || (!w && o.truncate) || (w?.type === 'symlink' && w.target !== e.target);
    if (removed) remove.push(e.path);
    if (locked && (removed || w)) readOnly.push({ path: e.path, mode: e.mode });
  }
  for (const d of readOnly) {
    const made = await ask(files, server, { op: 'chmod', path: d.path, mode: d.mode | 0o700 });
    if (made) modes.set(d.path, made);
  }
  for (let i = 0; i < remove.length; i += 500) await ask(files, server, { op: 'delete', paths: remove.slice(i, i + 500), missingOk: true });
  // the disk budget measures again before the first write: what the deletes freed is room for the backup's files
  if (remove.length || o.truncate) files.changed(server);
  let back = 0;
  for (const e of manifest.entries) {
    if (e.type === 'directory') {
      const made = await ask(files, server, { op: 'mkdir', path: e.path }, ['ALREADY_EXISTS']);
      if (made) modes.set(e.path, made);
    }
    // the link the server had, its target as it was: one leading out of the server is never followed
    else if (e.type === 'symlink') await ask(files, server, { op: 'symlink', path: e.path, target: e.target ?? '', raw: true }, ['ALREADY_EXISTS']);
    else {
      const mode = await restoreFile(o.store, files, server, e, current.get(e.path));
      if (mode) modes.set(e.path, mode);
      o.progress?.(++back);
    }
  }
  // modes last, folders deepest first (a folder made read-only early would refuse what goes in it)
  for (const e of [...manifest.entries].reverse()) {
    if (e.type !== 'symlink' && modes.get(e.path) !== octal(e.mode)) await ask(files, server, { op: 'chmod', path: e.path, mode: e.mode });
  }
}

/**
 * The entry's member name: its path as stored, less the leading `/`, and nothing else changed (a
 * backslash or a leading `word:` are parts of a Linux name, not separators or drive letters). A name
 * with `..` (or `.`, or an empty part) as a whole part cannot come from a real file name: refused.
 */
function memberName(e: ManifestEntry): string {
  const name = e.path.slice(1);
  if (!e.path.startsWith('/') || name.split('/').some((part) => part === '' || part === '.' || part === '..')) {
    throw new AgentError(422, 'BACKUP_CORRUPT', `The backup lists a name that cannot be a file’s (${JSON.stringify(e.path)}): it cannot be downloaded. Make a new backup.`);
  }
  return name;
}

/**
 * Packs the backup's entries one after the other, each once the one before it is in the archive: a
 * stored file is opened only when its turn comes (a backup of 25,000 files took 25,000 descriptors at
 * once), and streamed (its size is the manifest's: a stored copy of another size fails the archive).
 * Names are written as stored (tar-stream writes a pax header for a long or non-ASCII one); every
 * entry has the backed-up date, so two downloads of one backup are the same bytes. `closed` says the
 * archive is gone (the download cut off): the stored file being read is closed with it.
 */
async function packEntries(pack: TarPack, store: BackupStore, manifest: Manifest, closed: () => boolean): Promise<void> {
  for (const e of manifest.entries) {
    if (closed()) return;
    const name = memberName(e);
    const base = { mode: e.mode, mtime: new Date(e.mtimeMs) };
    if (e.type === 'directory') await addTarEntry(pack, { ...base, name: `${name}/`, type: 'directory' });
    // (a link as a link, never followed: its target as the server had it)
    else if (e.type === 'symlink') await addTarEntry(pack, { ...base, name, type: 'symlink', linkname: e.target ?? '' });
    else await addTarEntry(pack, { ...base, name, type: 'file', size: e.size }, store.readBlob(manifest.serverId, e.sha256!));
  }
  if (!closed()) pack.finalize();
}

/**
 * The backup as a `.tar.gz` stream, made as it is read; BACKUP_CORRUPT before anything is sent when
 * the store lacks a file's copy. A copy that cannot be read later cuts the stream off.
 */
export async function backupArchive(store: BackupStore, manifest: Manifest): Promise<Readable> {
  const files = manifest.entries.filter((e) => e.type === 'file');
  const missing = await store.firstMissing(manifest.serverId, files.map((e) => e.sha256!));
  if (missing !== null) {
    const e = files.find((f) => f.sha256 === missing)!;
    throw new AgentError(422, 'INVALID_STATE', `The backup\u2019s copy of ${e.path} is missing: this backup cannot be downloaded or restored whole. Make a new backup.`);
  }
  // a name the archive could not hold as it is: refused before anything is sent
  for (const e of manifest.entries) memberName(e);
  // the download cut off or failed: the pack (and the stored file it reads) goes with it
  const { pack, gzip } = tarGz();
  packEntries(pack, store, manifest, () => gzip.destroyed).catch((err: Error) => {
    pack.destroy(err);
    gzip.destroy(err);
  });
  return gzip;
}
