/**
 * Resolves what an actor holds on a server (src/permissions/policy.ts answers the questions). A
 * server the actor can neither own, administer nor share is a 404: its existence is not leaked.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { readRows } from '../db/read-rows.js';
import { AppError } from '../errors.js';
import { isPermissionKey, type PermissionKey } from '../permissions/keys.js';
import type { ServerAccess } from '../permissions/policy.js';
import { parseId } from '../validation/common.js';
import { requireActor, type Actor } from './actor.js';

const ACCESS_SQL = `select s.owner_id as "ownerId", su.permissions as "permissions", su.paths as "paths"
  from servers s left join subusers su on su.server_id = s.id and su.user_id = $2 where s.id = $1`;
/** The same, with the account's role as it is now (no row: the server or the account is gone). */
const ACCESS_NOW_SQL = `select u.role as "role", s.owner_id as "ownerId", su.permissions as "permissions", su.paths as "paths"
  from servers s join users u on u.id = $2 left join subusers su on su.server_id = s.id and su.user_id = u.id where s.id = $1`;

export class AccessService {
  constructor(private readonly orm: MikroORM) {}

  /** What `actor` holds on server `id` (404 when they cannot see it; 401 without an actor). */
  async resolve(actor: Actor | null, id: string): Promise<ServerAccess> {
    return this.resolveFor(requireActor(actor).user, id);
  }

  /**
   * What the account holds on server `id` now, its role read again: for what holds rights longer than a
   * request (a live subscription's re-check, a schedule run's next task), whose actor was read when it
   * started. 404 when the account cannot see the server, or is gone.
   */
  async resolveNow(userId: string, id: string): Promise<ServerAccess> {
    const serverId = parseId(id, 'Server');
    const rows = await readRows<{ role: string; ownerId: string; permissions: string[] | null; paths: string[] | null }>(this.orm, ACCESS_NOW_SQL, [serverId, userId]);
    const row = rows[0];
    if (!row) throw AppError.notFound('Server');
    return accessOf({ id: userId, role: row.role }, serverId, row.ownerId, row.permissions, row.paths);
  }

  /** What the user holds on server `id`, for callers without a request (an SFTP login); 404 when they cannot see it. */
  async resolveFor(user: AccountRef, id: string): Promise<ServerAccess> {
    const serverId = parseId(id, 'Server');
    const rows = await readRows<{ ownerId: string; permissions: string[] | null; paths: string[] | null }>(this.orm, ACCESS_SQL, [serverId, user.id]);
    const row = rows[0];
    if (!row) throw AppError.notFound('Server');
    return accessOf(user, serverId, row.ownerId, row.permissions, row.paths);
  }
}

/** Who holds the access: an account's id and role. */
export interface AccountRef {
  id: string;
  role: string;
}

/** The access of `user` to a server whose owner and (when the actor is a subuser) entry are known. */
export function accessOf(user: AccountRef, serverId: string, ownerId: string, permissions: string[] | null, paths: string[] | null): ServerAccess {
  if (user.role === 'admin') return { serverId, ownerId, role: 'admin', keys: new Set(), paths: [] };
  if (ownerId === user.id) return { serverId, ownerId, role: 'owner', keys: new Set(), paths: [] };
  if (!permissions) throw AppError.notFound('Server');
  const keys = new Set<PermissionKey>(permissions.filter(isPermissionKey));
  return { serverId, ownerId, role: 'subuser', keys, paths: paths ?? [] };
}
