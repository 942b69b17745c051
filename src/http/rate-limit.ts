/**
 * One limiter for REST and GraphQL: fixed 60-second windows per bucket and key.
 * Store: rate-limiter-flexible in memory, or Redis when REDIS_URL is set (shared by gateway instances).
 */
import type { RateLimiterRes } from 'rate-limiter-flexible';
import type Redis from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import { childLogger } from '../logger.js';

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

/** What the limiter needs of a store: rate-limiter-flexible's `consume` (rejects with a RateLimiterRes when over). */
export interface PointStore {
  consume(key: string, points: number): Promise<RateLimiterRes>;
}

export type LimiterFactory = (bucket: Bucket, points: number) => PointStore;

export const memoryLimiters: LimiterFactory = (bucket, points) =>
  new RateLimiterMemory({ keyPrefix: `rl:${bucket}`, points, duration: WINDOW_SECONDS });

/** How long a request waits for Redis before it is counted in memory instead. */
export const REDIS_LIMIT_TIMEOUT_MS = 250;
/** After Redis failed or hung, how long requests are counted in memory before Redis is tried again. */
export const REDIS_RETRY_AFTER_MS = 5_000;

const log = childLogger('rate-limit');

/**
 * Shared limits for several gateway instances: one Redis key per bucket and caller, namespaced by the
 * database the instances share (one platform = one budget). Should Redis be unreachable, or hang
 * (a network partition, a stuck server), each instance counts in memory for a while rather than
 * making requests wait: the client is created with `enableOfflineQueue: false` and a
 * `commandTimeout` (src/platform.ts), and after one failure Redis is left alone for
 * REDIS_RETRY_AFTER_MS, so a hung Redis costs one request one timeout, not every request.
 */
export const redisLimiters = (redis: Redis, namespace: string): LimiterFactory => {
  let skipUntil = 0;
  let warned = false;
  return (bucket, points) => {
    const shared = new RateLimiterRedis({ storeClient: redis, keyPrefix: `hostpanel:${namespace}:rl:${bucket}`, points, duration: WINDOW_SECONDS });
    const fallback = new RateLimiterMemory({ keyPrefix: `rl:${bucket}:fallback`, points, duration: WINDOW_SECONDS });
    const consume = async (key: string, pointsToConsume: number): Promise<RateLimiterRes> => {
      if (Date.now() < skipUntil || redis.status !== 'ready') return fallback.consume(key, pointsToConsume);
      try {
        const res = await shared.consume(key, pointsToConsume);
        warned = false;
        return res;
      } catch (err) {
        if (!(err instanceof Error)) throw err; // over the limit: a RateLimiterRes
        skipUntil = Date.now() + REDIS_RETRY_AFTER_MS;
        if (!warned) log.warn({ err: err.message }, 'Redis did not answer the rate limiter: counting in memory on this instance for now');
        warned = true;
        return fallback.consume(key, pointsToConsume);
      }
    };
    return { consume };
  };
};

export class RateLimiter {
  private readonly limiters: Record<Bucket, PointStore>;
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

  /** Spends `points` requests of `bucket` for `key` (a GraphQL document with aliases spends several). */
  async consume(bucket: Bucket, key: string, points = 1): Promise<LimitResult> {
    const limit = this.limits[bucket];
    let res: RateLimiterRes;
    let allowed = true;
    try {
      res = await this.limiters[bucket].consume(key, points);
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

