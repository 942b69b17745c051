/**
 * One SFTP session of one user on one server: each request is checked against the permission policy
 * with the keys and folder scopes the panel granted at login (and, beyond listing, the blueprint's
 * file deny-list), then carried out by the server's file
 * worker (as the server's uid, through the jail), exactly like the HTTP file routes. Paths are the
 * server's: `/` is its root, and `..` never leads above it.
 */
import type { Attributes, FileEntry, SFTPWrapper } from 'ssh2';
import { utils } from 'ssh2';
import { may, writesNewOnly, type ServerAccess } from '../../permissions/policy';
import type { PermissionKey } from '../../permissions/keys';
import { deniedMessage, denylistMatcher, type DenylistMatcher } from '../../shared/file-denylist';
import type { SftpGrant } from '../../shared/node-protocol';
import { AgentError } from '../errors';
import type { Entry } from '../filesystem/jail';
import { displayPath, linkDestination, pathComponents } from '../filesystem/paths';
import type { FileRequest, FileResult } from '../filesystem/protocol';
import type { Reach } from '../filesystem/reach';
import { answerError as failed, type ServerFiles } from '../filesystem/server-files';
import type { Server } from '../server/server';
import { SftpActivity } from './activity';
import type { ConnectionAllowances } from './allowance';
import { DirHandle, ReadHandle, WriteHandle, type Handle } from './handles';

const { OPEN_MODE, STATUS_CODE } = utils.sftp;
/** Files and folders one connection may hold open at once, all its channels together (clients keep a few; FileZilla two). */
export const MAX_HANDLES = 256;
/** Bytes of writes one connection may hold ahead of their place (64 requests of 256 KiB, more than clients keep in flight). */
export const MAX_AHEAD_BYTES = 16 * 1024 * 1024;
const DIR_PAGE = 500;
/** The most a READ answers (a shorter answer is allowed; OpenSSH's server gives at most 256 KiB too): a client's length is a uint32. */
export const MAX_READ_BYTES = 256 * 1024;
const TYPE_BITS = { file: 0o100000, directory: 0o040000, symlink: 0o120000, other: 0 } as const;

const denied = (message: string): AgentError => new AgentError(403, 'FORBIDDEN', message);
const NOT_UTF8 = 'The path is not valid UTF-8 (or holds U+FFFD, which SFTP cannot tell apart from such bytes): set your SFTP client to UTF-8, or rename the file in the file manager.';
/** The requests that only list (file.read): the deny-list does not apply to them. */
const LISTING: ReadonlySet<FileRequest['op']> = new Set(['list', 'stat', 'readlink']);

function attrsOf(e: Entry): Attributes {
  const t = Math.floor(Date.parse(e.modifiedAt) / 1000);
  return { mode: TYPE_BITS[e.type] | parseInt(e.mode, 8), uid: 0, gid: 0, size: e.size, atime: t, mtime: t };
}

/** `ls -l`'s line for an entry (what `sftp`'s `ls -l` shows). */
function longname(e: Entry): string {
  const bits = parseInt(e.mode, 8);
  const rwx = [6, 3, 0].map((s) => ((bits >> s) & 4 ? 'r' : '-') + ((bits >> s) & 2 ? 'w' : '-') + ((bits >> s) & 1 ? 'x' : '-')).join('');
  const type = e.type === 'directory' ? 'd' : e.type === 'symlink' ? 'l' : '-';
  const date = new Date(e.modifiedAt).toUTCString().slice(5, 22);
  return `${type}${rwx} 1 server server ${String(e.size).padStart(10)} ${date} ${e.name}`;
}

export class SftpSession {
  private readonly handles = new Map<string, Handle>();
  private nextHandle = 0;
  /** see stop() */
  private stopped = false;
  /** end() has run: the connection is gone */
  private ended = false;
  private readonly access: ServerAccess;
  private readonly deniedBy: DenylistMatcher;
  /** what its requests may reach where paths really lead (src/agent/filesystem/reach.ts) */
  private readonly reach: { listing: Reach; acting: Reach };

