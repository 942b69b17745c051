/**
 * Console fan-out at the gateway: any number of subscribers per server, at most ONE upstream feed
 * per server across all gateway instances (elected through the bus lock), opened with the first
 * subscriber and closed with the last. History lines first, then live events.
 *
 * A new feed (the first subscriber after a quiet spell, or another instance taking over) starts with
 * the node's replay of its recent lines. Lines that were relayed before are in the
 * bus's history already, and subscribers got them from there: the replay relays only the lines the
 * history lacks (those printed while no feed was open), see {@link ReplayFilter}.
 */
import { randomUUID } from 'node:crypto';
import { childLogger } from '../logger.js';
import { PacedQueue } from '../shared/paced-queue.js';
import type { ConsoleBus } from './bus.js';
import { batchEvent, batchLine, ConsoleBatcher } from './batcher.js';
import type { BatchLine, ConsoleEvent } from './types.js';
import { UpstreamFeed, type UpstreamTicket } from './upstream.js';

const log = childLogger('console-hub');
const LOCK_TTL_MS = 6000;
/**
 * Longest a line waits for this instance's subscribers (src/shared/paced-queue.ts): the hand-out gets
 * a share of each turn of the event loop, and a line that waited this long is dropped. The node has
 * numbered it already, so every subscriber, per-line and batch alike, sees the gap in `seq`; a batch's
 * `skipped` stays the node's count of the lines it dropped unnumbered (a reader adding both would
 * count these lines twice).
 */
export const FANOUT_MAX_WAIT_MS = 250;

type Listener = (e: ConsoleEvent) => void;

const isLine = (ev: ConsoleEvent) => ev.type === 'console_output' || ev.type === 'install_output';
const lineKey = (ev: ConsoleEvent) => `${ev.type}\u0000${ev.data?.ts}\u0000${ev.data?.seq}\u0000${ev.data?.stream}\u0000${ev.data?.line}`;
const lineTime = (ev: ConsoleEvent) => Date.parse(String(ev.data?.ts));

/**
 * The bus's history of a server, each line once (the first copy): every feed appends what it relays,
 * so a hand-over can leave a line there twice (the old feed's append, held up by a Redis that hangs,
 * lands after the new feed's append of the same lines from its replay). Every reader of the history
 * reads it here.
 */
