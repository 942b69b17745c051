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
 * What every count kept in Redis for several gateway instances does when Redis is away: `pick(shared,
 * memory)` runs `shared` (an operation on Redis), or `memory` (the same on this instance's memory) while
 * Redis is not connected, and for REDIS_RETRY_AFTER_MS after it failed or hung (the client has
 * `enableOfflineQueue: false` and a `commandTimeout`, src/platform.ts), so a hung Redis costs one
 * request one timeout, not every request. One warning per outage. An answer "over the limit" (a
 * RateLimiterRes, not an Error) is not a failure of Redis. `what` names the counts in the warning.
 */
export function redisOrMemory(redis: Redis, what: string): <T>(shared: () => Promise<T>, memory: () => Promise<T>) => Promise<T> {
  let skipUntil = 0;
  let warned = false;
  return async (shared, memory) => {
    if (Date.now() < skipUntil || redis.status !== 'ready') return memory();
    try {
      const res = await shared();
      warned = false;
      return res;
    } catch (err) {
      if (!(err instanceof Error)) throw err;
      skipUntil = Date.now() + REDIS_RETRY_AFTER_MS;
      if (!warned) log.warn({ err: err.message }, `Redis did not answer (${what}): counting in memory on this instance for now`);
      warned = true;
      return memory();
    }
  };
}

/**
 * Shared limits for several gateway instances: one Redis key per bucket and caller, namespaced by the
 * database the instances share (one platform = one budget); while Redis is away, each instance counts
 * in memory (redisOrMemory).
 */
export const redisLimiters = (redis: Redis, namespace: string): LimiterFactory => {
  const pick = redisOrMemory(redis, 'rate limits');
  return (bucket, points) => {
    const shared = new RateLimiterRedis({ storeClient: redis, keyPrefix: `hostpanel:${namespace}:rl:${bucket}`, points, duration: WINDOW_SECONDS });
    const fallback = new RateLimiterMemory({ keyPrefix: `rl:${bucket}:fallback`, points, duration: WINDOW_SECONDS });
    return { consume: (key, pointsToConsume) => pick(() => shared.consume(key, pointsToConsume), () => fallback.consume(key, pointsToConsume)) };
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

