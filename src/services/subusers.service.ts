/**
 * A server's subusers: accounts the owner shares the server with, each with the permission keys
 * granted and optional folder scopes for the file keys. Nobody grants a key they do not hold (nor a
 * wider folder scope than their own), and nobody changes their own entry. Every change that can take
 * rights away is announced (`onAccessChanged`), so live sockets and subscriptions re-check at once.
 */
import { EventEmitter } from 'node:events';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import { Server } from '../entities/Server.js';
import { Subuser } from '../entities/Subuser.js';
import { User } from '../entities/User.js';
import { AppError } from '../errors.js';
import { isFileKey, type PermissionKey } from '../permissions/keys.js';
import { demand, holdsAll, withinScopes, type ServerAccess } from '../permissions/policy.js';
import { parseId, parseInput } from '../validation/common.js';
import type { Page, Paginated } from '../validation/pagination.js';
import { createSubuserInput, updateSubuserInput } from '../validation/subusers.js';
import type { AccessService } from './access.service.js';
import type { ActivityRecorder } from './activity.service.js';
import type { Actor } from './actor.js';

export interface SubuserView {
  userId: string;
  email: string;
  name: string;
  permissions: string[];
  paths: string[];
  createdAt: Date;
  updatedAt: Date;
}

export interface AccessChange {
  serverId: string;
  userId: string;
}

const view = (s: Subuser): SubuserView => ({
  userId: s.user.id,
  email: s.user.email,
  name: s.user.name,
  permissions: [...s.permissions],
  paths: [...s.paths],
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
});

export class SubusersService {
  private readonly changes = new EventEmitter();

  constructor(
    private readonly orm: MikroORM,
    private readonly access: AccessService,
    private readonly activity: ActivityRecorder,
  ) {
    this.changes.setMaxListeners(0);
  }

  /** Called after a subuser lost keys or was removed (within this process; the bus carries it further). */
  onAccessChanged(listener: (c: AccessChange) => void): () => void {
    this.changes.on('change', listener);
    return () => this.changes.off('change', listener);
  }

  private announce(change: AccessChange): void {
    this.changes.emit('change', change);
  }

  async list(actor: Actor | null, serverId: string, page: Page): Promise<Paginated<SubuserView>> {
    const a = await this.access.resolve(actor, serverId);
    demand(a, 'user.read');
    const [rows, total] = await this.orm.em.fork().findAndCount(
      Subuser,
      { server: a.serverId },
      { populate: ['user'], orderBy: { createdAt: 'asc', id: 'asc' }, limit: page.limit, offset: page.offset },
    );
    return { items: rows.map(view), meta: { total, page: page.page, limit: page.limit } };
  }

  async create(actor: Actor | null, serverId: string, input: unknown): Promise<SubuserView> {
    const a = await this.access.resolve(actor, serverId);
    demand(a, 'user.create');
    const data = parseInput(createSubuserInput, input);
    const paths = data.paths ?? [];
    assertGrantable(a, data.permissions, paths, null);
    const em = this.orm.em.fork();
    const user = await em.findOne(User, { email: data.email });
    if (!user) throw AppError.validation({ email: 'no account has this email; ask them to sign up first' });
    if (user.id === a.ownerId) throw AppError.validation({ email: 'is the owner of this server, who holds every permission already' });
    if (await em.count(Subuser, { server: a.serverId, user: user.id })) throw AppError.alreadyExists('email', 'This account is already a subuser of this server.');
    const entry = em.create(Subuser, { server: em.getReference(Server, a.serverId), user, permissions: data.permissions, paths });
    await this.activity.record({ event: 'server:subuser.create', serverId: a.serverId, actor, properties: { userId: user.id, email: user.email, permissions: data.permissions, paths } }, em);
    try {
      await em.flush();
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw AppError.alreadyExists('email', 'This account is already a subuser of this server.');
      throw err;
    }
    return view(entry);
  }

