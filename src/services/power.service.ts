/**
 * Everything about a server that needs its node agent: power actions, console tokens and node
 * statistics. Reads of records never wait on an agent; these calls time out within 2 s.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import jwt from 'jsonwebtoken';
import { z } from 'zod';
import type { Config } from '../config.js';
import { Node } from '../entities/Node.js';
import type { Server } from '../entities/Server.js';
import { AppError } from '../errors.js';
import type { AgentClient } from '../nodes/agent-client.js';
import {
  deriveConsoleKey,
  POWER_ACTIONS,
  type ConsoleTokenClaims,
  type NodeStats,
  type PowerAction,
  type ServerStatus,
} from '../shared/node-protocol.js';
import { parseId, parseInput } from '../validation/common.js';
import type { Actor } from './actor.js';
import { requireActor, requireAdmin } from './actor.js';
import type { ServersService } from './servers.service.js';
import type { ServerEvents } from './server-events.js';

const powerInput = z.object({ action: z.enum(POWER_ACTIONS as [PowerAction, ...PowerAction[]], { message: 'must be start, stop, restart or kill' }) });

export interface ConsoleTicket {
  token: string;
  socket: string;
  expiresAt: Date;
}

export const OFFLINE_STATS: NodeStats = {
  online: false,
  cpu: { cores: null, usage: null, load: null },
  memory: { total: null, used: null },
  disk: { total: null, used: null },
  servers: { total: null, running: null },
  uptime: null,
};

export class PowerService {
  constructor(
    private readonly orm: MikroORM,
    private readonly agents: AgentClient,
    private readonly config: Config,
    private readonly events: ServerEvents,
    private readonly servers: ServersService,
  ) {}

  private get em() {
    return this.orm.em;
  }

  /** A server the actor may act on: their own, or any for admins. Others' servers are 404. */
  visibleServer(actor: Actor | null, id: unknown): Promise<Server> {
    return this.servers.get(actor, id);
  }

  async power(actor: Actor | null, id: unknown, action: PowerAction): Promise<Server> {
    const server = await this.visibleServer(actor, id);
    parseInput(powerInput, { action });
    if (server.status === 'installing' && action !== 'kill') {
      throw AppError.invalidState('The server is still installing.');
    }
    const state = await this.agents.call<{ status: ServerStatus; exitCode?: number | null; reason?: string | null }>(
      server.node,
      'POST',
      `/api/servers/${server.id}/power`,
      { action },
    );
    if (state?.status && state.status !== server.status) {
      server.status = state.status;
      // A kill answers once the process is gone: record how it ended now, not only when the event lands.
      if (state.status === 'offline' && state.reason) {
        server.lastStopReason = state.reason;
        if (state.exitCode !== undefined) server.lastExitCode = state.exitCode;
      }
      await this.em.flush();
      this.events.publishStatus(server.id, server.status);
    }
    return server;
  }

  /** A short-lived JWT for the node's console channel, bound to this server and user, signed with Kc. */
  async consoleToken(actor: Actor | null, id: unknown): Promise<ConsoleTicket> {
    const server = await this.visibleServer(actor, id);
    return this.mintConsoleToken(server.node, server.id, requireActor(actor).user.id, ['console', 'command', 'power']);
  }

  mintConsoleToken(node: Node, serverId: string, subject: string, perms: string[], ttlSeconds = this.config.consoleTokenTtlSeconds): ConsoleTicket {
    const key = this.agents.nodeKey(node);
    if (!key) throw AppError.nodeUnavailable('This node has no token yet, so it cannot verify console tokens.');
    const claims: ConsoleTokenClaims = { sub: subject, srv: serverId, node: node.id, perms };
    const ttl = Math.min(ttlSeconds, 600);
    const token = jwt.sign(claims, deriveConsoleKey(key), { algorithm: 'HS256', expiresIn: ttl, audience: `node:${node.id}` });
    return { token, socket: this.agents.consoleUrl(node), expiresAt: new Date(Date.now() + ttl * 1000) };
  }

  /** Live figures from the node; `online: false` with nulls when it cannot be reached. */
  async nodeStats(actor: Actor | null, nodeId: unknown): Promise<NodeStats> {
    requireAdmin(actor);
    const id = parseId(nodeId, 'Node');
    const node = await this.em.findOne(Node, { id });
    if (!node) throw AppError.notFound('Node');
    try {
      const stats = await this.agents.call<NodeStats>(node, 'GET', '/api/system');
      return stats ? { ...stats, online: true } : OFFLINE_STATS;
    } catch (err) {
      if (err instanceof AppError && err.code === 'NODE_UNAVAILABLE') return OFFLINE_STATS;
      throw err;
    }
  }
}
