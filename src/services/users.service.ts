import type { MikroORM } from '@mikro-orm/postgresql';
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import { ApiToken } from '../entities/ApiToken.js';
import { Session } from '../entities/Session.js';
import { User } from '../entities/User.js';
import { AppError } from '../errors.js';
import { hashPassword, verifyPassword } from '../security/passwords.js';
import { API_TOKEN_PREFIX, hashSecret, newSecret } from '../security/tokens.js';
import { createApiTokenInput, updateMeInput } from '../validation/auth.js';
import { parseId, parseInput } from '../validation/common.js';
import type { Page, Paginated } from '../validation/pagination.js';
import type { Actor } from './actor.js';
import { noRecorder, type ActivityRecorder } from './activity.service.js';
import { requireActor } from './actor.js';
import type { UserRecord } from './records.js';

/** ALREADY_EXISTS for an email another account has (emails are unique, case-insensitively). */
export const emailTaken = () => AppError.alreadyExists('email', 'An account with this email already exists.');

/** The signed-in user's own account and API tokens. */
export class UsersService {
  constructor(
    private readonly orm: MikroORM,
    private readonly activity: ActivityRecorder = noRecorder,
  ) {}

  private get em() {
    return this.orm.em;
  }

  me(actor: Actor | null): UserRecord {
    return requireActor(actor).user;
  }

  /**
   * Runs with the user's row locked (SELECT … FOR UPDATE): concurrent changes of one account take
   * turns, so a second password change is checked against the first one's new password, and the
   * other sessions end in the same transaction as the change (see AuthService.openSession).
   */
  private readonly passwordListeners: ((userId: string) => void)[] = [];

  /** Calls `listener` once a password change is committed (what the account holds open on the nodes closes: src/services/index.ts). */
  onPasswordChanged(listener: (userId: string) => void): void {
    this.passwordListeners.push(listener);
  }

  async updateMe(actor: Actor | null, input: unknown): Promise<User> {
    const a = requireActor(actor);
    const data = parseInput(updateMeInput, input);
    try {
      const user = await this.em.transactional(async (em) => {
        // the actor carries a read-only record; the change goes through the entity, read afresh
        const user = await em.findOne(User, a.user.id, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
        if (!user) throw AppError.unauthorized();
        // a concurrent password change of this account may have ended this very session
        if (a.via === 'session' && !(await em.count(Session, { id: a.credentialId }))) throw AppError.unauthorized();
        const emailChanges = data.email !== undefined && data.email !== user.email;
        // The email is how the account is recovered and signed in to: changing it, like the password,
        // proves knowledge of the current password (a stolen session or API token is not enough).
        if (data.password !== undefined || emailChanges) {
          if (!data.currentPassword) throw AppError.validation({ currentPassword: 'is required to change the email' });
          if (!(await verifyPassword(user.passwordHash, data.currentPassword))) {
            throw AppError.validation({ currentPassword: 'is not your current password' });
          }
        }
        if (emailChanges && data.email !== undefined) {
          if (await em.count(User, { email: data.email, id: { $ne: user.id } })) {
            throw emailTaken();
          }
          user.email = data.email;
        }
        if (data.name !== undefined) user.name = data.name;
        const fields = (['name', 'email'] as const).filter((k) => data[k] !== undefined);
        if (fields.length) await this.activity.record({ event: 'user:update', actor: a, properties: { fields } }, em);
        if (data.password !== undefined) await this.activity.record({ event: 'user:password-changed', actor: a }, em);
        if (data.password !== undefined) {
          user.passwordHash = await hashPassword(data.password);
          await em.flush();
          // A password change ends every other session of the user (the current one stays).
          const keep = a.via === 'session' ? a.credentialId : '00000000-0000-0000-0000-000000000000';
          await em.nativeDelete(Session, { user: user.id, id: { $ne: keep } });
        }
        return user;
      });
      if (data.password !== undefined) for (const l of this.passwordListeners) l(user.id);
      return user;
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw emailTaken();
      throw err;
    }
  }

  async listApiTokens(actor: Actor | null, page: Page): Promise<Paginated<ApiToken>> {
    const a = requireActor(actor);
    const [items, total] = await this.em.findAndCount(
      ApiToken,
      { user: a.user.id, revokedAt: null },
      { orderBy: { createdAt: 'asc', id: 'asc' }, limit: page.limit, offset: page.offset },
    );
    return { items, meta: { total, page: page.page, limit: page.limit } };
  }

  async createApiToken(actor: Actor | null, input: unknown): Promise<{ token: ApiToken; secret: string }> {
    const a = requireActor(actor);
    const data = parseInput(createApiTokenInput, input);
    const secret = newSecret(API_TOKEN_PREFIX);
    let expiresAt = data.expiresInDays ? new Date(Date.now() + data.expiresInDays * 86_400_000) : null;
    // a token made with an expiring API token expires with it at the latest: a stolen short-lived
    // token cannot mint itself a permanent one
    const creatorExpiry = a.via === 'api_token' ? a.credentialExpiresAt : null;
    if (creatorExpiry && (!expiresAt || expiresAt > creatorExpiry)) expiresAt = creatorExpiry;
    const token = this.em.create(ApiToken, {
      user: this.em.getReference(User, a.user.id),
      name: data.name,
      tokenHash: hashSecret(secret),
      prefix: secret.slice(0, 12),
      expiresAt,
    });
    await this.activity.record({ event: 'user:api-token.create', actor: a, properties: { tokenId: token.id, name: data.name, expiresAt } }, this.em);
    await this.em.flush();
    return { token, secret };
  }

  async revokeApiToken(actor: Actor | null, id: string): Promise<void> {
    const a = requireActor(actor);
    const tokenId = parseId(id, 'API token');
    // locked: of requests revoking the token at once, one revokes it, the others find it revoked (404)
    await this.em.transactional(async (em) => {
      const token = await em.findOne(ApiToken, { id: tokenId, user: a.user.id, revokedAt: null }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!token) throw AppError.notFound('API token');
      token.revokedAt = new Date();
      await this.activity.record({ event: 'user:api-token.delete', actor: a, properties: { tokenId: token.id, name: token.name } }, em);
    });
  }
}
