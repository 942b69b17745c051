/**
 * Console fan-out at the gateway: any number of subscribers per server, at most ONE upstream feed
 * per server across all gateway instances (elected through the bus lock), opened with the first
 * subscriber and closed with the last. History lines first, then live events.
 */
import { randomUUID } from 'node:crypto';
import { childLogger } from '../logger.js';
import type { ConsoleBus } from './bus.js';
import type { ConsoleEvent } from './types.js';
import { UpstreamFeed, type UpstreamTicket } from './upstream.js';

const log = childLogger('console-hub');
const LOCK_TTL_MS = 6000;

type Listener = (e: ConsoleEvent) => void;

interface Entry {
  listeners: Set<Listener>;
  unsubscribeBus: Promise<() => Promise<void>>;
  timer: NodeJS.Timeout | null;
  feed: UpstreamFeed | null;
}

export class ConsoleHub {
  readonly instanceId = randomUUID();
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly bus: ConsoleBus,
    private readonly ticket: (serverId: string) => Promise<UpstreamTicket>,
  ) {}

  /** Number of upstream feeds this instance holds (for tests and metrics). */
  get upstreamCount(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.feed) n++;
    return n;
  }

  async subscribe(serverId: string, listener: Listener): Promise<() => void> {
    let entry = this.entries.get(serverId);
    if (!entry) {
      const e: Entry = { listeners: new Set(), unsubscribeBus: Promise.resolve(async () => undefined), timer: null, feed: null };
      e.unsubscribeBus = this.bus.subscribe(serverId, (ev) => e.listeners.forEach((l) => l(ev)));
      this.entries.set(serverId, e);
      entry = e;
      await entry.unsubscribeBus;
      void this.elect(serverId, e);
    } else {
      await entry.unsubscribeBus;
    }

    // Live events that arrive while the history is read wait in a queue, then follow it.
    const queue: ConsoleEvent[] = [];
    let ready = false;
    const wrapped: Listener = (ev) => (ready ? listener(ev) : queue.push(ev));
    entry.listeners.add(wrapped);
    const history = await this.bus.history(serverId).catch(() => [] as ConsoleEvent[]);
    const seen = new Set(history.map((h) => JSON.stringify(h)));
    history.forEach(listener);
    for (const ev of queue) if (!seen.has(JSON.stringify(ev))) listener(ev);
    ready = true;

    let done = false;
    return () => {
      if (done) return;
      done = true;
      const e = this.entries.get(serverId);
      if (!e) return;
      e.listeners.delete(wrapped);
      if (e.listeners.size === 0) void this.teardown(serverId, e);
    };
  }

  /** Takes (or keeps) the upstream lock while this instance has subscribers for the server. */
  private async elect(serverId: string, e: Entry): Promise<void> {
    if (this.entries.get(serverId) !== e) return;
    try {
      const mine = await this.bus.acquire(serverId, this.instanceId, LOCK_TTL_MS);
      if (this.entries.get(serverId) !== e) {
        if (mine) await this.bus.release(serverId, this.instanceId);
        return;
      }
      if (mine && !e.feed) {
        e.feed = new UpstreamFeed(serverId, () => this.ticket(serverId), (ev) => void this.relay(serverId, ev));
        e.feed.start();
        log.debug({ serverId }, 'holding the upstream feed');
      } else if (!mine && e.feed) {
        e.feed.close();
        e.feed = null;
      }
    } catch (err) {
      log.warn({ serverId, err: (err as Error).message }, 'upstream election failed; retrying');
    }
    if (this.entries.get(serverId) === e) e.timer = setTimeout(() => void this.elect(serverId, e), LOCK_TTL_MS / 3);
  }

  private async relay(serverId: string, ev: ConsoleEvent): Promise<void> {
    try {
      if (ev.type === 'console_output' || ev.type === 'install_output') await this.bus.appendHistory(serverId, ev);
      await this.bus.publish(serverId, ev);
    } catch (err) {
      log.warn({ serverId, err: (err as Error).message }, 'could not relay a console event');
    }
  }

  private async teardown(serverId: string, e: Entry): Promise<void> {
    this.entries.delete(serverId);
    if (e.timer) clearTimeout(e.timer);
    if (e.feed) {
      e.feed.close();
      e.feed = null;
      await this.bus.release(serverId, this.instanceId).catch(() => undefined);
    }
    await (await e.unsubscribeBus)().catch(() => undefined);
  }

  async close(): Promise<void> {
    await Promise.all([...this.entries.entries()].map(([id, e]) => this.teardown(id, e)));
  }
}
