/** Console subscriptions at the gateway: authorization, then the shared fan-out hub. */
import { AppError } from '../errors.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Server } from '../entities/Server.js';
import { ConsoleHub } from '../console/hub.js';
import type { ConsoleBus } from '../console/bus.js';
import { accessChanged, type ConsoleEvent } from '../console/types.js';
import { guardedSubscription, stillHolds } from './access-guard.js';
import type { Actor } from './actor.js';
import { CONSOLE_CONNECT } from '../permissions/keys.js';
import { demand } from '../permissions/policy.js';
import type { PowerService } from './power.service.js';
import type { ServersService } from './servers.service.js';
import type { AccessService } from './access.service.js';

export class ConsoleService {
  readonly hub: ConsoleHub;

  constructor(
    private readonly orm: MikroORM,
    private readonly power: PowerService,
    private readonly servers: ServersService,
    private readonly bus: ConsoleBus,
    private readonly access: AccessService,
  ) {
    this.hub = new ConsoleHub(bus, (serverId) => this.upstreamTicket(serverId));
  }

  private async upstreamTicket(serverId: string) {
    const server = await this.orm.em.fork().findOne(Server, { id: serverId }, { populate: ['node'] });
    if (!server) throw AppError.notFound('Server'); // deleted: the feed ends (src/console/upstream.ts)
    return this.power.mintConsoleToken(server.node, server.id, `gateway:${this.hub.instanceId}`, [CONSOLE_CONNECT]);
  }

  /** The server, when the actor may watch its console (`websocket.connect`); 404 or 403 otherwise. */
  async authorize(actor: Actor | null, serverId: string): Promise<Server> {
    const { server, access } = await this.servers.access(actor, serverId);
    demand(access, CONSOLE_CONNECT);
    return server;
  }

  /**
   * Subscribes an authorized actor to a server's console events (history first), its lines one by one
   * or in batches (`console_batch` events); resolves with the unsubscribe function. When the actor's rights on the server change (an `access` event, from any
   * instance), they are checked again, and a subscriber who may no longer watch gets `revoked`.
   */
  subscribe(actor: Actor, server: Server, listener: (e: ConsoleEvent) => void, lines: 'each' | 'batched' = 'each'): Promise<() => void> {
    const attach = (l: (e: ConsoleEvent) => void) => (lines === 'batched' ? this.hub.subscribeBatches(server.id, l) : this.hub.subscribe(server.id, l));
    return guardedSubscription(this.orm, actor.user.id, stillHolds(this.access, actor.user.id, server.id, CONSOLE_CONNECT), attach, listener);
  }

  /** Tells every instance that `userId`'s rights on the server changed. */
  accessChanged(serverId: string, userId: string): Promise<void> {
    return this.bus.publish(serverId, accessChanged(userId));
  }
}