  constructor(
    private readonly sftp: SFTPWrapper,
    readonly grant: SftpGrant,
    private readonly files: ServerFiles,
    private readonly activity: SftpActivity,
    /** told when a request begins (1) and when it is answered (-1): the idle timer */
    private readonly touched: (change: 1 | -1) => void,
    /** the connecting client, as ssh2 tells it apart */
    private readonly client: { openSsh: boolean },
    /** what the connection's channels may hold at once, together */
    private readonly allowances: ConnectionAllowances,
  ) {
    this.access = { serverId: grant.serverId, ownerId: '', role: grant.role, keys: new Set(grant.keys as PermissionKey[]), paths: grant.paths };
    this.deniedBy = denylistMatcher(grant.denied);
    const scopes = grant.role === 'subuser' && grant.paths.length ? grant.paths : undefined;
    this.reach = { listing: { scopes }, acting: { scopes, denied: grant.denied?.length ? grant.denied : undefined } };
    this.bind();
  }

  /** The connection is being ended (server.ts hangUp): every request is refused from now on. */
  stop(): void {
    this.stopped = true;
  }

  /** Drops what is still open: unfinished uploads leave the old files as they were. */
  end(): void {
    this.ended = true;
    for (const h of this.handles.values()) drop(h);
    this.allowances.handles.give(this.handles.size);
    this.handles.clear();
    this.activity.flush();
  }

  private bind(): void {
    const s = this.sftp;
    // the client is done (its end of the channel closed): close ours, or it waits for us forever
    s.on('end', () => s.end());
    const on = (event: string, fn: (id: number, ...args: never[]) => Promise<void>) =>
      s.on(event as 'OPEN', (id: number, ...args: unknown[]) => {
        if (this.stopped) return void this.refuse(id);
        this.touched(1);
        fn(id, ...(args as never[]))
          .catch((err) => this.fail(id, err))
          .finally(() => this.touched(-1));
      });
    on('REALPATH', (id, p: string) => this.realpath(id, p));
    on('STAT', (id, p: string) => this.stat(id, p, true));
    on('LSTAT', (id, p: string) => this.stat(id, p, false));
    on('FSTAT', async (id, h: Buffer) => this.fstat(id, h));
    on('OPENDIR', (id, p: string) => this.opendir(id, p));
    on('READDIR', (id, h: Buffer) => this.readdir(id, h));
    on('OPEN', (id, p: string, flags: number) => this.open(id, p, flags));
    on('READ', (id, h: Buffer, offset: number, length: number) => this.read(id, h, offset, length));
    on('WRITE', (id, h: Buffer, offset: number, data: Buffer) => this.write(id, h, offset, data));
    on('CLOSE', (id, h: Buffer) => this.close(id, h));
    on('MKDIR', (id, p: string) => this.mkdir(id, p));
    on('RMDIR', (id, p: string) => this.remove(id, p, 'rmdir'));
    on('REMOVE', (id, p: string) => this.remove(id, p, 'unlink'));
    on('RENAME', (id, from: string, to: string) => this.rename(id, from, to));
    on('SETSTAT', (id, p: string, attrs: Attributes) => this.setstat(id, p, attrs));
    on('FSETSTAT', (id, h: Buffer, attrs: Attributes) => this.fsetstat(id, h, attrs));
    on('READLINK', (id, p: string) => this.readlink(id, p));
    // every client sends the link's target first (OpenSSH's order: see server.ts), and ssh2 hands the
    // two over swapped for an OpenSSH (or dropbear) client
    on('SYMLINK', (id, first: string, second: string) => (this.client.openSsh ? this.symlink(id, second, first) : this.symlink(id, first, second)));
  }

  private refuse(id: number): void {
    try {
      this.sftp.status(id, STATUS_CODE.PERMISSION_DENIED, 'This session has ended.');
    } catch {
      /* the channel is closing */
    }
  }

  private fail(id: number, err: unknown): void {
    const e = err instanceof AgentError ? err : null;
    const code =
      e?.status === 404 ? STATUS_CODE.NO_SUCH_FILE : e?.status === 403 || e?.code === 'INVALID_PATH' ? STATUS_CODE.PERMISSION_DENIED : STATUS_CODE.FAILURE;
    const message = e ? e.message : 'The request failed on the node.';
    this.sftp.status(id, code, message);
  }

  /** A request's path from the root: a relative one is under the session's home (what `realpath('.')` answers). */
  private absolute(raw: string): string {
    return raw.startsWith('/') ? raw : `${this.access.paths[0] ?? ''}/${raw}`;
  }

