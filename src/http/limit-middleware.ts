import type { Request, RequestHandler, Response } from 'express';
import { AppError } from '../errors.js';
import type { Bucket, LimitResult, RateLimiter } from './rate-limit.js';

export function setLimitHeaders(res: Response, r: LimitResult): void {
  res.setHeader('X-RateLimit-Limit', String(r.limit));
  res.setHeader('X-RateLimit-Remaining', String(r.remaining));
  res.setHeader('X-RateLimit-Reset', String(r.reset));
  if (!r.allowed) res.setHeader('Retry-After', String(r.retryAfter));
}

export function clientAddress(req: { socket: { remoteAddress?: string | undefined }; ip?: string | undefined }): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/** Key: the authenticated user, else the client address; auth endpoints always by address. */
export function limitKey(req: Request, bucket: Bucket): string {
  if (bucket !== 'auth' && req.actor) return `user:${req.actor.user.id}`;
  return `ip:${clientAddress(req)}`;
}

/**
 * Consumes one request from each of `buckets` (each with its own key, see limitKey). The answer to
 * show is the first refusal, else the bucket with the fewest requests left.
 */
export async function consumeAll(limiter: RateLimiter, buckets: readonly Bucket[], keyOf: (bucket: Bucket) => string): Promise<LimitResult> {
  // the buckets are counted at once (with Redis: one round trip's wait, not one per bucket)
  const results = await Promise.all(buckets.map((bucket) => limiter.consume(bucket, keyOf(bucket))));
  let shown: LimitResult | null = null;
  for (const r of results) {
    if (!shown || (shown.allowed && (!r.allowed || r.remaining < shown.remaining))) shown = r;
  }
  return shown!;
}

/** Consumes one request from the bucket chosen by `pick`, sets the headers, and 429s when over. */
export function rateLimit(limiter: RateLimiter, pick: (req: Request) => Bucket): RequestHandler {
  return async (req, res, next) => {
    try {
      const bucket = pick(req);
      const r = await limiter.consume(bucket, limitKey(req, bucket));
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
