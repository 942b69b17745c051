/**
 * A server's subusers: accounts the owner shares the server with, each with the permission keys
 * granted and optional folder scopes for the file keys. Nobody grants a key they do not hold (nor a
 * wider folder scope than their own), and nobody changes their own entry. Every change that can take
 * rights away is announced (`onAccessChanged`), so live sockets and subscriptions re-check at once.
 */
import { EventEmitter } from 'node:events';
import type { MikroORM } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { Server } from '../entities/Server.js';
import { Subuser } from '../entities/Subuser.js';
import { User } from '../entities/User.js';
import { AppError } from '../errors.js';
import type { PermissionKey } from '../permissions/keys.js';
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
    assertGrantable(a, data.permissions, [], paths);
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
    const a = await this.access.resolve(actor, serverId);
    demand(a, 'user.update');
    const targetId = parseId(userId, 'Subuser');
    const data = parseInput(updateSubuserInput, input);
    const em = this.orm.em.fork();
    const entry = await em.findOne(Subuser, { server: a.serverId, user: targetId }, { populate: ['user'] });
    if (!entry) throw AppError.notFound('Subuser');
    assertNotSelf(a, actor!, targetId);
    const permissions = data.permissions ?? entry.permissions;
    const paths = data.paths ?? entry.paths;
    assertGrantable(a, permissions, entry.permissions, paths);
    const lost = entry.permissions.some((k) => !permissions.includes(k)) || narrower(paths, entry.paths);
    entry.permissions = permissions;
    entry.paths = paths;
    await this.activity.record({ event: 'server:subuser.update', serverId: a.serverId, actor, properties: { userId: targetId, email: entry.user.email, permissions, paths } }, em);
    await em.flush();
    if (lost) this.announce({ serverId: a.serverId, userId: targetId });
    return view(entry);
  }

  async remove(actor: Actor | null, serverId: string, userId: string): Promise<void> {
    const a = await this.access.resolve(actor, serverId);
    demand(a, 'user.delete');
    const targetId = parseId(userId, 'Subuser');
    const em = this.orm.em.fork();
    const entry = await em.findOne(Subuser, { server: a.serverId, user: targetId });
    if (!entry) throw AppError.notFound('Subuser');
    assertNotSelf(a, actor!, targetId);
    em.remove(entry);
    await this.activity.record({ event: 'server:subuser.delete', serverId: a.serverId, actor, properties: { userId: targetId } }, em);
    await em.flush();
    this.announce({ serverId: a.serverId, userId: targetId });
  }
}

function assertNotSelf(a: ServerAccess, actor: Actor, targetId: string): void {
  if (!holdsAll(a) && targetId === actor.user.id) throw AppError.forbidden('You cannot change your own access to this server; ask its owner.');
}

/**
 * Nobody grants what they do not hold: every key the target gains must be one the granter holds,
 * and a granter limited to some folders can only give scopes inside them.
 */
function assertGrantable(a: ServerAccess, wanted: readonly string[], had: readonly string[], paths: readonly string[]): void {
  if (holdsAll(a)) return;
  const gained = wanted.filter((k) => !had.includes(k) && !a.keys.has(k as PermissionKey));
  if (gained.length) throw AppError.forbidden(`You cannot grant permissions you do not hold: ${gained.join(', ')}.`);
  if (a.paths.length && (!paths.length || paths.some((p) => !withinScopes(a.paths, p)))) {
    throw AppError.forbidden(`Your own access is limited to ${a.paths.join(', ')}: the paths you give must lie inside it.`);
  }
}

/** Whether scopes `next` allow less than `prev` (an empty list is the whole server). */
function narrower(next: readonly string[], prev: readonly string[]): boolean {
  if (!next.length) return false;
  if (!prev.length) return true;
  return prev.some((p) => !withinScopes(next, p));
}
