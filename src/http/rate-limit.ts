/**
 * One limiter for REST and GraphQL (CONTRACT §6): fixed 60-second windows per bucket and key.
 * Store: rate-limiter-flexible in memory, or Redis when REDIS_URL is set (shared by gateway instances).
 */
import type { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import type Redis from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';

export type Bucket = 'general' | 'auth' | 'admin';
export const WINDOW_SECONDS = 60;

export interface LimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the window ends. */
  reset: number;
  retryAfter: number;
}

export type LimiterFactory = (bucket: Bucket, points: number) => RateLimiterAbstract;

export const memoryLimiters: LimiterFactory = (bucket, points) =>
  new RateLimiterMemory({ keyPrefix: `rl:${bucket}`, points, duration: WINDOW_SECONDS });

/**
 * Shared limits for several gateway instances: one Redis key per bucket and caller, namespaced by the
 * database the instances share (one platform = one budget). Should Redis be
 * unreachable, each instance falls back to its own in-memory counts rather than failing requests.
 */
export const redisLimiters =
  (redis: Redis, namespace: string): LimiterFactory =>
  (bucket, points) =>
    new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `hostpanel:${namespace}:rl:${bucket}`,
      points,
      duration: WINDOW_SECONDS,
      insuranceLimiter: new RateLimiterMemory({ keyPrefix: `rl:${bucket}:fallback`, points, duration: WINDOW_SECONDS }),
    });

export class RateLimiter {
  private readonly limiters: Record<Bucket, RateLimiterAbstract>;
  constructor(
    readonly limits: Record<Bucket, number>,
    factory: LimiterFactory = memoryLimiters,
  ) {
    this.limiters = {
      general: factory('general', limits.general),
      auth: factory('auth', limits.auth),
      admin: factory('admin', limits.admin),
    };
  }

  async consume(bucket: Bucket, key: string): Promise<LimitResult> {
    const limit = this.limits[bucket];
    let res: RateLimiterRes;
    let allowed = true;
    try {
      res = await this.limiters[bucket].consume(key, 1);
    } catch (rejection) {
      if (rejection instanceof Error) throw rejection; // store failure, not a rejection
      res = rejection as RateLimiterRes;
      allowed = false;
    }
    const msLeft = Math.max(0, res.msBeforeNext);
    return {
      allowed,
      limit,
      remaining: Math.max(0, limit - res.consumedPoints),
      reset: Math.ceil((Date.now() + msLeft) / 1000),
      retryAfter: Math.max(1, Math.ceil(msLeft / 1000)),
    };
  }
}

/** The bucket of a path under /api/v1 (CONTRACT §6). */
export function bucketForPath(rawPath: string): Bucket {
  // Express matches routes regardless of case (`/AUTH/signin` is `/auth/signin`), so must this
  const path = rawPath.toLowerCase();
  if (path.startsWith('/auth/') || path === '/auth') return 'auth';
  if (path.startsWith('/admin/') || path === '/admin') return 'admin';
  return 'general';
}