  /** A request's path, normalised from the root; throws INVALID_PATH for one that cannot be a name. */
  private pathOf(raw: string): string {
    // ssh2 reads a request's path as UTF-8 and turns bytes that are not into U+FFFD: two names that
    // differ in such bytes would be one file here (the second upload over the first)
    if (raw.includes('\uFFFD')) throw new AgentError(422, 'INVALID_PATH', NOT_UTF8);
    return displayPath(pathComponents(this.absolute(raw)));
  }

  /** The normalised path, once the caller holds `key` there and (beyond listing) the deny-list allows it; throws FORBIDDEN. */
  private allowed(key: PermissionKey, raw: string): string {
    const path = this.pathOf(raw);
    if (!may(this.access, key, path)) {
      if (this.access.keys.has(key)) throw denied(`Your access to this server is limited to ${this.access.paths.join(', ')}.`);
      throw denied(`You need the "${key}" permission on this server; ask its owner.`);
    }
    const pattern = key === 'file.read' ? null : this.deniedBy(path);
    if (pattern !== null) throw denied(deniedMessage(path, pattern));
    return path;
  }

  private async server(): Promise<Server> {
    return this.files.open(this.grant.serverId);
  }

  /** What a request may reach where its paths really lead (the deny-list beyond listing, as `allowed`). */
  private reachOf(op: FileRequest['op']): Reach {
    return LISTING.has(op) ? this.reach.listing : this.reach.acting;
  }

  private async ask(req: FileRequest): Promise<FileResult> {
    const res = await this.files.simple(await this.server(), { ...req, reach: this.reachOf(req.op) });
    if (!res.ok) throw failed(res);
    return res.result;
  }

  /** The entry of `path` (what a link inside the server leads to, with `follow`); null when missing. */
  private async entry(path: string, follow = false): Promise<Entry | null> {
    try {
      return ((await this.ask({ op: 'stat', path, follow })) as { entry: Entry }).entry;
    } catch (err) {
      if ((err as AgentError).status === 404) return null;
      throw err;
    }
  }

  private handle(h: Buffer): Handle {
    const found = this.handles.get(h.toString('hex'));
    if (!found) throw new AgentError(422, 'INVALID_STATE', 'Unknown handle.');
    return found;
  }

  /**
   * Opens a handle within the connection's allowance (each open file holds a connection to the worker,
   * an upload its temporary file), taken before any work so that opens sent at once cannot all pass.
   */
  private async newHandle(id: number, make: () => Promise<Handle>): Promise<void> {
    const { handles } = this.allowances;
    if (!handles.take()) throw new AgentError(422, 'INVALID_STATE', `This connection has ${handles.max} files and folders open: close some before opening more.`);
    let handle: Handle;
    try {
      handle = await make();
    } catch (err) {
      handles.give();
      throw err;
    }
    // the connection ended while the handle was being made: nobody will close it (an upload's
    // temporary file and its write to the worker would stay until the agent stops)
    if (this.ended) {
      drop(handle);
      handles.give();
      return;
    }
    const key = Buffer.alloc(4);
    key.writeUInt32BE(this.nextHandle++);
    this.handles.set(key.toString('hex'), handle);
    this.sftp.handle(id, key);
  }

  /**
   * Where a path leads, lexically (`..` stops at the root, like a chroot). `.` is the session's
   * home: the root, or the first folder a scoped subuser may use.
   */
  private async realpath(id: number, raw: string): Promise<void> {
    const parts: string[] = [];
    for (const part of this.absolute(raw).split('/')) {
      if (part === '..') parts.pop();
      else if (part && part !== '.') parts.push(part);
    }
    const path = displayPath(pathComponents(displayPath(parts)));
    this.sftp.name(id, [{ filename: path, longname: path, attrs: {} as Attributes }]);
  }

  private async stat(id: number, raw: string, follow: boolean): Promise<void> {
    await this.attrsAt(id, this.allowed('file.read', raw), follow);
  }

  /** Answers the attributes of `path`, whose key the caller has shown (by path, or by the handle opened on it). */
  private async attrsAt(id: number, path: string, follow: boolean): Promise<void> {
    const entry = await this.entry(path, follow);
    if (!entry) throw new AgentError(404, 'NOT_FOUND', `${path} does not exist.`);
    this.sftp.attrs(id, attrsOf(entry));
  }

