/**
 * In-process events about servers (status changes), for GraphQL subscriptions and other listeners.
 * With REDIS_URL they are also carried between gateway instances (src/console/redis-bus.ts).
 */
import { EventEmitter } from 'node:events';
import type { ServerStatus } from '../shared/node-protocol.js';

export interface StatusEvent {
  serverId: string;
  status: ServerStatus;
}

export class ServerEvents {
  private readonly emitter = new EventEmitter();
  constructor() {
    this.emitter.setMaxListeners(0);
  }

  publishStatus(serverId: string, status: ServerStatus): void {
    this.emitter.emit('status', { serverId, status } satisfies StatusEvent);
  }

  onStatus(listener: (e: StatusEvent) => void): () => void {
    this.emitter.on('status', listener);
    return () => this.emitter.off('status', listener);
  }
}
