import type { MikroORM } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { Config } from '../config.js';
import { ApiToken } from '../entities/ApiToken.js';
import { Session } from '../entities/Session.js';
import { User } from '../entities/User.js';
import { readRows } from '../db/read-rows.js';
import { AppError } from '../errors.js';
import { dummyHash, hashPassword, verifyPassword } from '../security/passwords.js';
import { API_TOKEN_PREFIX, hashSecret, newSecret, SESSION_PREFIX } from '../security/tokens.js';
import { signinInput, signupInput } from '../validation/auth.js';
import { parseInput } from '../validation/common.js';
import type { Actor } from './actor.js';
import { noRecorder, type ActivityRecorder } from './activity.service.js';
import { SigninThrottle } from './signin-throttle.js';
import { requireActor } from './actor.js';
import { reviveDates, selectList, USER_RECORDS } from './records.js';
import { emailTaken } from './users.service.js';

export interface SignedIn {
  user: User;
  session: Session;
  /** The session secret: returned once, stored only as a hash. */
  token: string;
}

const TOUCH_EVERY_MS = 60_000;
/** The user's record columns (no credential columns) in the credential lookup. */
const USER_COLUMNS = selectList(USER_RECORDS, 'u');

/** Accounts and credentials: sign up/in/out, sessions, and resolving a secret to an Actor. */
export class AuthService {
  constructor(
    private readonly orm: MikroORM,
    private readonly config: Config,
    private readonly activity: ActivityRecorder = noRecorder,
    /** The per-account sign-in throttle, which API and SFTP sign-ins share. */
    private readonly throttle: SigninThrottle = new SigninThrottle(),
  ) {}

  private get em() {
    return this.orm.em;
  }