  async update(actor: Actor | null, serverId: string, userId: string, input: unknown): Promise<SubuserView> {
    const resolved = await this.access.resolve(actor, serverId);
    demand(resolved, 'user.update');
    const targetId = parseId(userId, 'Subuser');
    const data = parseInput(updateSubuserInput, input);
    const { entry, lost } = await this.orm.em.fork().transactional(async (em) => {
      const { a, entry } = await this.lockedEntries(em, resolved, actor!, targetId);
      demand(a, 'user.update');
      const permissions = data.permissions ?? entry.permissions;
      const paths = data.paths ?? entry.paths;
      assertGrantable(a, permissions, paths, entry);
      const lost = entry.permissions.some((k) => !permissions.includes(k)) || narrower(paths, entry.paths);
      entry.permissions = permissions;
      entry.paths = paths;
      await this.activity.record({ event: 'server:subuser.update', serverId: a.serverId, actor, properties: { userId: targetId, email: entry.user.email, permissions, paths } }, em);
      return { entry, lost };
    });
    if (lost) this.announce({ serverId: resolved.serverId, userId: targetId });
    return view(entry);
  }

  async remove(actor: Actor | null, serverId: string, userId: string): Promise<void> {
    const resolved = await this.access.resolve(actor, serverId);
    demand(resolved, 'user.delete');
    const targetId = parseId(userId, 'Subuser');
    await this.orm.em.fork().transactional(async (em) => {
      const { a, entry } = await this.lockedEntries(em, resolved, actor!, targetId);
      demand(a, 'user.delete');
      em.remove(entry);
      await this.activity.record({ event: 'server:subuser.delete', serverId: a.serverId, actor, properties: { userId: targetId, email: entry.user.email } }, em);
    });
    this.announce({ serverId: resolved.serverId, userId: targetId });
  }

  /**
   * The target's entry, and the caller's access as it is now, both locked until `em`'s transaction
   * ends (in one order, by user id): two changes of the same entries take turns, each judged on what
   * the one before it left. A caller who is a subuser is judged on their own entry as locked.
   */
  private async lockedEntries(em: EntityManager, a: ServerAccess, actor: Actor, targetId: string): Promise<{ a: ServerAccess; entry: Subuser }> {
    const ids = holdsAll(a) ? [targetId] : [...new Set([targetId, actor.user.id])].sort();
    const rows = await em.find(Subuser, { server: a.serverId, user: { $in: ids } }, { orderBy: { user: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const entry = rows.find((r) => r.user.id === targetId);
    if (!entry) throw AppError.notFound('Subuser');
    await em.populate(entry, ['user']);
    assertNotSelf(a, actor, targetId);
    if (holdsAll(a)) return { a, entry };
    const own = rows.find((r) => r.user.id === actor.user.id);
    // removed from the server meanwhile: as a stranger, who cannot tell the server is there
    if (!own) throw AppError.notFound('Server');
    return { a: { ...a, keys: new Set(own.permissions as PermissionKey[]), paths: own.paths }, entry };
  }
}

function assertNotSelf(a: ServerAccess, actor: Actor, targetId: string): void {
  if (!holdsAll(a) && targetId === actor.user.id) throw AppError.forbidden('You cannot change your own access to this server; ask its owner.');
}

/**
 * Nobody grants what they do not hold: every key the target gains must be one the granter holds, and
 * so must every file key it keeps when its folder scopes reach further than before (a grant of those
 * keys where the target did not hold them). A granter limited to some folders gives scopes inside
 * them only, whenever the scopes change or a file key is given. `before`: the entry as it was (null
 * for a new one).
 */
function assertGrantable(a: ServerAccess, wanted: readonly string[], paths: readonly string[], before: Pick<Subuser, 'permissions' | 'paths'> | null): void {
  if (holdsAll(a)) return;
  const had = before?.permissions ?? [];
  const widened = before !== null && narrower(before.paths, paths);
  const given = wanted.filter((k) => !had.includes(k) || (widened && isFileKey(k as PermissionKey)));
  const missing = given.filter((k) => !a.keys.has(k as PermissionKey));
  if (missing.length) throw AppError.forbidden(`You cannot grant permissions you do not hold: ${missing.join(', ')}.`);
  const reaching = before === null || given.some((k) => isFileKey(k as PermissionKey)) || !sameScopes(before.paths, paths);
  if (reaching && a.paths.length && (!paths.length || paths.some((p) => !withinScopes(a.paths, p)))) {
    throw AppError.forbidden(`Your own access is limited to ${a.paths.join(', ')}: the paths you give must lie inside it.`);
  }
}

const sameScopes = (x: readonly string[], y: readonly string[]): boolean => !narrower(x, y) && !narrower(y, x);

/** Whether scopes `next` allow less than `prev` (an empty list is the whole server). */
function narrower(next: readonly string[], prev: readonly string[]): boolean {
  if (!next.length) return false;
  if (!prev.length) return true;
  return prev.some((p) => !withinScopes(next, p));
}
