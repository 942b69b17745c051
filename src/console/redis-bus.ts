/**
 * The console bus over Redis: pub/sub channel `hostpanel:<namespace>:db<n>:console:<serverId>`, history
 * in a capped list, and the single-upstream lock as `SET key owner NX PX ttl` (renewed only by its
 * owner). Each wait for Redis is bounded (REDIS_WAIT_MS): a Redis that hangs is treated as away.
 *
 * Events reach this instance's own subscribers directly (through a LocalBus), never waiting for Redis;
 * Redis carries them to the other instances, which tell their own messages apart by the origin prefix
 * (`<instance>|<json array of events>`). What goes to Redis is batched per server and flushed once per
 * turn of the event loop, one MULTI for all servers (history RPUSH + LTRIM + PEXPIRE, one PUBLISH),
 * and a flush waits for the previous one: a console flood used to cost six Redis commands per line,
 * and a line reached even this instance's subscribers only after Redis had stored it, so a busy
 * gateway fell seconds behind and was still draining Redis replies long after the flood. While a
 * flush is under way the next batch grows, up to MAX_PENDING events per server (the oldest are
 * dropped for the other instances, with one warning, rather than letting memory grow).
 * While Redis is unreachable the bus keeps working as a single instance: local delivery, local
 * history and a local upstream lock, so consoles on this instance go on (a subscriber on another
 * instance waits for Redis, or for its own instance to take an upstream of its own). When Redis is
 * back, channels are subscribed again and the Redis lock decides again.
 *
 * A Redis that hangs (connected, answering nothing) is found out by a flush that gets no answer within
 * REDIS_FLUSH_WAIT_MS: the flush fails (kept events are held again), and until
 * Redis answers a PING nothing more is written to the hung connection (the next batch waits, as behind
 * a slow flush) and history, locks and subscriptions are answered locally at once; close() waits at
 * most REDIS_WAIT_MS for each last flush, so a shutdown never waits for Redis.
 *
 * Who may watch a server must not depend on Redis being there: events that change it (KEPT_TYPES)
 * are never dropped for the other instances but wait until Redis takes them, and whenever the
 * subscriber connection is (back) up, every subscription on this instance re-checks its rights
 * (ANY_ACCESS_CHANGED), for what was published while it was not listening is lost to it.
 */
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { childLogger } from '../logger.js';
import { LocalBus, type ConsoleBus } from './bus.js';
import { ANY_ACCESS_CHANGED, HISTORY_LINES, MAX_BATCH_EVENTS, type ConsoleEvent, type ConsoleEventType } from './types.js';

const log = childLogger('redis-bus');
/** Events per server waiting for Redis while a flush is under way (about 10 s of a 1,000 lines/s flood). */
const MAX_PENDING = MAX_BATCH_EVENTS;
/** How long a history read, lock or channel subscription waits for Redis before the local fallback answers. */
const REDIS_WAIT_MS = 1_000;
/**
 * How long a flush (one MULTI) or a PING waits for Redis: past it the flush fails, and Redis is treated
 * as hanging until it answers a PING. (A wait, not ioredis's commandTimeout: ioredis leaves the timer
 * of a command that fails otherwise running, which kept the process up after close().)
 */
const REDIS_FLUSH_WAIT_MS = 5_000;
/** Events that change who may watch a server: held until Redis takes them, however long it is away. */
const KEPT_TYPES: ReadonlySet<ConsoleEventType> = new Set(['access', 'gone']);

/** Resolves like `promise`, or rejects after `ms` (the command itself goes on; only the wait ends). */
function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** What one server has waiting for the next flush: serialised events for history and for the channel. */
interface Pending {
  history: string[];
  events: string[];
}

