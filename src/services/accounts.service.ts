/**
 * Administrators' hold on other accounts (`/admin/users/:id`): read one, change its name, email,
 * password or role, delete it. A change that takes something away (the account deleted, its password
 * set, its administrator role taken away) reaches what the account holds open at once (CONTRACT §9:
 * within a second), on every gateway instance and node:
 * - its sessions end in the change's transaction (a password set, the account deleted; API tokens go
 *   with a deleted account);
 * - an `access` event on the bus's ACCOUNTS_CHANNEL makes every instance re-check the account's
 *   GraphQL sockets (src/graphql/ws.ts): a credential no longer valid, or an administrator's role
 *   taken away, closes them;
 * - every node is told to close the account's console sockets and SFTP sessions and to refuse console
 *   tokens issued before the change (whoever held the account's session may hold those too). Best
 *   effort, as for a subuser's removal: a node that does not answer is logged; its console tokens
 *   expire within CONSOLE_TOKEN_TTL_SECONDS.
 * Rules: at least one administrator always remains (the administrators' rows are locked while one is
 * demoted or deleted, so two at once cannot remove the last two); an administrator does not delete
 * their own account here; an account that still owns servers is not deleted (its servers' files are on
 * the nodes: delete the servers first, as a node with servers is not deleted).
 */
import type { EntityManager } from '@mikro-orm/core';
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ConsoleBus } from '../console/bus.js';
import { accessChanged, type ConsoleEvent } from '../console/types.js';
import { Server } from '../entities/Server.js';
import { Session } from '../entities/Session.js';
import { User } from '../entities/User.js';
import { AppError } from '../errors.js';
import { childLogger } from '../logger.js';
import type { NodeNotices } from '../nodes/node-notices.js';
import { hashPassword } from '../security/passwords.js';
import { adminUpdateUserInput, type AdminUpdateUserInput } from '../validation/admin.js';
import { parseId, parseInput } from '../validation/common.js';
import type { ActivityRecorder } from './activity.service.js';
import { requireAdmin, type Actor } from './actor.js';
import { emailTaken } from './users.service.js';

const log = childLogger('accounts');

/** The bus channel of account changes (server ids are UUIDs, so it is no server's). */
export const ACCOUNTS_CHANNEL = 'accounts';

