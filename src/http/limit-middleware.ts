import type { Request, RequestHandler, Response } from 'express';
import { AppError } from '../errors.js';
import type { Charge } from '../graphql/buckets.js';
import { bucketOfPath, operationOfRequest, type KeyedBy } from '../operations/table.js';
import { clientAddress } from './client-address.js';
import type { LimitResult, RateLimiter } from './rate-limit.js';

export { clientAddress };

export function setLimitHeaders(res: Response, r: LimitResult): void {
  res.setHeader('X-RateLimit-Limit', String(r.limit));
  res.setHeader('X-RateLimit-Remaining', String(r.remaining));
  res.setHeader('X-RateLimit-Reset', String(r.reset));
  if (!r.allowed) res.setHeader('Retry-After', String(r.retryAfter));
}

/** Whose budget a request spends: its user's for operations keyed by user, else its client address's. */
export function limitKey(req: Request, keyedBy: KeyedBy): string {
  if (keyedBy === 'user' && req.actor) return `user:${req.actor.user.id}`;
  return `ip:${clientAddress(req)}`;
}

/**
 * Spends each charge (its bucket, its key, its points) at once; the answer to show is the first
 * refusal, else the bucket with the fewest requests left.
 */
export async function consumeAll(limiter: RateLimiter, charges: readonly Charge[], keyOf: (keyedBy: KeyedBy) => string): Promise<LimitResult> {
  // the buckets are counted at once (with Redis: one round trip's wait, not one per bucket)
  const results = await Promise.all(charges.map((c) => limiter.consume(c.bucket, keyOf(c.keyedBy), c.points)));
  let shown: LimitResult | null = null;
  for (const r of results) {
    if (!shown || (shown.allowed && (!r.allowed || r.remaining < shown.remaining))) shown = r;
  }
  return shown!;
}

/**
 * Spends one request of the operation's bucket (src/operations/table.ts; a path that is no operation
 * spends by its prefix, from the caller's budget), sets the headers, and 429s when over.
 */
export function rateLimit(limiter: RateLimiter): RequestHandler {
  return async (req, res, next) => {
    try {
      const op = operationOfRequest(req.method, req.path);
      const bucket = op?.bucket ?? bucketOfPath(req.path);
      const r = await limiter.consume(bucket, limitKey(req, op?.keyedBy ?? (bucket === 'auth' ? 'address' : 'user')));
      setLimitHeaders(res, r);
      if (!r.allowed) {
        throw new AppError('RATE_LIMITED', `Too many requests. Try again in ${r.retryAfter} seconds.`, { retryAfter: r.retryAfter });
      }
      next();
    } catch (err) {
      next(err);
    }
  };
}

/**
 * A sign-in that does not come through the API (an SFTP login a node asks about) spends the same
 * budget of its client address as POST /auth/signin; RATE_LIMITED when it is used up.
 */
export async function spendSigninAttempt(limiter: RateLimiter, ip: string): Promise<void> {
  const r = await limiter.consume('auth', `ip:${ip}`);
  if (!r.allowed) throw new AppError('RATE_LIMITED', `Too many sign-in attempts. Try again in ${r.retryAfter} seconds.`, { retryAfter: r.retryAfter });
}
