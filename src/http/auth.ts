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

/** Finds the credential of a request (HTTP or WebSocket upgrade). Bearer wins over the cookie. */
export function credentialOf(req: IncomingMessage, authorization?: unknown): Credential | null {
  const header = typeof authorization === 'string' ? authorization : req.headers.authorization;
  if (header) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return m ? { secret: m[1]!, via: 'bearer' } : { secret: '', via: 'bearer' };
  }
  const cookie = readCookie(req.headers.cookie, SESSION_COOKIE);
  return cookie ? { secret: cookie, via: 'cookie' } : null;
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * CSRF: cookies ride along with cross-site requests, so a cookie-authenticated write must come from
 * our own origin (or a trusted one). Browsers send Origin on every cross-origin write; a request with
 * no Origin and no Sec-Fetch-Site is not from a browser page and cannot be a CSRF.
 */
export function checkOrigin(req: Request, config: Config): void {
  if (SAFE.has(req.method)) return;
  const origin = req.headers.origin;
  const host = req.headers.host;
  if (origin && origin !== 'null') {
    let originHost: string;
    try {
      originHost = new URL(origin).host;
    } catch {
      throw AppError.forbidden('Cross-site request refused (bad Origin).');
    }
    if (originHost === host || config.trustedOrigins.includes(origin)) return;
    throw AppError.forbidden('Cross-site request refused: the Origin does not match this panel.');
  }
  if (origin === 'null') throw AppError.forbidden('Cross-site request refused (opaque Origin).');
  const site = req.headers['sec-fetch-site'];
  if (site && site !== 'same-origin' && site !== 'none') throw AppError.forbidden('Cross-site request refused.');
}

/**
 * `opts.checkOrigin: false`: the caller runs {@link checkOrigin} itself later (REST does, after its
 * rate limiter, so that the 403 carries the rate-limit headers).
 */
export function authenticate(auth: AuthService, config: Config, opts: { checkOrigin?: boolean } = {}): RequestHandler {
  const originCheck = opts.checkOrigin ?? true;
  return async (req, _res, next) => {
    try {
      const cred = credentialOf(req);
      req.credentialVia = cred?.via ?? null;
      req.actor = cred && cred.secret ? await auth.authenticate(cred.secret) : null;
      if (originCheck && req.actor && cred?.via === 'cookie') checkOrigin(req, config);
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