  /** `origin.ip`: the client address, for the activity log. */
  async signup(input: unknown, origin: Origin = {}): Promise<SignedIn> {
    if (!this.config.allowSignup) throw AppError.forbidden('Sign-up is turned off on this panel. Ask an administrator for an account.');
    const data = parseInput(signupInput, input);
    if (await this.em.count(User, { email: data.email })) {
      throw emailTaken();
    }
    const user = this.em.create(User, { email: data.email, name: data.name, passwordHash: await hashPassword(data.password), role: 'user' });
    try {
      await this.em.flush();
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) {
        throw emailTaken();
      }
      throw err;
    }
    return this.openSession(user, undefined, { event: 'auth:signup', ip: origin.ip });
  }

  async signin(input: unknown, origin: Origin = {}): Promise<SignedIn> {
    const data = parseInput(signinInput, input);
    const email = data.email.trim().toLowerCase();
    const user = await this.checkPassword(email, data.password);
    if (!user) {
      await this.activity.record({ event: 'auth:signin-failed', ip: origin.ip, properties: { email: email.slice(0, 254) } });
      throw AppError.unauthorized('Invalid email or password.');
    }
    return this.openSession(user, user.passwordHash, { event: 'auth:signin', ip: origin.ip });
  }

  /**
   * The account that `email` and `password` open, or null, for every way of signing in (the API,
   * SFTP): the per-account throttle counts the failures (RATE_LIMITED once used up), and the work is
   * the same whether or not the email exists (no user enumeration).
   */
  async checkPassword(rawEmail: string, password: string): Promise<User | null> {
    const email = rawEmail.trim().toLowerCase();
    await this.throttle.attempt(email);
    // no account has a NUL in its email, and PostgreSQL's text cannot hold one (an SFTP user name may)
    const user = email.includes('\u0000') ? null : await this.em.findOne(User, { email });
    const ok = await verifyPassword(user?.passwordHash ?? (await dummyHash()), password);
    if (!user || !ok) return null;
    await this.throttle.succeeded(email);
    return user;
  }

  /**
   * `checkedHash`: the password hash the sign-in was verified against. The session is inserted with
   * the user's row share-locked, and only if that hash is still the user's: a password change
   * (UsersService.updateMe, which takes the row's update lock and ends the other sessions in the
   * same transaction) either comes after this session and ends it, or came before and this sign-in
   * with the old password fails. Without it, sign-ins racing a change kept sessions of the old password.
   */
  private async openSession(user: User, checkedHash: string | undefined, log: { event: string; ip?: string | null | undefined }): Promise<SignedIn> {
    const token = newSecret(SESSION_PREFIX);
    const session = await this.em.transactional(async (em) => {
      if (checkedHash !== undefined) {
        const rows = await em.execute<{ password_hash: string }[]>('select "password_hash" from "users" where "id" = ? for share', [user.id]);
        if (rows[0]?.password_hash !== checkedHash) throw AppError.unauthorized('Invalid email or password.');
      }
      const session = em.create(Session, {
        user: em.getReference(User, user.id),
        tokenHash: hashSecret(token),
        expiresAt: new Date(Date.now() + this.config.sessionTtlSeconds * 1000),
      });
      await this.activity.record({ event: log.event, actor: actorOf(user, session), ip: log.ip }, em);
      return session;
    });
    return { user, session, token };
  }

  /**
   * The credential of the request stops working at once: a session ends; an API token used to sign
   * out is revoked (it used to answer 204 and go on working).
   */
  async signout(actor: Actor | null): Promise<void> {
    const a = requireActor(actor);
    if (a.via === 'session') await this.em.nativeDelete(Session, { id: a.credentialId });
    else await this.em.nativeUpdate(ApiToken, { id: a.credentialId, revokedAt: null }, { revokedAt: new Date() });
    await this.activity.record({ event: 'auth:signout', actor: a });
  }

  session(actor: Actor | null) {
    const a = requireActor(actor);
    return {
      session: { id: a.credentialId, kind: a.via, createdAt: a.credentialCreatedAt, expiresAt: a.credentialExpiresAt },
      user: a.user,
    };
  }

  /**
   * Resolves a bearer/cookie secret; null when unknown, revoked or expired. Runs on every request:
   * one hand-written join (credential + user); the user comes back as a read-only record (never its
   * password hash), not a managed entity.
   */
  async authenticate(secret: string): Promise<Actor | null> {
    if (secret.length > 200) return null;
    const kind = secret.startsWith(SESSION_PREFIX) ? 'session' : secret.startsWith(API_TOKEN_PREFIX) ? 'api_token' : null;
    if (!kind) return null;
    const table = kind === 'session' ? 'sessions' : 'api_tokens';
    const revoked = kind === 'session' ? 'null' : 'c.revoked_at';
    const conn = this.em.getConnection();
    const rows = await readRows<Record<string, any>>(
      this.em,
      `select c.id as "c__id", c.created_at as "c__created_at", c.expires_at as "c__expires_at", c.last_used_at as "c__last_used_at",
              ${revoked} as "c__revoked_at", ${USER_COLUMNS}
         from ${table} c join users u on u.id = c.user_id
        where c.token_hash = $1 limit 1`,
      [hashSecret(secret)],
    );
    if (!rows[0]) return null;
    // the credential's columns, and the rest: the user's record (its columns from USER_RECORDS)
    const { c__id, c__created_at, c__expires_at, c__last_used_at, c__revoked_at, ...user } = rows[0];
    const now = new Date();
    // raw rows carry timestamps as the driver returns them (strings with MikroORM's pg setup)
    const date = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(v as string));
    const expiresAt = date(c__expires_at);
    if (c__revoked_at || (expiresAt && expiresAt <= now)) return null;
    const lastUsed = date(c__last_used_at);
    if (!lastUsed || now.getTime() - lastUsed.getTime() > TOUCH_EVERY_MS) {
      await conn.execute(`update ${table} set last_used_at = ? where id = ?`, [now, c__id]);
    }
    return {
      user: reviveDates(USER_RECORDS, user),
      via: kind,
      credentialId: c__id,
      credentialCreatedAt: date(c__created_at)!,
      credentialExpiresAt: expiresAt,
    };
  }

  /**
   * First start: create the first administrator when none exists. Returns the generated password, if
   * any. The platform calls it under the start-up lock (src/db/startup-lock.ts), so of several
   * instances starting together one creates the administrator (and shows its password) and the
   * others find it (`created: false`, no password).
   */
  async ensureFirstAdmin(): Promise<{ email: string; password: string | null; created: boolean }> {
    const existing = await this.em.findOne(User, { role: 'admin' }, { orderBy: { createdAt: 'asc' } });
    if (existing) return { email: existing.email, password: null, created: false };
    const email = this.config.adminEmail ?? 'admin@example.com';
    const generated = this.config.adminPassword ? null : newSecret('').slice(0, 20);
    const password = this.config.adminPassword ?? generated!;
    const user = (await this.em.findOne(User, { email })) ?? this.em.create(User, { email, name: 'Administrator', passwordHash: '', role: 'admin' });
    user.role = 'admin';
    user.passwordHash = await hashPassword(password);
    await this.em.flush();
    return { email, password: generated, created: true };
  }
}

export { API_TOKEN_PREFIX };

/** Where an anonymous request came from. */
export interface Origin {
  ip?: string | null;
}

/** The actor of a session being opened (for the activity entry of the sign-in itself). */
function actorOf(user: User, session: Session): Actor {
  const { id, email, name, role, createdAt, updatedAt } = user;
  return { user: { id, email, name, role, createdAt, updatedAt }, via: 'session', credentialId: session.id, credentialCreatedAt: session.createdAt, credentialExpiresAt: session.expiresAt };
}