  private async opendir(id: number, raw: string): Promise<void> {
    const path = this.allowed('file.read', raw);
    await this.newHandle(id, async () => {
      const entry = await this.entry(path, true);
      if (!entry) throw new AgentError(404, 'NOT_FOUND', `${path} does not exist.`);
      if (entry.type !== 'directory') throw new AgentError(422, 'INVALID_STATE', `${path} is not a folder.`);
      return new DirHandle(path);
    });
  }

  private async readdir(id: number, h: Buffer): Promise<void> {
    const dir = this.handle(h);
    if (!(dir instanceof DirHandle)) throw new AgentError(422, 'INVALID_STATE', 'Not a folder handle.');
    if (dir.done) return void this.sftp.status(id, STATUS_CODE.EOF);
    const { entries, total } = (await this.ask({ op: 'list', path: dir.path, page: dir.page, limit: DIR_PAGE })) as { entries: Entry[]; total: number };
    dir.done = dir.page * DIR_PAGE >= total;
    dir.page += 1;
    const names: FileEntry[] = entries.map((e) => ({ filename: e.name, longname: longname(e), attrs: attrsOf(e) }));
    if (!names.length) return void this.sftp.status(id, STATUS_CODE.EOF);
    this.sftp.name(id, names);
  }

  private open(id: number, raw: string, flags: number): Promise<void> {
    return this.newHandle(id, () => (flags & OPEN_MODE.WRITE ? this.openForWriting(raw, flags) : this.openForReading(raw)));
  }

  private async openForReading(raw: string): Promise<Handle> {
    const server = await this.server();
    const path = this.allowed('file.read-content', raw);
    const entry = await this.entry(path, true);
    if (!entry) throw new AgentError(404, 'NOT_FOUND', `${path} does not exist.`);
    if (entry.type !== 'file') throw new AgentError(422, 'INVALID_STATE', `${path} is not a file.`);
    return new ReadHandle(this.files, server, path, this.reach.acting);
  }

  private async openForWriting(raw: string, flags: number): Promise<Handle> {
    const server = await this.server();
    if (flags & OPEN_MODE.READ) throw new AgentError(422, 'INVALID_STATE', 'A file is opened for reading or for writing, not both.');
    if (flags & OPEN_MODE.APPEND) throw new AgentError(422, 'INVALID_STATE', 'Appending (resuming an upload) is not supported: upload the whole file again.');
    const target = this.pathOf(raw);
    if (!may(this.access, 'file.create', target) && !may(this.access, 'file.update', target)) this.allowed('file.create', raw);
    const exists = await this.entry(target);
    if (exists && flags & OPEN_MODE.EXCL) throw new AgentError(422, 'ALREADY_EXISTS', `${raw} already exists.`);
    if (exists && exists.type !== 'file') throw new AgentError(422, 'INVALID_STATE', `${target} is not a file: it cannot be written to.`);
    if (!exists && !(flags & OPEN_MODE.CREAT)) throw new AgentError(404, 'NOT_FOUND', `${raw} does not exist.`);
    // a write replaces the whole file: without TRUNC the client means to keep what it does not write
    if (exists && !(flags & OPEN_MODE.TRUNC)) throw new AgentError(422, 'INVALID_STATE', 'Writing into part of a file is not supported: upload the whole file again (overwrite it).');
    const path = this.allowed(exists ? 'file.update' : 'file.create', raw);
    // a new file stays new: one made before the close (by the server, another client) is not replaced
    // by a caller who may not update it, nor by an exclusive open
    const createOnly = !exists && (Boolean(flags & OPEN_MODE.EXCL) || writesNewOnly(this.access, path));
    return new WriteHandle(this.files, server, path, this.reach.acting, this.allowances.aheadBytes, createOnly);
  }

  private async read(id: number, h: Buffer, offset: number, length: number): Promise<void> {
    const file = this.handle(h);
    if (!(file instanceof ReadHandle)) throw new AgentError(422, 'INVALID_STATE', 'Not a file opened for reading.');
    const data = await file.read(offset, Math.min(length, MAX_READ_BYTES));
    if (!data) return void this.sftp.status(id, STATUS_CODE.EOF);
    this.sftp.data(id, data);
  }

  private async write(id: number, h: Buffer, offset: number, data: Buffer): Promise<void> {
    const file = this.handle(h);
    if (!(file instanceof WriteHandle)) throw new AgentError(422, 'INVALID_STATE', 'Not a file opened for writing.');
    await file.write(offset, data);
    this.sftp.status(id, STATUS_CODE.OK);
  }