async function historyOnce(bus: ConsoleBus, serverId: string): Promise<ConsoleEvent[]> {
  const events = await bus.history(serverId).catch(() => [] as ConsoleEvent[]);
  const seen = new Set<string>();
  return events.filter((ev) => {
    if (!isLine(ev)) return true;
    const key = lineKey(ev);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The lines of the bus's history, to recognise a new feed's replay of them. Lines come in time order,
 * so the first line newer than the newest known one ends the replay, and the filter with it.
 */
class ReplayFilter {
  private constructor(
    private readonly known: Set<string>,
    private readonly newest: number,
  ) {}

  static async load(bus: ConsoleBus, serverId: string): Promise<ReplayFilter | null> {
    const lines = (await historyOnce(bus, serverId)).filter(isLine);
    if (!lines.length) return null;
    return new ReplayFilter(new Set(lines.map(lineKey)), Math.max(...lines.map(lineTime).filter(Number.isFinite)));
  }

  /** 'repeat': relayed before; 'done': past the replay (relay this and stop filtering); 'new': relay. */
  check(ev: ConsoleEvent): 'repeat' | 'done' | 'new' {
    if (!(lineTime(ev) <= this.newest)) return 'done';
    return this.known.has(lineKey(ev)) ? 'repeat' : 'new';
  }
}

/** The keys of the last `capacity` lines delivered (a Set in insertion order, the oldest dropped first). */
class RecentLines {
  private readonly keys = new Set<string>();
  constructor(private readonly capacity: number) {}

  /** True when `key` was delivered already; else remembers it. */
  seen(key: string): boolean {
    if (this.keys.has(key)) return true;
    this.keys.add(key);
    if (this.keys.size > this.capacity) this.keys.delete(this.keys.values().next().value!);
    return false;
  }
}

/**
 * A subscriber's live listener while its history is read: live events that arrive meanwhile wait in a
 * queue; `open` (once the history went out) hands them on, and every later one, without the
 * history's copies.
 */
function afterHistory(listener: Listener): { live: Listener; open(history: readonly ConsoleEvent[]): void } {
  const queue: ConsoleEvent[] = [];
  let shadow: HistoryShadow | null = null;
  const deliver = (ev: ConsoleEvent) => {
    const e = shadow!.filter(ev);
    if (e) listener(e);
  };
  return {
    live: (ev) => (shadow ? deliver(ev) : queue.push(ev)),
    open(history) {
      shadow = new HistoryShadow(history);
      queue.splice(0).forEach(deliver);
    },
  };
}

/**
 * The lines one subscriber got from the bus's history. A line is appended to the history before it is
 * published, so a subscriber that read the history in between gets the line live too (alone, or in a
 * batch gathered meanwhile): those copies are dropped for this subscriber only, until the first line
 * newer than the whole history (lines come in time order; no copy can follow it).
 */
class HistoryShadow {
  private keys: Set<string> | null;
  private readonly newest: number;

  constructor(history: readonly ConsoleEvent[]) {
    const lines = history.filter(isLine).map(batchLine);
    this.keys = lines.length ? new Set(lines.map(shadowKey)) : null;
    this.newest = Math.max(-Infinity, ...lines.map((l) => Date.parse(l.ts)).filter(Number.isFinite));
  }

  /** Whether `l` is one of the history's lines. */
  has(l: BatchLine): boolean {
    if (!this.keys) return false;
    if (Date.parse(l.ts) > this.newest) {
      this.keys = null;
      return false;
    }
    return this.keys.has(shadowKey(l));
  }

  /** `ev` as this subscriber should get it: a history line's copy is null; a batch loses its copies. */
  filter(ev: ConsoleEvent): ConsoleEvent | null {
    if (!this.keys) return ev;
    if (isLine(ev)) return this.has(batchLine(ev)) ? null : ev;
    if (ev.type !== 'console_batch') return ev;
    const lines = (ev.data.lines as BatchLine[]).filter((l) => !this.has(l));
    if (lines.length === ev.data.lines.length) return ev;
    return lines.length || ev.data.skipped ? batchEvent(lines, ev.data.skipped) : null;
  }
}

const shadowKey = (l: BatchLine) => `${l.stream}\u0000${l.ts}\u0000${l.seq}\u0000${l.line}`;

/**
 * Lines remembered per server to drop a second copy: more than a feed's replay (150 lines) plus what
 * two feeds can both relay while the lock settles after Redis comes back (two election periods).
 */
const RECENT_LINES = 2_000;

interface Entry {
  listeners: Set<Listener>;
  /**
   * A line can reach an instance twice: when Redis goes away, an instance that got lines over Redis
   * opens its own feed, whose replay holds them again; when Redis is back, two feeds run until the
   * next election closes one, and each line comes from both. Subscribers get it once.
   */
  recent: RecentLines;
  unsubscribeBus: Promise<() => Promise<void>>;
  timer: NodeJS.Timeout | null;
  feed: UpstreamFeed | null;
  /** While a new feed's replay may still come: the history it must not repeat (loaded as the feed opens). */
  replay: Promise<ReplayFilter | null> | null;
  /** The batches of the batch subscribers (one of `listeners` while there are any). */
  batcher: ConsoleBatcher | null;
  /** The events on their way to `listeners`: lines that waited too long are dropped (a gap in `seq`). */
  fanout: PacedQueue<ConsoleEvent>;
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

  /** Number of this instance's subscribers of a server's console events (for tests and metrics). */
  subscriberCount(serverId: string): number {
    return this.entries.get(serverId)?.listeners.size ?? 0;
  }

  /** The server's entry, with its bus subscription active; made (and the upstream elected) with the first subscriber. */
  private async entry(serverId: string): Promise<Entry> {
    let entry = this.entries.get(serverId);
    if (!entry) {
      const deliver = (ev: ConsoleEvent) => e.listeners.forEach((l) => l(ev));
      const dropped = (lines: number) => log.debug({ serverId, lines }, 'console lines dropped: they waited too long for this instance\'s subscribers');
      const e: Entry = {
        listeners: new Set(),
        recent: new RecentLines(RECENT_LINES),
        unsubscribeBus: Promise.resolve(async () => undefined),
        timer: null,
        feed: null,
        replay: null,
        batcher: null,
        fanout: new PacedQueue(deliver, FANOUT_MAX_WAIT_MS, dropped, () => e.listeners.size),
      };
      e.unsubscribeBus = this.bus.subscribe(serverId, (ev) => {
        if (isLine(ev) && e.recent.seen(lineKey(ev))) return;
        e.fanout.push(ev, !isLine(ev));
      });
      this.entries.set(serverId, e);
      entry = e;
      await entry.unsubscribeBus;
      void this.elect(serverId, e);
    } else {
      await entry.unsubscribeBus;
    }
    return entry;
  }

  /** Removes one listener of the server (and the entry with the last one). */
  private leave(serverId: string, listener: Listener): void {
    const e = this.entries.get(serverId);
    if (!e) return;
    e.listeners.delete(listener);
    if (e.listeners.size === 0) void this.teardown(serverId, e);
  }

  async subscribe(serverId: string, listener: Listener): Promise<() => void> {
    const entry = await this.entry(serverId);
    const gate = afterHistory(listener);
    const wrapped = gate.live;
    entry.listeners.add(wrapped);
    const history = await historyOnce(this.bus, serverId);
    history.forEach(listener);
    gate.open(history);

    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.leave(serverId, wrapped);
    };
  }

  /**
   * Like `subscribe`, with the lines in batches (`console_batch` events, src/console/batcher.ts): the
   * history first (one batch when this instance has it, else as the feed's replay comes), then one batch per BATCH_INTERVAL_MS with what came, the same event
   * object for every batch subscriber of the server. Other events come as they are.
   */
  async subscribeBatches(serverId: string, listener: Listener): Promise<() => void> {
    const entry = await this.entry(serverId);
    let batcher = entry.batcher;
    if (!batcher) {
      batcher = entry.batcher = new ConsoleBatcher();
      entry.listeners.add(batcher.push);
    }
    const gate = afterHistory(listener);
    const wrapped = gate.live;
    batcher.listeners.add(wrapped);
    const history = (await historyOnce(this.bus, serverId)).filter(isLine);
    if (history.length) listener(batchEvent(history.map(batchLine), 0));
    // batches made while the history was read, or gathering then, may repeat some of its last lines
    gate.open(history);

    let done = false;
    return () => {
      if (done) return;
      done = true;
      const b = this.entries.get(serverId)?.batcher;
      if (!b) return;
      b.listeners.delete(wrapped);
      if (b.listeners.size) return;
      b.stop();
      this.entries.get(serverId)!.batcher = null;
      this.leave(serverId, b.push);
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
        e.replay = ReplayFilter.load(this.bus, serverId);
        e.feed = new UpstreamFeed(serverId, () => this.ticket(serverId), (ev) => void this.relay(serverId, e, ev));
        e.feed.start();
        log.debug({ serverId }, 'holding the upstream feed');
      } else if (!mine && e.feed) {
        e.feed.close();
        e.feed = null;
        e.replay = null;
      }
    } catch (err) {
      log.warn({ serverId, err: (err as Error).message }, 'upstream election failed; retrying');
    }
    if (this.entries.get(serverId) === e) e.timer = setTimeout(() => void this.elect(serverId, e), LOCK_TTL_MS / 3);
  }

  private async relay(serverId: string, e: Entry, ev: ConsoleEvent): Promise<void> {
    try {
      if (e.replay) {
        // every event of the feed waits here in turn while the filter loads, so their order holds
        const filter = await e.replay;
        if (!filter) e.replay = null;
        else if (isLine(ev)) {
          const verdict = filter.check(ev);
          if (verdict === 'done') e.replay = null;
          if (verdict === 'repeat') return;
        }
      }
      if (isLine(ev)) await this.bus.appendHistory(serverId, ev);
      await this.bus.publish(serverId, ev);
    } catch (err) {
      log.warn({ serverId, err: (err as Error).message }, 'could not relay a console event');
    }
  }

  private async teardown(serverId: string, e: Entry): Promise<void> {
    this.entries.delete(serverId);
    if (e.timer) clearTimeout(e.timer);
    e.batcher?.stop();
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
