/**
 * Per-account sign-in throttling: after 10 failed sign-ins to one account within 15 minutes, further
 * attempts on that account are refused (429 RATE_LIMITED, `Retry-After`) until the window has passed,
 * whatever the password and wherever they come from, so that guessing one account's password from many
 * addresses gets no further than the per-address budget allows from one. A successful sign-in clears
 * the count. With REDIS_URL the counts are kept in Redis, shared by every gateway instance (else N
 * instances would allow N × 10 guesses); each instance also counts its own in memory, which holds
 * while Redis does not answer.
 */
import type Redis from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { AppError } from '../errors.js';
import { redisOrMemory } from '../http/rate-limit.js';

export const SIGNIN_FAILURES = 10;
export const SIGNIN_WINDOW_SECONDS = 15 * 60;

/**
 * Counts of failures per key (an account's sign-ins, an address's node signatures) that must hold
 * across gateway instances. This instance counts every failure in memory; once `share` is called
 * (REDIS_URL set) it counts them in Redis too, under `hostpanel:<namespace>:<keyPrefix>` (the
 * namespace is the database the instances share), and Redis's count, the instances' sum, decides. Each
 * count Redis answers becomes this instance's own count of that key. While Redis stalls or is away
 * (redisOrMemory, src/http/rate-limit.ts) this instance's own count decides, so an outage in the middle
 * of a guessing run gives no key more tries on this instance than all the instances had left when it
 * last heard from Redis, and a count another instance's success cleared is clear here too once Redis
 * has answered for that key.
 */
export class FailureCounts {
  private readonly memory: RateLimiterMemory;
  private shared: { store: RateLimiterRedis; pick: ReturnType<typeof redisOrMemory> } | null = null;

  constructor(private readonly opts: { keyPrefix: string; points: number; duration: number }) {
    this.memory = new RateLimiterMemory(opts);
  }

  /** From now on, count in `redis` as well, shared by the instances of one platform (`namespace`). */
  share(redis: Redis, namespace: string): void {
    const store = new RateLimiterRedis({ storeClient: redis, keyPrefix: `hostpanel:${namespace}:${this.opts.keyPrefix}`, points: this.opts.points, duration: this.opts.duration });
    this.shared = { store, pick: redisOrMemory(redis, this.opts.keyPrefix) };
  }

  /** Rejects with a RateLimiterRes when the key's points are used up. */
  consume(key: string, points = 1): Promise<RateLimiterRes> {
    return this.both(key, (store) => store.consume(key, points));
  }

  penalty(key: string, points = 1): Promise<RateLimiterRes> {
    return this.both(key, (store) => store.penalty(key, points));
  }

  get(key: string): Promise<RateLimiterRes | null> {
    return this.both(key, (store) => store.get(key));
  }

  delete(key: string): Promise<boolean> {
    return this.both(key, (store) => store.delete(key));
  }

  /** `op` on this instance's count and, when shared, on Redis's: Redis's outcome when it answers, else this instance's. */
  private both<T>(key: string, op: (store: RateLimiterAbstract) => Promise<T>): Promise<T> {
    const local = op(this.memory);
    const shared = this.shared;
    if (!shared) return local;
    local.catch(() => undefined); // a refusal here is this instance's answer only when Redis does not answer
    return shared.pick(() => {
      const answer = op(shared.store);
      const mirror = (res: unknown) => this.mirror(key, res);
      answer.then(mirror, mirror); // a refusal carries Redis's count too
      return answer;
    }, () => local);
  }

  /**
   * A count Redis answered (consume's, penalty's, get's; a refusal carries one too) becomes this
   * instance's count of `key`; none there (get's null) clears it here.
   */
  private mirror(key: string, res: unknown): void {
    if (res === null) void this.memory.delete(key);
    else if (res instanceof RateLimiterRes && res.msBeforeNext > 0) void this.memory.set(key, res.consumedPoints, Math.ceil(res.msBeforeNext / 1000));
  }
}

export class SigninThrottle {
  private readonly failures = new FailureCounts({ keyPrefix: 'signin-failures', points: SIGNIN_FAILURES, duration: SIGNIN_WINDOW_SECONDS });

  /** Several gateway instances (REDIS_URL): count in `redis`, so the 10 tries are for all of them together. */
  share(redis: Redis, namespace: string): void {
    this.failures.share(redis, namespace);
  }

  /**
   * Takes one of the account's tries before its password is checked, or throws RATE_LIMITED when they
   * are used up. A try is counted before the (slow) check, so sign-ins sent at once get no more tries
   * than sign-ins sent one by one; a success gives them all back (`succeeded`), a failure keeps its.
   */
  async attempt(email: string): Promise<void> {
    try {
      await this.failures.consume(email, 1);
    } catch (err) {
      if (err instanceof RateLimiterRes) throw refused(err);
      throw err;
    }
  }

  async succeeded(email: string): Promise<void> {
    await this.failures.delete(email);
  }
}

function refused(res: RateLimiterRes): AppError {
  const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return new AppError('RATE_LIMITED', `Too many failed sign-ins to this account. Try again in ${retryAfter} seconds, or reset the password.`, { retryAfter });
}
