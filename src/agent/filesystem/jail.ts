/**
 * The file operations of one server's directory, safe against paths that lead out of it. Every
 * operation opens what it works on first and then checks where the kernel actually opened it
 * (`/proc/self/fd/N`): a symlink pointing out, made before or during the request, is found on the
 * opened descriptor, not on the string, so swapping a directory for a link between a check and a use
 * changes nothing. Names inside a checked directory are reached through its descriptor
 * (`/proc/self/fd/N/name`). The worker that runs these (worker.ts) runs as the server's own uid, so
 * even a mistake here could only touch what the server's processes can touch themselves.
 */
import { constants as C, promises as fsp, readlinkSync, type Dirent, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { AgentError, notFound } from '../errors';
import { displayPath, entryName, invalidPath, isTempName, tempName } from './paths';
import { ReachCheck, type Reach, type Use } from './reach';
import { ENTRY_BYTES } from './footprint';

/** What an existing entry takes as the disk limit counts it (its blocks, one at least). */
export const footprintOnDisk = (st: Stats): number => Math.max(st.blocks * 512, ENTRY_BYTES);

/** open(2)'s O_PATH (Linux): a descriptor of the inode itself, without reading it or following the last link. */
const O_PATH = 0o10000000;
/** How much a write gathers before it writes (and a read reads at once). */
export const WRITE_BATCH_BYTES = 1024 * 1024;

export type EntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface Entry {
  name: string;
  path: string;
  type: EntryType;
  size: number;
  mode: string;
  modifiedAt: string;
}

export const alreadyExists = (what: string, why?: string): AgentError => new AgentError(422, 'ALREADY_EXISTS', `${what} already exists${why ? `: ${why}` : ''}.`);
export const diskLimit = (): AgentError => new AgentError(422, 'DISK_LIMIT', 'The server\u2019s disk limit would be exceeded: delete files or ask for more disk.');
export const tooLarge = (max: number): AgentError =>
  new AgentError(422, 'FILE_TOO_LARGE', `The file is larger than ${max} bytes: download it instead of opening it in the editor.`, { maxBytes: max });

/**
 * Whether the server's user owns `st`. A file of another user inside the server's directory can only be
 * a hard link to a file outside it (the agent gives the server's user everything it puts there).
 */
const ownedHere = (st: Stats): boolean => st.uid === process.getuid?.();

const typeOf = (st: Stats): EntryType => (st.isFile() ? 'file' : st.isDirectory() ? 'directory' : st.isSymbolicLink() ? 'symlink' : 'other');

export function entryOf(parts: readonly string[], st: Stats): Entry {
  return {
    name: parts[parts.length - 1] ?? '/',
    path: displayPath(parts),
    type: typeOf(st),
    size: st.isFile() ? st.size : 0,
    mode: (st.mode & 0o777).toString(8).padStart(4, '0'),
    modifiedAt: st.mtime.toISOString(),
  };
}

/**
 * Opening a path the server's user may not enter: a link leading out of the server (into another
 * server's directory or the agent's), or a folder the server made unreadable to itself.
 */
function mapOpenError(err: unknown, what: string): never {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'EACCES' || code === 'EPERM') throw invalidPath(`${what} is not accessible to the server: it leads outside its directory, or its permissions forbid it.`);
  mapError(err, what);
}

/** Maps the errors of the file system to the API's (ENOENT → 404, …); others are rethrown. */
export function mapError(err: unknown, what: string): never {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (err instanceof AgentError) throw err;
  if (code === 'ENOENT') throw notFound(`${what} does not exist.`);
  if (code === 'ENOTDIR') throw notFound(`${what} does not exist (a part of the path is a file).`);
  if (code === 'EEXIST' || code === 'ENOTEMPTY') throw alreadyExists(what);
  if (code === 'ELOOP') throw invalidPath(`${what} is a symlink that cannot be followed here.`);
  if (code === 'EISDIR') throw new AgentError(422, 'INVALID_STATE', `${what} is a folder.`);
  if (code === 'EACCES' || code === 'EPERM') throw new AgentError(422, 'INVALID_STATE', `${what} is not accessible to the server (its permissions forbid it).`);
  if (code === 'ENOSPC' || code === 'EDQUOT') throw diskLimit();
  if (code === 'ENAMETOOLONG') throw invalidPath('The path is too long.');
  throw err;
}

