/** Console subscriptions at the gateway: authorization, then the shared fan-out hub. */
import { AppError } from '../errors.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Server } from '../entities/Server.js';
import { ConsoleHub } from '../console/hub.js';
import type { ConsoleBus } from '../console/bus.js';
import type { ConsoleEvent } from '../console/types.js';
import type { Actor } from './actor.js';
import type { PowerService } from './power.service.js';

export class ConsoleService {
  readonly hub: ConsoleHub;

  constructor(
    private readonly orm: MikroORM,
    private readonly power: PowerService,
    bus: ConsoleBus,
  ) {
    this.hub = new ConsoleHub(bus, (serverId) => this.upstreamTicket(serverId));
  }

  private async upstreamTicket(serverId: string) {
    const server = await this.orm.em.fork().findOne(Server, { id: serverId }, { populate: ['node'] });
    if (!server) throw AppError.notFound('Server'); // deleted: the feed ends (src/console/upstream.ts)
    return this.power.mintConsoleToken(server.node, server.id, `gateway:${this.hub.instanceId}`, ['console']);
  }

  /**
   * Subscribes to a server's console events (history first). Only its owner or an admin:
   * anyone else gets NOT_FOUND, as on REST. Resolves with the unsubscribe function.
   */
  async subscribe(actor: Actor | null, serverId: unknown, listener: (e: ConsoleEvent) => void): Promise<() => void> {
    const server = await this.power.visibleServer(actor, serverId);
    return this.hub.subscribe(server.id, listener);
  }
}