// Take or renew the lock when free or already ours.
const ACQUIRE = `local v = redis.call('GET', KEYS[1])
if (not v) or v == ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export class RedisBus implements ConsoleBus {
  private readonly origin = randomUUID();
  private readonly pub: Redis;
  private readonly sub: Redis;
  /** This instance's subscribers, history copy and fallback lock. */
  private readonly local = new LocalBus();
  /** Servers this instance has subscribers for (their channels are subscribed again after a reconnect). */
  private readonly channels = new Map<string, number>();
  private degraded = false;
  /** A flush got no answer on the connected publishing connection: Redis hangs until a PING is answered. */
  private stalled = false;
  private stallProbe: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly pending = new Map<string, Pending>();
  /** Events of KEPT_TYPES not taken by Redis yet, per server (serialised; a repeat is held once). */
  private readonly kept = new Map<string, Set<string>>();
  private flushing: Promise<void> | null = null;
  private flushQueued = false;
  private droppedWarned = false;
  /** The last event serialised (history and channel get the same event one after the other). */
  private lastEvent: ConsoleEvent | null = null;
  private lastJson = '';

  /** Channel names start with this: the deployment's namespace and the Redis database number. */
  private readonly channelPrefix: string;
  private readonly keyPrefix: string;

  /**
   * `namespace`: what the gateway instances of one deployment share (the database name), so that two
   * deployments on one Redis keep their consoles apart. Keys live in the URL's Redis database; pub/sub
   * channels are shared by all databases of a Redis, so their names carry the database number too.
   */
  constructor(url: string, namespace = 'default') {
    // disconnectTimeout: a socket that never connected (Redis down) is not waited for 2 s at close
    this.pub = new Redis(url, { maxRetriesPerRequest: 2, disconnectTimeout: 300 });
    this.sub = new Redis(url, { maxRetriesPerRequest: 2, disconnectTimeout: 300 });
    this.keyPrefix = `hostpanel:${namespace}:`;
    this.channelPrefix = `hostpanel:${namespace}:db${this.pub.options.db ?? 0}:console:`;
    for (const c of [this.pub, this.sub]) c.on('error', (err) => log.debug({ err: err.message }, 'redis error'));
    this.sub.on('ready', () => void this.resubscribe());
    this.pub.on('ready', () => {
      if (this.degraded) log.info('Redis is back: console events reach the other gateway instances again');
      this.degraded = false;
      this.stalled = false; // a new connection
      if (this.kept.size) void this.flush();
    });
    this.sub.on('message', (ch: string, raw: string) => {
      const bar = raw.indexOf('|');
      if (bar < 0 || raw.slice(0, bar) === this.origin) return; // ours: already delivered locally
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw.slice(bar + 1));
      } catch {
        return;
      }
      const serverId = ch.slice(this.channelPrefix.length);
      // a batch (an array); a single event object is what instances before batching sent
      for (const event of Array.isArray(parsed) ? parsed : [parsed]) void this.local.publish(serverId, event as ConsoleEvent);
    });
  }

  /**
   * Subscribes this instance's channels once the subscriber connection is (back) up, then has every
   * subscription to them re-check its rights: an `access` event published while this instance was
   * not subscribed never reaches it.
   */
  private async resubscribe(): Promise<void> {
    const ids = [...this.channels.keys()];
    if (!ids.length) return;
    const names = ids.map((id) => this.channelName(id));
    await within(REDIS_WAIT_MS, this.sub.subscribe(...names)).catch((err: Error) => this.failed('subscribe', err));
    for (const id of ids) if (this.channels.has(id)) void this.local.publish(id, ANY_ACCESS_CHANGED);
  }

  /** The pub/sub channel of a server's console events. */
  channelName(serverId: string): string {
    return this.channelPrefix + serverId;
  }

  private historyKey(serverId: string): string {
    return `${this.keyPrefix}console-history:${serverId}`;
  }

  private lockKey(serverId: string): string {
    return `${this.keyPrefix}console-upstream:${serverId}`;
  }

  /** Whether a Redis command can be sent now (else the local fallback answers at once). */
  private get up(): boolean {
    return this.pub.status === 'ready' && !this.stalled;
  }

  /**
   * A flush got no answer although the connection is up: Redis hangs. Until it answers a PING (one at
   * a time, each waited for REDIS_FLUSH_WAIT_MS), nothing is flushed and the rest is answered locally.
   */
  private stall(): void {
    if (this.stalled || this.closed) return;
    this.stalled = true;
    const probe = () => {
      this.stallProbe = null;
      if (this.closed || !this.stalled) return;
      within(REDIS_FLUSH_WAIT_MS, this.pub.ping()).then(
        () => {
          if (this.closed || !this.stalled) return;
          this.stalled = false;
          log.info('Redis answers again: console events reach the other gateway instances again');
          this.degraded = false;
          if (this.kept.size || this.pending.size) void this.flush();
        },
        () => {
          if (!this.closed && this.stalled) this.stallProbe = setTimeout(probe, REDIS_WAIT_MS);
        },
      );
    };
    probe();
  }

  /** One warning per outage, not one per console line. */
  private failed(what: string, err: Error | string): void {
    if (!this.degraded) log.warn({ err: typeof err === 'string' ? err : err.message, what }, 'Redis unreachable: console events stay on this instance until it is back');
    this.degraded = true;
  }

  private json(event: ConsoleEvent): string {
    if (this.lastEvent !== event) {
      this.lastEvent = event;
      this.lastJson = JSON.stringify(event);
    }
    return this.lastJson;
  }

  private enqueue(serverId: string, kind: keyof Pending, event: ConsoleEvent): void {
    let p = this.pending.get(serverId);
    if (!p) this.pending.set(serverId, (p = { history: [], events: [] }));
    const list = p[kind];
    list.push(this.json(event));
    if (kind === 'history' && list.length > HISTORY_LINES) list.splice(0, list.length - HISTORY_LINES);
    if (list.length > MAX_PENDING) {
      list.splice(0, list.length - MAX_PENDING);
      if (!this.droppedWarned) log.warn({ serverId }, 'Redis is not keeping up: the oldest console events waiting for it are dropped for the other instances');
      this.droppedWarned = true;
    }
    this.schedule();
  }

  /** Holds events of KEPT_TYPES for the next flush. */
  private keep(serverId: string, events: Iterable<string>): void {
    let held = this.kept.get(serverId);
    if (!held) this.kept.set(serverId, (held = new Set()));
    for (const e of events) held.add(e);
  }

  private schedule(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    setImmediate(() => void this.flush());
  }

  /**
   * Sends what is pending in one MULTI, after the previous flush has completed. Without Redis the
   * pending events are dropped for the other instances, and kept events wait: a failed flush holds
   * them again for the next one (when events come, or when Redis is back).
   */
  private async flush(): Promise<void> {
    if (this.flushing) return; // the running flush takes the new batch when it is done
    this.flushQueued = false;
    if (!this.pending.size && !this.kept.size) return;
    // Redis hangs: as while a slow flush is under way, the batch grows (up to MAX_PENDING) until Redis
    // answers a PING, and nothing more is written to the hung connection meanwhile
    if (this.stalled) return;
    const batch = new Map(this.pending);
    this.pending.clear();
    if (!this.up) return this.failed('publish', 'not connected');
    const kept = new Map(this.kept);
    this.kept.clear();
    let sent = false;
    this.flushing = this.send(batch, kept)
      .then(
        () => {
          sent = true;
          this.droppedWarned = false;
        },
        (err: Error) => {
          this.failed('publish', err);
          for (const [serverId, events] of kept) this.keep(serverId, events);
          if (this.pub.status === 'ready') this.stall(); // no answer on a live connection: Redis hangs
        },
      )
      .finally(() => {
        this.flushing = null;
        if (this.pending.size || (sent && this.kept.size)) void this.flush();
      });
    await this.flushing;
  }

  /** One MULTI: per server, its history lines and one PUBLISH of its events (the kept ones last). */
  private send(batch: Map<string, Pending>, kept: Map<string, Set<string>>): Promise<unknown> {
    const m = this.pub.multi();
    for (const [serverId, p] of batch) {
      if (!p.history.length) continue;
      const key = this.historyKey(serverId);
      m.rpush(key, ...p.history)
        .ltrim(key, -HISTORY_LINES, -1)
        .pexpire(key, 3_600_000);
    }
    for (const serverId of new Set([...batch.keys(), ...kept.keys()])) {
      const events = [...(batch.get(serverId)?.events ?? []), ...(kept.get(serverId) ?? [])];
      if (events.length) m.publish(this.channelName(serverId), `${this.origin}|[${events.join(',')}]`);
    }
    return within(REDIS_FLUSH_WAIT_MS, m.exec());
  }

  async publish(serverId: string, event: ConsoleEvent): Promise<void> {
    await this.local.publish(serverId, event);
    if (!KEPT_TYPES.has(event.type)) return this.enqueue(serverId, 'events', event);
    this.keep(serverId, [JSON.stringify(event)]);
    this.schedule();
  }

  async subscribe(serverId: string, handler: (e: ConsoleEvent) => void) {
    const unsubscribeLocal = await this.local.subscribe(serverId, handler);
    const n = this.channels.get(serverId) ?? 0;
    this.channels.set(serverId, n + 1);
    // without Redis now, the 'ready' handler subscribes the channel when it is back
    if (n === 0 && this.sub.status === 'ready') await within(REDIS_WAIT_MS, this.sub.subscribe(this.channelName(serverId))).catch((err: Error) => this.failed('subscribe', err));
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      await unsubscribeLocal();
      const left = (this.channels.get(serverId) ?? 1) - 1;
      if (left > 0) return void this.channels.set(serverId, left);
      this.channels.delete(serverId);
      if (this.sub.status === 'ready') await within(REDIS_WAIT_MS, this.sub.unsubscribe(this.channelName(serverId))).catch(() => undefined);
    };
  }

  async history(serverId: string): Promise<ConsoleEvent[]> {
    if (!this.up) return this.local.history(serverId);
    try {
      // lines not sent to Redis yet: a flush sends them after this LRANGE, on the same connection
      const waiting = [...(this.pending.get(serverId)?.history ?? [])];
      const raw = [...(await within(REDIS_WAIT_MS, this.pub.lrange(this.historyKey(serverId), 0, -1))), ...waiting].slice(-HISTORY_LINES);
      return raw.flatMap((r) => {
        try {
          return [JSON.parse(r) as ConsoleEvent];
        } catch {
          return [];
        }
      });
    } catch (err) {
      this.failed('history', err as Error);
      return this.local.history(serverId);
    }
  }

  async appendHistory(serverId: string, event: ConsoleEvent): Promise<void> {
    await this.local.appendHistory(serverId, event);
    this.enqueue(serverId, 'history', event);
  }

  async acquire(serverId: string, owner: string, ttlMs: number): Promise<boolean> {
    if (this.up) {
      try {
        return (await within(REDIS_WAIT_MS, this.pub.eval(ACQUIRE, 1, this.lockKey(serverId), owner, String(ttlMs)))) === 1;
      } catch (err) {
        this.failed('upstream lock', err as Error);
      }
    }
    // no Redis: this instance decides alone (its subscribers keep their console)
    return this.local.acquire(serverId, owner, ttlMs);
  }

  async release(serverId: string, owner: string): Promise<void> {
    await this.local.release(serverId, owner);
    if (this.up) await within(REDIS_WAIT_MS, this.pub.eval(RELEASE, 1, this.lockKey(serverId), owner)).catch(() => undefined);
  }

  async close(): Promise<void> {
    // what is still pending goes out before the connections close, if Redis answers soon: a shutdown
    // does not wait for a Redis that hangs (REDIS_FLUSH_WAIT_MS ends the flush later anyway)
    await within(REDIS_WAIT_MS, this.flushing ?? Promise.resolve()).catch(() => undefined);
    await within(REDIS_WAIT_MS, this.flush()).catch(() => undefined);
    this.closed = true;
    if (this.stallProbe) clearTimeout(this.stallProbe);
    await this.local.close();
    this.sub.disconnect();
    this.pub.disconnect();
  }
}