/** A directory entry with its name as text. */
type NamedDirent = { name: string; isDirectory(): boolean };

/** The entry with its name as text, or null when the name is not UTF-8 text. */
function utf8Dirent(d: Dirent<Buffer>): NamedDirent | null {
  const name = d.name.toString('utf8');
  return Buffer.from(name, 'utf8').equals(d.name) ? { name, isDirectory: () => d.isDirectory() } : null;
}

/**
 * The names of a folder as text; a name that is not UTF-8 stops the walk (422 INVALID_STATE naming
 * it): decoded, it would name nothing, and the walk would leave it out without a word.
 */
function textNames(raw: readonly Buffer[], parts: readonly string[]): string[] {
  return raw.map((b) => {
    const name = b.toString('utf8');
    if (!Buffer.from(name, 'utf8').equals(b)) {
      throw new AgentError(422, 'INVALID_STATE', `${displayPath([...parts, name])} has a name that is not UTF-8 text: rename it (over SFTP or from the server's console) and try again.`);
    }
    return name;
  });
}

/**
 * What a walk does with a name that is not UTF-8 text: `refuse` stops it (textNames: a backup never
 * leaves out an entry without a word); `skip` leaves it out, and `remove` deletes it (a restore: a
 * backup holds only names that are text, so such an entry is never one the backup has).
 */
export type Untext = 'refuse' | 'skip' | 'remove';

/** Whether the name `b` is UTF-8 text. */
const isText = (b: Buffer): boolean => Buffer.from(b.toString('utf8'), 'utf8').equals(b);

/** The path of the raw name `name` inside the checked directory `dir`. */
const rawAt = (dir: FileHandle, name: Buffer): Buffer => Buffer.concat([Buffer.from(`/proc/self/fd/${dir.fd}/`), name]);

/** An entry removed while a walk was under way is left out; other errors stop it. */
function ignoreVanished(err: unknown): void {
  if ((err as AgentError)?.status === 404) return;
  throw err;
}

/**
 * A file of more than one name (a hard link the server's own process made) may have its other names
 * outside the folders a subuser is limited to, and its descriptor cannot tell where: such a subuser
 * may not read it or change its mode (its own path checks out; its contents and mode are the other
 * names' too). Renaming or deleting the name itself stays allowed. (The deny-list does not refuse
 * hard links: only the server's process makes them, and its console reads the files anyway.)
 */
function refuseHardLink(st: Stats, shown: string): void {
  if (st.isFile() && st.nlink > 1) {
    throw new AgentError(403, 'FORBIDDEN', `${shown} is a hard link (the file has ${st.nlink} names), and your access is limited to some folders: its other names may lie outside them. Remove its other names from the server's console, or ask the server's owner.`);
  }
}

/** What Jail.sweepTemps did: entries looked at, temporary files removed (and the disk they took), ones that could not be. */
export interface SweepResult {
  seen: number;
  removed: number;
  bytes: number;
  failed: number;
}

export class Jail {
  /** Where each checked descriptor really is, in the server (`/a/b`). */
  private readonly realOf = new WeakMap<FileHandle, string>();

  /**
   * `root`: the server's directory, its real path. `reach`: what the request may reach in it (folder
   * scopes, the deny-list), checked on where every descriptor opened really is; none: everything.
   */
  constructor(
    readonly root: string,
    private readonly reach?: ReachCheck,
  ) {}

  /** The same directory for one request that may reach only `reach`. */
  reaching(reach: Reach | undefined): Jail {
    if (!reach?.scopes?.length && !reach?.denied?.length) return this;
    return new Jail(this.root, new ReachCheck(reach));
  }

  /**
   * Where descriptor `h` really is; throws INVALID_PATH when that is outside the root, FORBIDDEN when
   * it is out of the request's reach for its `use` (closing `h` either way).
   */
  private async verify(h: FileHandle, shown: string, use: Use = 'object'): Promise<FileHandle> {
    let real: string;
    try {
      real = readlinkSync(`/proc/self/fd/${h.fd}`);
    } catch {
      real = '';
    }
    if (real !== this.root && !real.startsWith(this.root + '/')) {
      await h.close().catch(() => undefined);
      throw invalidPath(`${shown} leads outside the server\u2019s directory (through a symlink).`);
    }
    const inside = real.slice(this.root.length) || '/';
    try {
      this.reach?.check(inside, shown, use);
    } catch (err) {
      await h.close().catch(() => undefined);
      throw err;
    }
    this.realOf.set(h, inside);
    return h;
  }