export class AccountsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly activity: ActivityRecorder,
    private readonly bus: ConsoleBus,
    private readonly notices: NodeNotices,
  ) {}

  private get em() {
    return this.orm.em;
  }

  async get(actor: Actor | null, id: string): Promise<User> {
    requireAdmin(actor);
    const user = await this.em.findOne(User, { id: parseId(id, 'User') });
    if (!user) throw AppError.notFound('User');
    return user;
  }

  async update(actor: Actor | null, id: string, input: unknown): Promise<User> {
    const a = requireAdmin(actor);
    const userId = parseId(id, 'User');
    const data = parseInput(adminUpdateUserInput, input);
    // hashed before the transaction: the rows it locks are not held for the hash's time
    const passwordHash = data.password === undefined ? undefined : await hashPassword(data.password);
    let result: { user: User; takesAway: boolean };
    try {
      result = await this.em.transactional(async (em) => {
        if (data.role === 'user') await lockAdministrators(em);
        const u = await em.findOne(User, { id: userId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
        if (!u) throw AppError.notFound('User');
        const from = u.role;
        const changed = await applyChange(em, u, data, passwordHash);
        if (changed.length) {
          const properties = { userId: u.id, email: u.email, fields: changed, ...(changed.includes('role') ? { role: { from, to: u.role } } : {}) };
          await this.activity.record({ event: 'admin:user.update', actor: a, properties }, em);
        }
        return { user: u, takesAway: passwordHash !== undefined || (from === 'admin' && u.role !== 'admin') };
      });
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw emailTaken();
      throw err;
    }
    if (result.takesAway) await this.takeBack(result.user.id);
    return result.user;
  }

  async remove(actor: Actor | null, id: string): Promise<void> {
    const a = requireAdmin(actor);
    const userId = parseId(id, 'User');
    if (userId === a.user.id) throw AppError.invalidState('You cannot delete your own account. Another administrator can.');
    await this.em.transactional(async (em) => {
      await lockAdministrators(em);
      const u = await em.findOne(User, { id: userId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      if (!u) throw AppError.notFound('User');
      // a server being created for the account holds its row (the foreign key's lock) until it commits
      const servers = await em.count(Server, { owner: u.id });
      if (servers) throw AppError.invalidState(`This account still owns ${servers} server(s). Delete them (or have them deleted) first.`, { servers });
      if (u.role === 'admin') await assertAnotherAdministrator(em, u.id, 'delete');
      await this.activity.record({ event: 'admin:user.delete', actor: a, properties: { userId: u.id, email: u.email, role: u.role } }, em);
      // sessions, API tokens and subuser rows go with it (their foreign keys cascade)
      await em.nativeDelete(User, { id: u.id });
    });
    await this.takeBack(userId);
  }

  /** Calls `listener` for every account change announced on any instance (no user id: any account may have changed). */
  watch(listener: (userId: string | undefined) => void): Promise<() => Promise<void>> {
    return this.bus.subscribe(ACCOUNTS_CHANNEL, (e: ConsoleEvent) => {
      if (e.type === 'access') listener(e.data?.userId);
    });
  }

  /**
   * After a committed change that took something away (here, or the account's own password change):
   * every instance re-checks the account's GraphQL sockets, every node closes its console sockets and
   * SFTP sessions and refuses the console tokens issued before now.
   */
  async takeBack(userId: string, reason: 'account' | 'password' = 'account'): Promise<void> {
    await this.bus.publish(ACCOUNTS_CHANNEL, accessChanged(userId)).catch((err: Error) => log.warn({ userId, err: err.message }, 'could not announce an account change to the other instances'));
    // dated after the commit on the panel's clock (console tokens' issue times are): a token minted before it is refused
    const at = Date.now();
    await this.notices
      .tellEveryNode('/api/users/revoke', { userId, at, reason }, "could not tell a node to close an account's console and SFTP sessions")
      .catch((err: Error) => log.warn({ userId, err: err.message }, 'could not tell the nodes of an account change'));
  }
}

/**
 * Applies `data` to the locked account `u` (`passwordHash`: of `data.password`) and names the fields
 * that changed (a password set counts as changed). A password set ends every session of the account;
 * the last administrator keeps the role.
 */
async function applyChange(em: EntityManager, u: User, data: AdminUpdateUserInput, passwordHash: string | undefined): Promise<string[]> {
  const changed: string[] = [];
  if (data.name !== undefined && data.name !== u.name) changed.push('name');
  if (data.email !== undefined && data.email !== u.email) {
    if (await em.count(User, { email: data.email, id: { $ne: u.id } })) throw emailTaken();
    changed.push('email');
  }
  if (data.role !== undefined && data.role !== u.role) {
    if (u.role === 'admin') await assertAnotherAdministrator(em, u.id, 'demote');
    changed.push('role');
  }
  if (data.name !== undefined) u.name = data.name;
  if (data.email !== undefined) u.email = data.email;
  if (data.role !== undefined) u.role = data.role;
  if (passwordHash !== undefined) {
    changed.push('password');
    u.passwordHash = passwordHash;
    await em.nativeDelete(Session, { user: u.id });
  }
  return changed;
}

/** Locks every administrator's row, in one order: changes that may remove an administrator take turns. */
async function lockAdministrators(em: EntityManager): Promise<void> {
  await em.find(User, { role: 'admin' }, { orderBy: { id: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}

async function assertAnotherAdministrator(em: EntityManager, userId: string, what: 'demote' | 'delete'): Promise<void> {
  if (await em.count(User, { role: 'admin', id: { $ne: userId } })) return;
  throw AppError.invalidState(`This is the last administrator: promote another account first, then ${what} this one.`);
}