  private async close(id: number, h: Buffer): Promise<void> {
    const file = this.handle(h);
    this.handles.delete(h.toString('hex'));
    this.allowances.handles.give();
    if (file instanceof DirHandle) return void this.sftp.status(id, STATUS_CODE.OK);
    await file.close();
    if (file instanceof WriteHandle) {
      if (file.mode !== null) await this.ask({ op: 'chmod', path: file.path, mode: file.mode });
      this.files.changed(await this.server());
      this.activity.add('upload', file.path);
    }
    this.sftp.status(id, STATUS_CODE.OK);
  }

  private async simple(id: number, key: PermissionKey, raw: string, req: FileRequest): Promise<void> {
    this.allowed(key, raw);
    await this.ask(req);
    this.sftp.status(id, STATUS_CODE.OK);
  }

  private async mkdir(id: number, raw: string): Promise<void> {
    const path = this.allowed('file.create', raw);
    await this.simple(id, 'file.create', path, { op: 'mkdir', path });
    this.activity.add('create-directory', path);
  }

  /**
   * A link is a second way to reach where it leads: that place must be one the caller may make
   * things in (their folders) and not on the deny-list, as the link's own path must.
   */
  private async symlink(id: number, target: string, raw: string): Promise<void> {
    const link = this.allowed('file.create', raw);
    this.allowed('file.create', displayPath(linkDestination(pathComponents(link), target)));
    await this.simple(id, 'file.create', link, { op: 'symlink', path: link, target });
  }

  private async remove(id: number, raw: string, op: 'unlink' | 'rmdir'): Promise<void> {
    const path = this.allowed('file.delete', raw);
    await this.ask({ op, path });
    this.files.changed(await this.server());
    this.activity.add('delete', path);
    this.sftp.status(id, STATUS_CODE.OK);
  }

  private async rename(id: number, rawFrom: string, rawTo: string): Promise<void> {
    const from = this.allowed('file.update', rawFrom);
    const to = this.allowed('file.update', rawTo);
    await this.ask({ op: 'rename', from, to });
    this.activity.add('rename', { from, to });
    this.sftp.status(id, STATUS_CODE.OK);
  }

  /** Permission bits only (never through a link); times, owners and sizes are left as they are. */
  private async setstat(id: number, raw: string, attrs: Attributes): Promise<void> {
    const path = this.allowed('file.update', raw);
    if (typeof attrs.mode === 'number') {
      await this.ask({ op: 'chmod', path, mode: attrs.mode & 0o777 });
      this.activity.add('chmod', path);
    }
    this.sftp.status(id, STATUS_CODE.OK);
  }

  /**
   * A file being uploaded is what has come of it so far (it is not in place before the close). Any
   * other handle is what it was opened on, with the key that opened it (a download needs
   * file.read-content, not file.read: clients stat the file they have opened before reading it).
   */
  private async fstat(id: number, h: Buffer): Promise<void> {
    const file = this.handle(h);
    if (!(file instanceof WriteHandle)) return this.attrsAt(id, file.path, true);
    const now = Math.floor(Date.now() / 1000);
    this.sftp.attrs(id, { mode: TYPE_BITS.file | (file.mode ?? 0o644), uid: 0, gid: 0, size: file.written, atime: now, mtime: now });
  }

  /**
   * The mode of a file being uploaded is set once it is in place (`put -p`), with file.update as any
   * chmod (without it the upload keeps the usual 0644); other handles as setstat.
   */
  private async fsetstat(id: number, h: Buffer, attrs: Attributes): Promise<void> {
    const file = this.handle(h);
    if (!(file instanceof WriteHandle)) return this.setstat(id, file.path, attrs);
    if (typeof attrs.mode === 'number') {
      this.allowed('file.update', file.path);
      file.mode = attrs.mode & 0o777;
    }
    this.sftp.status(id, STATUS_CODE.OK);
  }

  private async readlink(id: number, raw: string): Promise<void> {
    const path = this.allowed('file.read', raw);
    const { target } = (await this.ask({ op: 'readlink', path })) as { target: string };
    this.sftp.name(id, [{ filename: target, longname: target, attrs: {} as Attributes }]);
  }
}

/** Lets go of a handle nobody will close: an upload is aborted (the old file stays), a download closed. */
function drop(h: Handle): void {
  if (h instanceof WriteHandle) h.abort();
  else if (h instanceof ReadHandle) void h.close();
}
