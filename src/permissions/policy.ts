/**
 * The permission policy: may this actor do K on server S (under path P)? Every protocol (REST,
 * GraphQL, console tokens, subscriptions, the node console channel, files, backups, schedules and
 * SFTP) asks these functions, with the ServerAccess that src/services/access.service.ts resolves.
 */
import { AppError } from '../errors.js';
import { withinScopes } from '../shared/scopes.js';
import { ALL_PERMISSIONS, isFileKey, taskKeys, type PermissionKey } from './keys.js';

export { withinScopes };

/** What one actor holds on one server they can see. */
export interface ServerAccess {
  serverId: string;
  ownerId: string;
  /** `admin` and `owner` hold every key; a `subuser` holds `keys`. */
  role: 'admin' | 'owner' | 'subuser';
  keys: ReadonlySet<PermissionKey>;
  /** Folders (normalised, `/a/b`) that a subuser's file keys are limited to; empty = the whole server. */
  paths: readonly string[];
}

export const holdsAll = (a: ServerAccess): boolean => a.role !== 'subuser';

/** The keys as shown on a server record: `["*"]` for the owner and administrators. */
export function keysOf(a: ServerAccess): string[] {
  return holdsAll(a) ? [ALL_PERMISSIONS] : [...a.keys];
}

/** Whether the keys a server record shows (keysOf: the caller's) include `key`. */
export const recordHolds = (keys: readonly string[] | undefined, key: PermissionKey): boolean => !!keys && (keys.includes(ALL_PERMISSIONS) || keys.includes(key));

export function may(a: ServerAccess, key: PermissionKey, path?: string): boolean {
  if (holdsAll(a)) return true;
  if (!a.keys.has(key)) return false;
  return path === undefined || !isFileKey(key) || withinScopes(a.paths, path);
}

/**
 * Whether a write of `path`, which does not exist yet, must stay a new file: the caller may create it
 * but not update it, so a file made there before the write ends is kept (ALREADY_EXISTS), not replaced.
 */
export const writesNewOnly = (a: ServerAccess, path: string): boolean => !may(a, 'file.update', path);

/** Throws 403 unless the actor holds `key` (for a file key, under `path` when given). */
export function demand(a: ServerAccess, key: PermissionKey, path?: string): void {
  if (may(a, key, path)) return;
  if (path !== undefined && a.keys.has(key)) throw AppError.forbidden(`Your access to this server is limited to ${a.paths.join(', ')}; ${path} is outside it.`);
  throw AppError.forbidden(`You need the "${key}" permission on this server; ask its owner.`);
}

/** A schedule's tasks act for whoever makes, changes or runs it: each needs the keys its action needs. */
export function demandTasks(a: ServerAccess, tasks: readonly Parameters<typeof taskKeys>[0][]): void {
  for (const task of tasks) {
    const lacking = taskKeys(task).find((key) => !may(a, key));
    if (lacking) throw AppError.forbidden(`A ${task.action} task needs the "${lacking}" permission on this server; ask its owner.`);
  }
}

/** Only the owner and administrators: deleting the server, changing its memory, cpu or disk. */
export function demandOwner(a: ServerAccess, what: string): void {
  if (!holdsAll(a)) throw AppError.forbidden(`Only the server's owner or an administrator may ${what}.`);
}
