/**
 * Carries console events of a server to every gateway instance that has subscribers for it.
 * In-process by default; Redis pub/sub when REDIS_URL is set (src/console/redis-bus.ts).
 */
import { EventEmitter } from 'node:events';
import type { ConsoleEvent } from './types.js';
import { HISTORY_LINES } from './types.js';

export interface ConsoleBus {
  publish(serverId: string, event: ConsoleEvent): Promise<void>;
  /** Resolves once the subscription is active. */
  subscribe(serverId: string, handler: (e: ConsoleEvent) => void): Promise<() => Promise<void>>;
  /** The recent console lines of a server (oldest first). */
  history(serverId: string): Promise<ConsoleEvent[]>;
  appendHistory(serverId: string, event: ConsoleEvent): Promise<void>;
  /**
   * Single-upstream election: true when this instance holds (or just took) the upstream of the
   * server for the next `ttlMs`. Renewal by the holder keeps it.
   */
  acquire(serverId: string, owner: string, ttlMs: number): Promise<boolean>;
  release(serverId: string, owner: string): Promise<void>;
  close(): Promise<void>;
}

export class LocalBus implements ConsoleBus {
  private readonly emitter = new EventEmitter();
  private readonly histories = new Map<string, ConsoleEvent[]>();
  private readonly locks = new Map<string, { owner: string; until: number }>();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  async publish(serverId: string, event: ConsoleEvent): Promise<void> {
    this.emitter.emit(serverId, event);
  }

  async subscribe(serverId: string, handler: (e: ConsoleEvent) => void) {
    this.emitter.on(serverId, handler);
    return async () => {
      this.emitter.off(serverId, handler);
    };
  }

  async history(serverId: string): Promise<ConsoleEvent[]> {
    return [...(this.histories.get(serverId) ?? [])];
  }

  async appendHistory(serverId: string, event: ConsoleEvent): Promise<void> {
    let h = this.histories.get(serverId);
    if (!h) this.histories.set(serverId, (h = []));
    h.push(event);
    if (h.length > HISTORY_LINES) h.splice(0, h.length - HISTORY_LINES);
  }

  async acquire(serverId: string, owner: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    const l = this.locks.get(serverId);
    if (l && l.owner !== owner && l.until > now) return false;
    this.locks.set(serverId, { owner, until: now + ttlMs });
    return true;
  }

  async release(serverId: string, owner: string): Promise<void> {
    if (this.locks.get(serverId)?.owner === owner) this.locks.delete(serverId);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}
