/**
 * The one authentication middleware for REST and GraphQL: `Authorization: Bearer <secret>` or the
 * HTTP-only session cookie. It resolves `req.actor` (or null) and never answers by itself, except the
 * CSRF check: a cookie-authenticated write from a foreign origin is refused with 403.
 */
import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler } from 'express';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import type { Actor } from '../services/actor.js';
import type { AuthService } from '../services/auth.service.js';
import { clientAddress } from './limit-middleware.js';

export const SESSION_COOKIE = 'hp_session';

declare module 'http' {
  interface IncomingMessage {
    actor?: Actor | null;
    /** How the credential arrived, when one was sent. */
    credentialVia?: 'bearer' | 'cookie' | null;
  }
}

export interface Credential {
  secret: string;
  via: 'bearer' | 'cookie';
}

function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) {
      try {
        return decodeURIComponent(part.slice(i + 1).trim());
      } catch {
        return null;
      }
    }
  }
  return null;
}

/**
 * The one credential reader, for REST, GraphQL over HTTP and WebSocket, and `/plants`:
 * `connectionParams.authorization` (WebSocket only, given as `authorization`) or the Authorization
 * header ("Bearer <secret>"), else the session cookie. Bearer wins over the cookie; a malformed
 * Authorization value is a bearer credential with an empty secret (it never falls back to the cookie).
 */
export function credentialOf(req: IncomingMessage, authorization?: unknown): Credential | null {
  const header = typeof authorization === 'string' ? authorization : req.headers.authorization;
  if (header) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return m ? { secret: m[1]!, via: 'bearer' } : { secret: '', via: 'bearer' };
  }
  const cookie = readCookie(req.headers.cookie, SESSION_COOKIE);
  return cookie ? { secret: cookie, via: 'cookie' } : null;
}

export interface Authenticated {
  actor: Actor | null;
  /** How the credential arrived, when one was sent. */
  via: Credential['via'] | null;
  secret: string | null;
}

/**
 * Reads the request's credential and resolves its actor (null for none or an unknown one).
 * `bearerOnly`: the cookie is not a credential there (`/plants`, whose documented scheme is bearer).
 */
export async function authenticateRequest(
  auth: AuthService,
  req: IncomingMessage,
  opts: { authorization?: unknown; bearerOnly?: boolean } = {},
): Promise<Authenticated> {
  const cred = credentialOf(req, opts.authorization);
  if (!cred || (opts.bearerOnly && cred.via !== 'bearer')) return { actor: null, via: null, secret: null };
  const actor = cred.secret ? await auth.authenticate(cred.secret) : null;
  // the client address rides along for the activity log
  return { actor: actor && { ...actor, ip: clientAddress(req) }, via: cred.via, secret: cred.secret || null };
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** An origin as `scheme://host[:port]`, or null when it is not a URL. */
function normalOrigin(origin: string): URL | null {
  try {
    return new URL(origin);
  } catch {
    return null;
  }
}

/**
 * The one origin rule, for REST and GraphQL writes and for WebSocket upgrades: a request that may be
 * a browser page of another site is refused. Allowed: an Origin whose host is this panel's Host, or
 * one of TRUSTED_ORIGINS; no Origin at all when Sec-Fetch-Site is absent (not a browser) or says
 * same-origin/none. Refused: any other Origin, the opaque "null", one that is not a URL, and no
 * Origin with a cross-site Sec-Fetch-Site.
 */
export function originAllowed(req: IncomingMessage, config: Config): boolean {
  const origin = req.headers.origin;
  if (origin !== undefined) {
    const url = origin === 'null' ? null : normalOrigin(origin);
    if (!url) return false;
    return url.host === req.headers.host || config.trustedOrigins.some((t) => normalOrigin(t)?.origin === url.origin);
  }
  const site = req.headers['sec-fetch-site'];
  return !site || site === 'same-origin' || site === 'none';
}

/**
 * CSRF: cookies ride along with cross-site requests, so a cookie-authenticated write must pass
 * {@link originAllowed}. Reads (GET, HEAD, OPTIONS) change nothing and are not checked.
 */
export function checkOrigin(req: Request, config: Config): void {
  if (SAFE.has(req.method) || originAllowed(req, config)) return;
  throw AppError.forbidden('Cross-site request refused: the Origin does not match this panel. Use a bearer token, or add the origin to TRUSTED_ORIGINS.');
}

/**
 * `opts.checkOrigin: false`: the caller runs {@link checkOrigin} itself later (REST does, after its
 * rate limiter, so that the 403 carries the rate-limit headers).
 */
export function authenticate(auth: AuthService, config: Config, opts: { checkOrigin?: boolean } = {}): RequestHandler {
  const originCheck = opts.checkOrigin ?? true;
  return async (req, _res, next) => {
    try {
      const found = await authenticateRequest(auth, req);
      req.actor = found.actor;
      req.credentialVia = found.via;
      if (originCheck && req.actor && found.via === 'cookie') checkOrigin(req, config);
      next();
    } catch (err) {
      next(err);
    }
  };
}

/**
 * `Secure` when the request came over https, directly or through a TLS proxy that says so
 * (`X-Forwarded-Proto: https`; trusting it can only restrict the cookie, never widen it).
 */
export function sessionCookieOptions(req: Request, expires: Date) {
  const forwarded = String(req.headers['x-forwarded-proto'] ?? '').split(',')[0]!.trim().toLowerCase();
  return { httpOnly: true, sameSite: 'lax' as const, secure: req.secure || forwarded === 'https', path: '/', expires };
}
