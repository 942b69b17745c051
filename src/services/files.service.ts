/**
 * A server's files, through its node (the agent works as the server's uid; see src/agent/filesystem).
 * Each operation checks its permission key and the caller's folder scopes first, on normalised paths,
 * then asks the node; bytes are streamed through in both directions, never held whole. Changes are
 * recorded in the activity log. Paths the server's blueprint denies (its file deny-list) are shown in
 * listings and searches, as in Pterodactyl, but every other operation on them is a 403, for everyone.
 */
import { Readable } from 'node:stream';
import type { Config } from '../config.js';
import type { Server } from '../entities/Server.js';
import { AppError } from '../errors.js';
import { assertNotDenied } from '../files/denylist.js';
import { defaultArchivePath, normalisePath, parentFolder } from '../files/paths.js';
import type { AgentClient, NodeAnswer } from '../nodes/agent-client.js';
import { encodeReach, type Reach } from '../agent/filesystem/reach.js';
import type { PermissionKey } from '../permissions/keys.js';
import { demand, may, withinScopes, writesNewOnly, type ServerAccess } from '../permissions/policy.js';
import { parseInput } from '../validation/common.js';
import { chmodInput, compressInput, decompressInput, deleteInput, pathInput, renameInput, textContentsInput, type FileListQuery, type FileSearchQuery } from '../validation/files.js';
import type { ActivityRecorder } from './activity.service.js';
import { requireActor, type Actor } from './actor.js';
import type { ServersService } from './servers.service.js';

export interface FileEntry {
  name: string;
  path: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  size: number;
  mode: string;
  modifiedAt: string;
}

interface Target {
  server: Server;
  access: ServerAccess;
  actor: Actor;
  /** what the node's worker lets the request reach where paths really lead (src/agent/filesystem/reach.ts) */
  reach: Reach;
}

/** How long the node may take to compress or decompress (the answer comes when it is done). */
const ARCHIVE_TIMEOUT_MS = 30 * 60_000;

export class FilesService {
  constructor(
    private readonly servers: ServersService,
    private readonly agents: AgentClient,
    private readonly activity: ActivityRecorder,
    private readonly config: Config,
  ) {}

  /** The most one file written or uploaded may hold (FILE_UPLOAD_MAX_BYTES). */
  get maxUploadBytes(): number {
    return this.config.fileUploadMaxBytes;
  }

  /**
   * The server, when the caller holds `key` (or one of `key`'s alternatives) for every one of `paths`
   * (normalised) and, beyond listing names (`file.read`), the blueprint's deny-list allows them.
   */
  private async target(actor: Actor | null, serverId: string, key: PermissionKey | readonly PermissionKey[], paths: string[]): Promise<Target> {
    const a = requireActor(actor);
    const { server, access } = await this.servers.access(a, serverId);
    const keys = typeof key === 'string' ? [key] : key;
    for (const p of [undefined, ...paths]) {
      if (!keys.some((k) => may(access, k, p))) demand(access, keys[0]!, p);
    }
    const denied = keys.includes('file.read') ? [] : (server.blueprint.fileDenylist ?? []);
    assertNotDenied(denied, paths);
    const reach: Reach = {};
    if (access.role === 'subuser' && access.paths.length) reach.scopes = [...access.paths];
    if (denied.length) reach.denied = [...denied];
    return { server, access, actor: a, reach };
  }