  /** Checks that the entry `name` of the checked directory `dir` is in reach for its `use`. */
  private reachName(dir: FileHandle, name: string, shown: string, use: Use): void {
    if (!this.reach) return;
    const at = this.realOf.get(dir) ?? '/';
    this.reach.check(at === '/' ? `/${name}` : `${at}/${name}`, shown, use);
  }

  /** A checked descriptor of the directory `parts` (symlinks inside the server are followed). */
  async openDir(parts: readonly string[], use: Use = 'object'): Promise<FileHandle> {
    const shown = displayPath(parts);
    const h = await fsp.open(path.join(this.root, ...parts), C.O_RDONLY | C.O_DIRECTORY | C.O_NONBLOCK).catch((e) => mapOpenError(e, shown));
    return this.verify(h, shown, use);
  }

  /** The path of `name` inside the checked directory `dir`. */
  at(dir: FileHandle, name: string): string {
    return `/proc/self/fd/${dir.fd}/${name}`;
  }

  /**
   * Runs `fn` with the checked parent directory of `parts` and the last name (the entry is what the
   * request acts on, or with `use` 'way', a folder it goes through).
   */
  async inParent<T>(parts: readonly string[], fn: (dir: FileHandle, name: string) => Promise<T>, use: Use = 'object'): Promise<T> {
    const name = entryName(parts);
    const dir = await this.openDir(parts.slice(0, -1), 'way');
    try {
      this.reachName(dir, name, displayPath(parts), use);
      return await fn(dir, name);
    } finally {
      await dir.close().catch(() => undefined);
    }
  }

  /** A checked descriptor of the entry itself (O_PATH: no read needed, the last link not followed). */
  private async openEntry(dir: FileHandle, name: string, shown: string): Promise<FileHandle> {
    const h = await fsp.open(this.at(dir, name), O_PATH | C.O_NOFOLLOW).catch((e) => mapOpenError(e, shown));
    return this.verify(h, shown);
  }

  /** The entry of `parts` (a symlink is the link itself). */
  async stat(parts: readonly string[]): Promise<Entry> {
    if (!parts.length) {
      const dir = await this.openDir([]);
      try {
        return entryOf([], await dir.stat());
      } finally {
        await dir.close();
      }
    }
    return this.inParent(parts, async (dir, name) => entryOf(parts, await fsp.lstat(this.at(dir, name)).catch((e) => mapError(e, displayPath(parts)))));
  }

  /** The entry `parts` leads to: a symlink inside the server is followed, one pointing out is refused. */
  async statFollowing(parts: readonly string[]): Promise<Entry> {
    if (!parts.length) return this.stat(parts);
    const shown = displayPath(parts);
    const h = await this.inParent(parts, (dir, name) => fsp.open(this.at(dir, name), O_PATH).catch((e) => mapOpenError(e, shown)));
    await this.verify(h, shown);
    try {
      return entryOf(parts, await h.stat());
    } finally {
      await h.close().catch(() => undefined);
    }
  }

  private async rootStat(): Promise<Stats> {
    const dir = await this.openDir([]);
    try {
      return await dir.stat();
    } finally {
      await dir.close();
    }
  }

