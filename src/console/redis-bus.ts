/**
 * The console bus over Redis: pub/sub channel `hostpanel:console:<serverId>`, history in a capped
 * list, and the single-upstream lock as `SET key owner NX PX ttl` (renewed only by its owner).
 */
import Redis from 'ioredis';
import { childLogger } from '../logger.js';
import type { ConsoleBus } from './bus.js';
import { HISTORY_LINES, type ConsoleEvent } from './types.js';

const log = childLogger('redis-bus');
const channel = (id: string) => `hostpanel:console:${id}`;
const historyKey = (id: string) => `hostpanel:console-history:${id}`;
const lockKey = (id: string) => `hostpanel:console-upstream:${id}`;

// Take or renew the lock when free or already ours.
const ACQUIRE = `local v = redis.call('GET', KEYS[1])
if (not v) or v == ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export class RedisBus implements ConsoleBus {
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly handlers = new Map<string, Set<(e: ConsoleEvent) => void>>();

  constructor(url: string) {
    this.pub = new Redis(url, { maxRetriesPerRequest: 2 });
    this.sub = new Redis(url, { maxRetriesPerRequest: 2 });
    for (const c of [this.pub, this.sub]) c.on('error', (err) => log.warn({ err: err.message }, 'redis error'));
    this.sub.on('message', (ch: string, raw: string) => {
      const id = ch.slice('hostpanel:console:'.length);
      const set = this.handlers.get(id);
      if (!set) return;
      let event: ConsoleEvent;
      try {
        event = JSON.parse(raw) as ConsoleEvent;
      } catch {
        return;
      }
      for (const h of set) h(event);
    });
  }

  async publish(serverId: string, event: ConsoleEvent): Promise<void> {
    await this.pub.publish(channel(serverId), JSON.stringify(event));
  }

  async subscribe(serverId: string, handler: (e: ConsoleEvent) => void) {
    let set = this.handlers.get(serverId);
    if (!set) {
      this.handlers.set(serverId, (set = new Set()));
      await this.sub.subscribe(channel(serverId));
    }
    set.add(handler);
    return async () => {
      const s = this.handlers.get(serverId);
      if (!s) return;
      s.delete(handler);
      if (s.size === 0) {
        this.handlers.delete(serverId);
        await this.sub.unsubscribe(channel(serverId)).catch(() => undefined);
      }
    };
  }

  async history(serverId: string): Promise<ConsoleEvent[]> {
    const raw = await this.pub.lrange(historyKey(serverId), 0, -1);
    return raw.flatMap((r) => {
      try {
        return [JSON.parse(r) as ConsoleEvent];
      } catch {
        return [];
      }
    });
  }

  async appendHistory(serverId: string, event: ConsoleEvent): Promise<void> {
    const key = historyKey(serverId);
    await this.pub.multi().rpush(key, JSON.stringify(event)).ltrim(key, -HISTORY_LINES, -1).pexpire(key, 3_600_000).exec();
  }

  async acquire(serverId: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.pub.eval(ACQUIRE, 1, lockKey(serverId), owner, String(ttlMs))) === 1;
  }

  async release(serverId: string, owner: string): Promise<void> {
    await this.pub.eval(RELEASE, 1, lockKey(serverId), owner);
  }

  async close(): Promise<void> {
    this.sub.disconnect();
    this.pub.disconnect();
  }
}