  /** The node's file route `route` with `params`, and the request's reach when it has one. */
  private url(t: Target, route: string, params: Record<string, string | number> = {}): string {
    const query = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]));
    if (t.reach.scopes || t.reach.denied) query.set('reach', encodeReach(t.reach));
    const q = query.toString();
    return `/api/servers/${t.server.id}/files${route}${q ? `?${q}` : ''}`;
  }

  /**
   * Rethrows `err`; a NOT_FOUND met by a subuser whose folder (a scope of theirs that `path` lies in
   * or on the way to) does not exist says so, and who can make it: they cannot (it, or a folder on
   * the way to it, lies outside their folders).
   */
  private async explainMissingScope(t: Target, path: string, err: unknown): Promise<never> {
    if (err instanceof AppError && err.code === 'NOT_FOUND' && t.access.role === 'subuser') {
      for (const scope of t.access.paths.filter((s) => withinScopes([s], path) || withinScopes([path], s))) {
        const there = await this.stat(t, scope).then(
          () => true,
          () => false,
        );
        if (!there) throw new AppError('NOT_FOUND', `${scope}, the folder your access to this server's files is limited to, does not exist yet: ask the server's owner to create it.`, { path: scope });
      }
    }
    throw err;
  }

  private record(t: Target, event: string, properties: Record<string, unknown>): Promise<void> {
    return this.activity.record({ event: `server:file.${event}`, serverId: t.server.id, actor: t.actor, properties });
  }

  async list(actor: Actor | null, serverId: string, q: FileListQuery): Promise<{ items: FileEntry[]; meta: { total: number; page: number; limit: number } }> {
    const path = normalisePath(q.path);
    const t = await this.target(actor, serverId, 'file.read', [path]);
    const r = await this.agents.stream(t.server.node, 'GET', this.url(t, '', { path, page: q.page, limit: q.limit })).catch((e) => this.explainMissingScope(t, path, e));
    const body = (await r.json()) as { data: FileEntry[]; meta: { total: number } };
    return { items: body.data, meta: { total: body.meta.total, page: q.page, limit: q.limit } };
  }

  async search(actor: Actor | null, serverId: string, q: FileSearchQuery): Promise<FileEntry[]> {
    const path = normalisePath(q.path);
    const t = await this.target(actor, serverId, 'file.read', [path]);
    const found = await this.agents.call<FileEntry[]>(t.server.node, 'GET', this.url(t, '/search', { path, query: q.query }));
    // a scoped subuser searching a folder above their scopes sees only what lies inside them
    return (found ?? []).filter((e) => t.access.role !== 'subuser' || withinScopes(t.access.paths, e.path));
  }

  /** A file's bytes for the editor (at most FILE_EDIT_MAX_BYTES), and whether they are UTF-8 text. */
  async contents(actor: Actor | null, serverId: string, rawPath: unknown): Promise<{ bytes: Buffer; text: boolean; path: string }> {
    const path = normalisePath(rawPath);
    const t = await this.target(actor, serverId, 'file.read-content', [path]);
    const r = await this.agents.stream(t.server.node, 'GET', this.url(t, '/contents', { path }));
    const bytes = await r.bytes();
    return { bytes, text: isUtf8(bytes), path };
  }

  /**
   * Writes a file atomically from a stream: `file.update`, or `file.create` when it does not exist
   * yet. At most `maxBytes` bytes, and never past the server's disk limit. A caller who may create it
   * but not update it writes it as a new file only: one made there during the upload is kept
   * (ALREADY_EXISTS).
   */
  async write(actor: Actor | null, serverId: string, rawPath: unknown, body: Readable, event: 'write' | 'upload' = 'write'): Promise<{ entry: FileEntry; created: boolean }> {
    const path = normalisePath(rawPath);
    const t = await this.target(actor, serverId, ['file.update', 'file.create'], [path]);
    const exists = await this.stat(t, path).then(
      () => true,
      (err) => (err instanceof AppError && err.code === 'NOT_FOUND' ? false : Promise.reject(err)),
    );
    demand(t.access, exists ? 'file.update' : 'file.create', path);
    const createOnly = !exists && writesNewOnly(t.access, path);
    const r = await this.agents.stream(t.server.node, 'PUT', this.url(t, '/contents', { path, max: this.config.fileUploadMaxBytes, ...(createOnly ? { createOnly: 1 } : {}) }), { body });
    const answer = (await r.json()) as { data: FileEntry; meta: { created: boolean } };
    await this.record(t, event, { path, size: answer.data.size });
    return { entry: answer.data, created: answer.meta.created };
  }

  /**
   * Writes text (the GraphQL editor's save): well-formed Unicode, written as UTF-8, at most
   * FILE_EDIT_MAX_BYTES bytes (what the editor may open: FILE_TOO_LARGE, as reading a larger file is);
   * see write. Larger files are written over REST (PUT /files/contents, up to FILE_UPLOAD_MAX_BYTES).
   */
  async writeText(actor: Actor | null, serverId: string, rawPath: unknown, contents: unknown): Promise<{ entry: FileEntry; created: boolean }> {
    const text = parseInput(textContentsInput, { contents }).contents;
    const bytes = Buffer.from(text, 'utf8');
    const max = this.config.fileEditMaxBytes;
    if (bytes.length > max) {
      throw new AppError('FILE_TOO_LARGE', `The contents are larger than ${max} bytes (FILE_EDIT_MAX_BYTES), the most the editor saves: upload the file instead (PUT /api/v1/servers/:id/files/contents).`, { maxBytes: max });
    }
    return this.write(actor, serverId, rawPath, Readable.from([bytes]));
  }

  private async stat(t: Target, path: string): Promise<FileEntry> {
    return (await this.agents.call<FileEntry>(t.server.node, 'GET', this.url(t, '/stat', { path })))!;
  }

  /** The node's streamed answer for a download (the whole file, or the range asked for). */
  async download(actor: Actor | null, serverId: string, rawPath: unknown, range?: string): Promise<{ response: NodeAnswer; path: string }> {
    const path = normalisePath(rawPath);
    const t = await this.target(actor, serverId, 'file.read-content', [path]);
    const response = await this.agents.stream(t.server.node, 'GET', this.url(t, '/download', { path }), { headers: range ? { range } : {} });
    await this.record(t, 'download', { path });
    return { response, path };
  }

  /** The server's uploads are checked once for their folder (`file.create`); each file is then a write. */
  async uploadTarget(actor: Actor | null, serverId: string, rawDir: unknown): Promise<string> {
    const dir = normalisePath(rawDir);
    await this.target(actor, serverId, 'file.create', [dir]);
    return dir;
  }

  async rename(actor: Actor | null, serverId: string, input: unknown): Promise<FileEntry> {
    const data = parseInput(renameInput, input);
    const from = normalisePath(data.from, 'from');
    const to = normalisePath(data.to, 'to');
    const t = await this.target(actor, serverId, 'file.update', [from, to]);
    const entry = (await this.agents.call<FileEntry>(t.server.node, 'POST', this.url(t, '/rename'), { from, to }))!;
    await this.record(t, 'rename', { from, to });
    return entry;
  }

  async copy(actor: Actor | null, serverId: string, input: unknown): Promise<FileEntry> {
    const path = normalisePath(parseInput(pathInput, input).path);
    const t = await this.target(actor, serverId, 'file.create', [path]);
    const entry = (await this.agents.call<FileEntry>(t.server.node, 'POST', this.url(t, '/copy'), { path }))!;
    await this.record(t, 'copy', { path, copy: entry.path });
    return entry;
  }

  async remove(actor: Actor | null, serverId: string, input: unknown): Promise<void> {
    const paths = parseInput(deleteInput, input).paths.map((p, i) => normalisePath(p, `paths.${i}`));
    const t = await this.target(actor, serverId, 'file.delete', paths);
    await this.agents.call(t.server.node, 'POST', this.url(t, '/delete'), { paths }, 60_000);
    await this.record(t, 'delete', { paths: paths.slice(0, 100), count: paths.length });
  }

  async mkdir(actor: Actor | null, serverId: string, input: unknown): Promise<FileEntry> {
    const path = normalisePath(parseInput(pathInput, input).path);
    const t = await this.target(actor, serverId, 'file.create', [path]);
    const entry = (await this.agents.call<FileEntry>(t.server.node, 'POST', this.url(t, '/directory'), { path }).catch((e) => this.explainMissingScope(t, path, e)))!;
    await this.record(t, 'create-directory', { path });
    return entry;
  }

  /** A .tar.gz of `paths` at `destination` (by default named after the date, in the folder they share). */
  async compress(actor: Actor | null, serverId: string, input: unknown): Promise<FileEntry> {
    const data = parseInput(compressInput, input);
    const paths = data.paths.map((p, i) => normalisePath(p, `paths.${i}`));
    const caller = data.destination == null ? (await this.servers.access(requireActor(actor), serverId)).access : null;
    const destination = data.destination == null ? defaultArchivePath(paths, caller?.role === 'subuser' ? caller.paths : []) : normalisePath(data.destination, 'destination');
    const t = await this.target(actor, serverId, 'file.archive', [...paths, destination]);
    const entry = (await this.agents.call<FileEntry>(t.server.node, 'POST', this.url(t, '/compress'), { paths, destination }, ARCHIVE_TIMEOUT_MS))!;
    await this.record(t, 'compress', { paths: paths.slice(0, 100), count: paths.length, archive: entry.path });
    return entry;
  }

  /**
   * Extracts the archive `path` into `destination` (by default its own folder); the entries made at
   * the top. `file.archive` makes new files there (CONTRACT §9); replacing one needs `file.update`
   * too: without it nothing that exists is replaced (422 ALREADY_EXISTS, nothing written).
   */
  async decompress(actor: Actor | null, serverId: string, input: unknown): Promise<FileEntry[]> {
    const data = parseInput(decompressInput, input);
    const path = normalisePath(data.path);
    const destination = data.destination == null ? parentFolder(path) : normalisePath(data.destination, 'destination');
    const t = await this.target(actor, serverId, 'file.archive', [path, destination]);
    const noReplace = !may(t.access, 'file.update', destination);
    const entries = (await this.agents.call<FileEntry[]>(t.server.node, 'POST', this.url(t, '/decompress'), { path, destination, ...(noReplace ? { noReplace } : {}) }, ARCHIVE_TIMEOUT_MS)) ?? [];
    await this.record(t, 'decompress', { path, destination });
    return entries;
  }

  async chmod(actor: Actor | null, serverId: string, input: unknown): Promise<FileEntry> {
    const data = parseInput(chmodInput, input);
    const path = normalisePath(data.path);
    const t = await this.target(actor, serverId, 'file.update', [path]);
    const entry = (await this.agents.call<FileEntry>(t.server.node, 'POST', this.url(t, '/chmod'), { path, mode: data.mode }))!;
    await this.record(t, 'chmod', { path, mode: data.mode });
    return entry;
  }
}

/** Whether `bytes` are valid UTF-8 (the editor opens text only). */
function isUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}