  /** A page of a directory: folders first, then by name. */
  async list(parts: readonly string[], page: number, limit: number): Promise<{ items: Entry[]; total: number }> {
    const dir = await this.openDir(parts);
    try {
      const raw = await fsp.readdir(`/proc/self/fd/${dir.fd}`, { withFileTypes: true, encoding: 'buffer' });
      // a name that is not UTF-8 text cannot be named in a request: it is neither listed nor counted
      const visible = raw.map(utf8Dirent).filter((d): d is NamedDirent => d !== null && !isTempName(d.name));
      visible.sort((a, b) => Number(b.isDirectory()) - Number(a.isDirectory()) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const slice = visible.slice((page - 1) * limit, page * limit);
      const items: Entry[] = [];
      for (const d of slice) {
        // an entry removed between readdir and lstat is left out
        const st = await fsp.lstat(this.at(dir, d.name)).catch(() => null);
        if (st) items.push(entryOf([...parts, d.name], st));
      }
      return { items, total: visible.length };
    } finally {
      await dir.close();
    }
  }

  /**
   * A checked descriptor of the regular file `parts`, open for reading (a symlink inside the server is
   * followed, one pointing out is refused; with `follow` false, `parts` itself being one is refused
   * too), with its size.
   */
  async openFile(parts: readonly string[], follow = true): Promise<{ handle: FileHandle; size: number; entry: Entry }> {
    const shown = displayPath(parts);
    return this.inParent(parts, async (dir, name) => {
      const h = await fsp.open(this.at(dir, name), C.O_RDONLY | C.O_NONBLOCK | (follow ? 0 : C.O_NOFOLLOW)).catch((e) => mapOpenError(e, shown));
      await this.verify(h, shown);
      const st = await h.stat();
      if (!st.isFile()) {
        await h.close();
        throw new AgentError(422, 'INVALID_STATE', `${shown} is not a file.`);
      }
      if (!ownedHere(st)) {
        await h.close();
        throw invalidPath(`${shown} belongs to another user of the machine (a hard link to a file outside the server?).`);
      }
      if (this.reach?.scoped) {
        try {
          refuseHardLink(st, shown);
        } catch (err) {
          await h.close();
          throw err;
        }
      }
      return { handle: h, size: st.size, entry: entryOf(parts, st) };
    });
  }

  /** The whole file when it is at most `maxBytes`, else FILE_TOO_LARGE. */
  async readFile(parts: readonly string[], maxBytes: number): Promise<Buffer> {
    const { handle, size } = await this.openFile(parts);
    try {
      if (size > maxBytes) throw tooLarge(maxBytes);
      const buf = await handle.readFile();
      if (buf.length > maxBytes) throw tooLarge(maxBytes);
      return buf;
    } finally {
      await handle.close();
    }
  }

  /**
   * Writes `data` to `parts` atomically: into a new temporary file beside it, then renamed over it (a
   * reader sees the old file or the new one). At most `allowance` bytes are written: past that the
   * write stops with DISK_LIMIT and the temporary file is removed. An existing file keeps its mode.
   * Returns the entry, whether the file is new, and the disk space of the file it replaced (`replaced`,
   * bytes of blocks as the disk budget measures them; 0 when new). `createOnly`: the file must be new,
   * at the end as at the start (it is linked into place, which fails on a file made meanwhile).
   */
  async writeFile(parts: readonly string[], data: AsyncIterable<Buffer> | Buffer, allowance: number, mode = 0o644, createOnly = false): Promise<{ entry: Entry; created: boolean; replaced: number }> {
    const shown = displayPath(parts);
    return this.inParent(parts, async (dir, name) => {
      const before = await fsp.lstat(this.at(dir, name)).catch(() => null);
      // something other than a file is in the way whoever writes; a file, for a write of a new file only
      if (before && !before.isFile()) throw new AgentError(422, 'INVALID_STATE', `${shown} exists and is not a file.`);
      if (before && createOnly) throw alreadyExists(shown);
      const temp = tempName();
      const tmpPath = this.at(dir, temp);
      const out = await fsp.open(tmpPath, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, before ? before.mode & 0o777 : mode).catch((e) => mapError(e, shown));
      let written = 0;
      try {
        const chunks = Buffer.isBuffer(data) ? [data] : data;
        // written in batches of about WRITE_BATCH_BYTES: one write call per 64 KiB chunk kept a
        // streamed upload at a fraction of the disk's speed
        let batch: Buffer[] = [];
        let batched = 0;
        for await (const chunk of chunks) {
          written += chunk.length;
          if (written > allowance) throw diskLimit();
          batch.push(chunk);
          batched += chunk.length;
          if (batched < WRITE_BATCH_BYTES) continue;
          await out.writev(batch);
          batch = [];
          batched = 0;
        }
        if (batch.length) await out.writev(batch);
        await out.sync();
        await out.close();
        if (!createOnly) await fsp.rename(tmpPath, this.at(dir, name)).catch((e) => mapError(e, shown));
        else {
          await fsp.link(tmpPath, this.at(dir, name)).catch((e) => mapError(e, shown));
          await fsp.unlink(tmpPath);
        }
      } catch (err) {
        await out.close().catch(() => undefined);
        await fsp.unlink(tmpPath).catch(() => undefined);
        throw err;
      }
      const st = await fsp.lstat(this.at(dir, name));
      return { entry: entryOf(parts, st), created: !before, replaced: before ? footprintOnDisk(before) : 0 };
    });
  }

  /**
   * Makes the folder `parts` and any missing folder on the way (a symlink inside the server is
   * followed); returns the paths of the folders it made, outermost first.
   */
  async mkdirp(parts: readonly string[]): Promise<string[][]> {
    const made: string[][] = [];
    for (let i = 1; i <= parts.length; i++) {
      const at = parts.slice(0, i);
      const isNew = await this.inParent(at, async (dir, name) => {
        const st = await fsp.stat(this.at(dir, name)).catch(() => null);
        if (st?.isDirectory()) return false;
        if (st) throw new AgentError(422, 'INVALID_STATE', `${displayPath(at)} exists and is not a folder.`);
        await fsp.mkdir(this.at(dir, name), { mode: 0o755 }).catch((e) => mapError(e, displayPath(at)));
        return true;
      }, i < parts.length ? 'way' : 'object');
      if (isNew) made.push(at);
    }
    return made;
  }

  /**
   * Makes the symlink `parts` pointing to `target` (the caller's to check: a relative path leading
   * inside, or for a restore the target the server's own link had); `parts` must not exist.
   */
  async symlink(parts: readonly string[], target: string): Promise<Entry> {
    return this.inParent(parts, async (dir, name) => {
      await fsp.symlink(target, this.at(dir, name)).catch((e) => mapError(e, displayPath(parts)));
      return entryOf(parts, await fsp.lstat(this.at(dir, name)));
    });
  }

  /** What the symlink `parts` points to. */
  async readlink(parts: readonly string[]): Promise<string> {
    return this.inParent(parts, (dir, name) =>
      fsp.readlink(this.at(dir, name)).catch((e) => {
        if ((e as NodeJS.ErrnoException).code === 'EINVAL') throw new AgentError(422, 'INVALID_STATE', `${displayPath(parts)} is not a symlink.`);
        mapError(e, displayPath(parts));
      }),
    );
  }

  /**
   * Visits `parts` and, for a folder, everything below it, folders before what they hold, names in
   * order; symlinks are visited, never followed; the file manager's temporary files are left out.
   * A name that is not UTF-8 text is refused, left out or removed, as `untext` says (see Untext).
   */
  async walk(parts: readonly string[], visit: (parts: string[], st: Stats) => Promise<void>, untext: Untext = 'refuse'): Promise<void> {
    // (a request limited to some folders is checked on text paths: it removes nothing it cannot name)
    if (untext === 'remove' && this.reach) throw new AgentError(403, 'FORBIDDEN', 'Removing names that are not UTF-8 text needs access to all of the server’s files.');
    const st = parts.length ? await this.inParent(parts, (dir, name) => fsp.lstat(this.at(dir, name)).catch((e) => mapError(e, displayPath(parts)))) : await this.rootStat();
    await visit([...parts], st);
    if (!st.isDirectory()) return;
    const dir = await this.openDir(parts);
    let names: string[];
    try {
      const raw = await fsp.readdir(`/proc/self/fd/${dir.fd}`, { encoding: 'buffer' });
      if (untext === 'refuse') names = textNames(raw, parts);
      else {
        names = raw.filter(isText).map((b) => b.toString('utf8'));
        const others = raw.filter((b) => !isText(b));
        if (untext === 'remove' && others.length) await this.removeRaw(dir, others, parts);
      }
      names = names.filter((n) => !isTempName(n)).sort();
    } finally {
      await dir.close();
    }
    for (const name of names) await this.walk([...parts, name], visit, untext).catch((e) => ignoreVanished(e));
  }

  /**
   * Removes the entries `names` (raw names, text or not) of the checked folder `dir`, at `parts`: a
   * folder with everything in it, a link as a link (never what it leads to). A folder the server
   * made read-only is opened for it, and read-only again after (the one removed is gone with it).
   */
  private async removeRaw(dir: FileHandle, names: readonly Buffer[], parts: readonly string[]): Promise<void> {
    const mode = (await dir.stat()).mode & 0o7777;
    const closed = (mode & 0o700) !== 0o700;
    if (closed) await dir.chmod(mode | 0o700).catch((e) => mapError(e, displayPath(parts)));
    try {
      for (const name of names) await this.removeRawEntry(dir, name, [...parts, name.toString('utf8')]);
    } finally {
      if (closed) await dir.chmod(mode).catch(() => undefined);
    }
  }

  /** Removes the entry `name` of the checked folder `dir` (see removeRaw); `parts`: its path, for messages. */
  private async removeRawEntry(dir: FileHandle, name: Buffer, parts: readonly string[]): Promise<void> {
    const shown = displayPath(parts);
    const at = rawAt(dir, name);
    // the entry itself, never what a link leads to; checked where it was opened, as everything here
    const entry = await fsp.open(at, O_PATH | C.O_NOFOLLOW).catch((e) => ((e as NodeJS.ErrnoException).code === 'ENOENT' ? null : mapOpenError(e, shown)));
    if (!entry) return;
    await this.verify(entry, shown);
    try {
      const st = await entry.stat();
      if (!st.isDirectory()) {
        await fsp.unlink(at).catch((e) => ((e as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : mapError(e, shown)));
        return;
      }
      // a folder the server closed to itself is opened to be emptied (through its descriptor)
      if ((st.mode & 0o700) !== 0o700) await fsp.chmod(`/proc/self/fd/${entry.fd}`, (st.mode & 0o7777) | 0o700).catch((e) => mapError(e, shown));
      // (reopened through its descriptor: the same folder, whatever its name leads to now)
      const inner = await fsp.open(`/proc/self/fd/${entry.fd}`, C.O_RDONLY | C.O_DIRECTORY | C.O_NONBLOCK).catch((e) => mapOpenError(e, shown));
      await this.verify(inner, shown);
      try {
        await this.removeRaw(inner, await fsp.readdir(`/proc/self/fd/${inner.fd}`, { encoding: 'buffer' }), parts);
      } finally {
        await inner.close().catch(() => undefined);
      }
      await fsp.rmdir(at).catch((e) => ((e as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : mapError(e, shown)));
    } finally {
      await entry.close().catch(() => undefined);
    }
  }

  /**
   * Removes the temporary files of writes (isTempName: exactly the names writeFile makes) anywhere
   * below the root: what a write leaves when the worker or the agent is killed in the middle of it.
   * The file worker runs this when it starts, before it listens: every write runs in the worker, and
   * the agent runs one worker per server at a time, so no write is under way (see worker.ts).
   * Folders are opened without following a link and checked where they were opened, as everywhere
   * here; a temporary name that is a folder or a link is removed as what it is (removeRawEntry),
   * never followed. A folder that cannot be opened (the server closed it to itself, or it went
   * meanwhile) is left as it is; a name that is not UTF-8 text is never a write's (its path could
   * not be named in a request). `progress` is called as entries are looked at.
   */
  async sweepTemps(progress?: (seen: number, removed: number) => void): Promise<SweepResult> {
    if (this.reach) throw new AgentError(403, 'FORBIDDEN', 'Removing temporary files needs access to all of the server’s files.');
    const done: SweepResult = { seen: 0, removed: 0, bytes: 0, failed: 0 };
    // folders still to look into: a list, not a recursion (a deep tree holds no descriptor per level)
    const folders: string[][] = [[]];
    for (let parts = folders.pop(); parts !== undefined; parts = folders.pop()) {
      const shown = displayPath(parts);
      const flags = C.O_RDONLY | C.O_DIRECTORY | C.O_NONBLOCK | (parts.length ? C.O_NOFOLLOW : 0);
      const opened = await fsp.open(path.join(this.root, ...parts), flags).catch(() => null);
      const dir = opened && (await this.verify(opened, shown).catch(() => null));
      if (!dir) continue;
      try {
        const raw = await fsp.readdir(`/proc/self/fd/${dir.fd}`, { withFileTypes: true, encoding: 'buffer' }).catch(() => [] as Dirent<Buffer>[]);
        for (const d of raw) {
          done.seen++;
          progress?.(done.seen, done.removed);
          if (!isText(d.name)) continue;
          const name = d.name.toString('utf8');
          if (!isTempName(name)) {
            if (d.isDirectory()) folders.push([...parts, name]);
            continue;
          }
          const st = await fsp.lstat(this.at(dir, name)).catch(() => null);
          if (!st) continue; // gone meanwhile
          // one that cannot be removed (a folder in it the server closed to itself) stays, counted
          if (!(await this.removeRawEntry(dir, d.name, [...parts, name]).then(() => true, () => false))) {
            done.failed++;
            continue;
          }
          done.removed++;
          done.bytes += footprintOnDisk(st);
        }
      } finally {
        await dir.close().catch(() => undefined);
      }
    }
    return done;
  }

  async mkdir(parts: readonly string[]): Promise<Entry> {
    return this.inParent(parts, async (dir, name) => {
      await fsp.mkdir(this.at(dir, name), { mode: 0o755 }).catch((e) => mapError(e, displayPath(parts)));
      return entryOf(parts, await fsp.lstat(this.at(dir, name)));
    });
  }

  /** Renames or moves `from` to `to` (the link itself when `from` is a symlink); `to` must not exist. */
  async rename(from: readonly string[], to: readonly string[]): Promise<Entry> {
    const target = entryName(to);
    return this.inParent(from, async (src, name) => {
      const dst = await this.openDir(to.slice(0, -1), 'way');
      try {
        this.reachName(dst, target, displayPath(to), 'object');
        await fsp.lstat(this.at(src, name)).catch((e) => mapError(e, displayPath(from)));
        if (await fsp.lstat(this.at(dst, target)).catch(() => null)) throw alreadyExists(displayPath(to));
        await fsp.rename(this.at(src, name), this.at(dst, target)).catch((e) => {
          // the kernel's word for a folder moved into itself (or below it)
          if ((e as NodeJS.ErrnoException).code === 'EINVAL') throw new AgentError(422, 'INVALID_STATE', `${displayPath(from)} cannot be moved into itself: choose a place outside it.`);
          mapError(e, displayPath(to));
        });
        return entryOf(to, await fsp.lstat(this.at(dst, target)));
      } finally {
        await dst.close();
      }
    });
  }

  /** Removes `parts`: a file, a link (never what it points to) or a folder with everything in it. */
  async remove(parts: readonly string[]): Promise<void> {
    if (!parts.length) throw invalidPath('The server\u2019s root folder cannot be deleted.');
    await this.inParent(parts, async (dir, name) => {
      await fsp.lstat(this.at(dir, name)).catch((e) => mapError(e, displayPath(parts)));
      await fsp.rm(this.at(dir, name), { recursive: true, force: false }).catch((e) => mapError(e, displayPath(parts)));
    });
  }

  /**
   * Removes every path of `list` (see remove), or nothing when one of them does not exist (404,
   * unless `missingOk`: then it is skipped) or is the root: all are checked first. The same path
   * twice, or one inside another of the list (a folder and a file in it, ticked together), is removed
   * once; one removed meanwhile by the server's own process is gone as asked.
   */
  async removeAll(list: readonly (readonly string[])[], missingOk = false): Promise<void> {
    const keys = new Set(list.map((parts) => parts.join('/')));
    const insideAnother = (parts: readonly string[]) => parts.some((_, k) => k > 0 && keys.has(parts.slice(0, k).join('/')));
    const seen = new Set<string>();
    const top = list.filter((parts) => {
      const key = parts.join('/');
      if (seen.has(key) || insideAnother(parts)) return false;
      seen.add(key);
      return true;
    });
    for (const parts of top) {
      if (!parts.length) throw invalidPath('The server\u2019s root folder cannot be deleted.');
      await this.stat(parts).catch((e) => {
        if (!missingOk) throw e;
        ignoreVanished(e);
      });
    }
    for (const parts of top) await this.remove(parts).catch(ignoreVanished);
  }

  /** Removes one file or link, never a folder (SFTP's REMOVE). */
  async unlink(parts: readonly string[]): Promise<void> {
    if (!parts.length) throw invalidPath('The server\u2019s root folder cannot be deleted.');
    await this.inParent(parts, (dir, name) => fsp.unlink(this.at(dir, name)).catch((e) => mapError(e, displayPath(parts))));
  }

  /** Removes an empty folder (SFTP's RMDIR). */
  async rmdir(parts: readonly string[]): Promise<void> {
    if (!parts.length) throw invalidPath('The server\u2019s root folder cannot be deleted.');
    await this.inParent(parts, (dir, name) =>
      fsp.rmdir(this.at(dir, name)).catch((e) => {
        if ((e as NodeJS.ErrnoException).code === 'ENOTEMPTY') throw new AgentError(422, 'INVALID_STATE', `${displayPath(parts)} is not empty.`);
        mapError(e, displayPath(parts));
      }),
    );
  }

  /** Sets the permission bits of `parts`; never through a symlink (a link is refused). */
  async chmod(parts: readonly string[], mode: number): Promise<Entry> {
    const shown = displayPath(parts);
    if (!Number.isInteger(mode) || mode < 0 || mode > 0o777) throw new AgentError(422, 'VALIDATION_ERROR', 'mode: permission bits only (0000 to 0777)', { fields: { mode: 'must be an octal string of permission bits, 000 to 777' } });
    return this.inParent(parts, async (dir, name) => {
      const h = await this.openEntry(dir, name, shown);
      try {
        const st = await h.stat();
        if (st.isSymbolicLink()) throw invalidPath(`${shown} is a symlink: change the file it points to instead.`);
        if (this.reach?.scoped) refuseHardLink(st, shown);
        await fsp.chmod(`/proc/self/fd/${h.fd}`, mode).catch((e) => mapError(e, shown));
        return entryOf(parts, await h.stat());
      } finally {
        await h.close().catch(() => undefined);
      }
    });
  }

  /** Copies the file `parts` beside itself as `name copy.ext`, `name copy 2.ext`, … (at most `allowance` bytes). */
  async copy(parts: readonly string[], allowance: number): Promise<Entry> {
    const { handle, size } = await this.openFile(parts);
    try {
      if (size > allowance) throw diskLimit();
      const name = entryName(parts);
      const dirParts = parts.slice(0, -1);
      const ext = path.extname(name);
      const stem = ext && ext !== name ? name.slice(0, -ext.length) : name;
      const suffix = ext && ext !== name ? ext : '';
      return await this.inParent([...dirParts, name], async (dir) => {
        for (let n = 1; n < 1000; n++) {
          const candidate = `${stem} copy${n === 1 ? '' : ` ${n}`}${suffix}`;
          try {
            await fsp.copyFile(`/proc/self/fd/${handle.fd}`, this.at(dir, candidate), C.COPYFILE_EXCL);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
            mapError(err, displayPath(parts));
          }
          return entryOf([...dirParts, candidate], await fsp.lstat(this.at(dir, candidate)));
        }
        throw alreadyExists('Too many copies');
      });
    } finally {
      await handle.close();
    }
  }

  /**
   * Entries below `parts` whose name contains `query` (case-insensitive), depth first, symlinks not
   * followed; at most `max` results and `maxVisited` entries looked at.
   */
  async search(parts: readonly string[], query: string, max = 1000, maxVisited = 200_000): Promise<Entry[]> {
    const needle = query.toLowerCase();
    const found: Entry[] = [];
    let visited = 0;
    // the folder searched must open; one below it that cannot (gone, unreadable, swapped for a link
    // out of reach) is left out
    const walk = async (at: readonly string[], top = false): Promise<void> => {
      const dir = await this.openDir(at).catch((e) => (top ? Promise.reject(e) : null));
      if (!dir) return;
      try {
        const raw = await fsp.readdir(`/proc/self/fd/${dir.fd}`, { withFileTypes: true, encoding: 'buffer' }).catch(() => [] as Dirent<Buffer>[]);
        const names = raw.map(utf8Dirent).filter((d): d is NamedDirent => d !== null);
        names.sort((a, b) => (a.name < b.name ? -1 : 1));
        for (const d of names) {
          if (found.length >= max || ++visited > maxVisited) return;
          if (isTempName(d.name)) continue;
          if (d.name.toLowerCase().includes(needle)) {
            const st = await fsp.lstat(this.at(dir, d.name)).catch(() => null);
            if (st) found.push(entryOf([...at, d.name], st));
          }
          if (d.isDirectory()) await walk([...at, d.name]);
        }
      } finally {
        await dir.close();
      }
    };
    await walk(parts, true);
    return found;
  }
}
