/**
 * Everything about a server that needs its node agent: power actions, console tokens and node
 * statistics. Reads of records never wait on an agent; these calls time out within 2 s.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import jwt from 'jsonwebtoken';
import { z } from 'zod';
import type { Config } from '../config.js';
import { Node } from '../entities/Node.js';
import { Server } from '../entities/Server.js';
import { childLogger } from '../logger.js';
import { AppError } from '../errors.js';
import { AGENT_TIMEOUT_MS, type AgentClient } from '../nodes/agent-client.js';
import {
  deriveConsoleKey,
  KILL_WAIT_MS,
  POWER_ACTIONS,
  type ConsoleTokenClaims,
  type NodeStats,
  type PowerAction,
  type ServerStatus,
} from '../shared/node-protocol.js';
import { CONSOLE_CONNECT, CONSOLE_KEYS, POWER_KEYS } from '../permissions/keys.js';
import { demand, may } from '../permissions/policy.js';
import { parseId, parseInput } from '../validation/common.js';
import type { Actor } from './actor.js';
import { requireActor, requireAdmin } from './actor.js';
import type { ServersService } from './servers.service.js';
import type { ActivityRecorder } from './activity.service.js';
import { newerStatusWhere } from './status-order.js';
import type { NodeNotices } from '../nodes/node-notices.js';

const powerInput = z.object({ action: z.enum(POWER_ACTIONS as [PowerAction, ...PowerAction[]], { message: 'must be start, stop, restart or kill' }) });

/** Who an action is recorded for: the signed-in caller, or none (a schedule), with extra properties. */
export interface ActedBy {
  actor: Actor | null;
  properties?: Record<string, unknown>;
}

export interface ConsoleTicket {
  token: string;
  socket: string;
  expiresAt: Date;
}

/**
 * How long a power action may take at the node: a kill answers once the process is gone (up to
 * KILL_WAIT_MS), a start once the configuration files are written and the process spawned.
 */
const POWER_TIMEOUT_MS = KILL_WAIT_MS + 2 * AGENT_TIMEOUT_MS;

const log = childLogger('power');

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
    private readonly servers: ServersService,
    private readonly activity: ActivityRecorder,
    private readonly notices: NodeNotices,
  ) {}

  private get em() {
    return this.orm.em;
  }

  async power(actor: Actor | null, id: string, action: PowerAction): Promise<Server> {
    const { server, access } = await this.servers.access(actor, id);
    parseInput(powerInput, { action });
    demand(access, POWER_KEYS[action]);
    return this.powerServer(server, action, { actor: requireActor(actor) });
  }

  /**
   * A power action on a server already authorized (by power() or a schedule): asks its node, records
   * the activity entry with `by` and keeps the recorded status in step with the node's answer.
   *
   * The answer is the node's status when it answered; its event queue (NodeAgentService.applyEvents,
   * another request) may have recorded a later one before the answer got here (`running` before the
   * start's `starting`), and may bring earlier ones after it (the start's `starting` after its answer
   * `running`). So an answer with its status's number (`statusSeq`) is written only over a lower
   * number or none, as the events are; one without (an agent that predates it) only where the row
   * still has the status read before the call. The server returned (a managed entity, so that no
   * later flush writes a stale status) is re-read: it is what is recorded.
   */
  async powerServer(server: Server, action: PowerAction, by: ActedBy): Promise<Server> {
    if (server.status === 'installing' && action !== 'kill') {
      throw AppError.invalidState('The server is still installing.');
    }
    const read = server.status;
    const state = await this.agents.call<{ status: ServerStatus; exitCode?: number | null; reason?: string | null; statusSeq?: number }>(
      server.node,
      'POST',
      `/api/servers/${server.id}/power`,
      { action },
      POWER_TIMEOUT_MS,
    );
    await this.activity.record({ event: `server:power.${action}`, serverId: server.id, actor: by.actor, ...(by.properties ? { properties: by.properties } : {}) });
    const seq = typeof state?.statusSeq === 'number' && Number.isSafeInteger(state.statusSeq) && state.statusSeq >= 0 ? state.statusSeq : null;
    if (state?.status && (state.status !== read || seq !== null)) {
      const answer: Partial<Pick<Server, 'status' | 'statusSeq' | 'lastStopReason' | 'lastExitCode' | 'updatedAt'>> = { status: state.status, updatedAt: new Date() };
      // A kill answers once the process is gone: record how it ended now, not only when the event lands.
      if (state.status === 'offline' && state.reason) {
        answer.lastStopReason = state.reason;
        if (state.exitCode !== undefined) answer.lastExitCode = state.exitCode;
      }
      if (seq !== null) answer.statusSeq = seq;
      const where = seq !== null ? newerStatusWhere(server.id, seq) : { id: server.id, status: read };
      const written = await this.em.nativeUpdate(Server, where, answer);
      if (!written) log.debug({ serverId: server.id, action, answered: state.status }, 'the status changed while the node answered: the newer one stands');
      // the entity (and its unit of work's snapshot) as recorded; a server deleted meanwhile is returned as it was
      await this.em.refresh(server);
    }
    return server;
  }

  /** Writes one line to a server's console input through its node (a schedule's `command` task). */
  async sendCommand(server: Server, command: string, by: ActedBy): Promise<void> {
    await this.agents.call(server.node, 'POST', `/api/servers/${server.id}/commands`, { command });
    await this.activity.record({ event: 'server:console.command', serverId: server.id, actor: by.actor, properties: { ...by.properties, command } });
  }

  /** A short-lived JWT for the node's console channel, bound to this server and user, signed with Kc. */
  async consoleToken(actor: Actor | null, id: string): Promise<ConsoleTicket> {
    // stamped before the rights are read: a change of rights after this time refuses the token (accessChanged)
    const issuedAt = Date.now();
    const { server, access } = await this.servers.access(actor, id);
    demand(access, CONSOLE_CONNECT);
    const keys = CONSOLE_KEYS.filter((k) => may(access, k));
    return this.mintConsoleToken(server.node, server.id, requireActor(actor).user.id, keys, undefined, issuedAt);
  }

  mintConsoleToken(node: Node, serverId: string, subject: string, perms: string[], ttlSeconds = this.config.consoleTokenTtlSeconds, issuedAt = Date.now()): ConsoleTicket {
    const key = this.agents.nodeKey(node);
    if (!key) throw AppError.nodeUnavailable('This node has no token yet, so it cannot verify console tokens.');
    const claims: ConsoleTokenClaims = { sub: subject, srv: serverId, node: node.id, perms, issuedAt };
    const ttl = Math.min(ttlSeconds, 600);
    const token = jwt.sign(claims, deriveConsoleKey(key), { algorithm: 'HS256', expiresIn: ttl, audience: `node:${node.id}` });
    return { token, socket: this.agents.consoleUrl(node), expiresAt: new Date(Date.now() + ttl * 1000) };
  }

  /**
   * Tells the server's node that `userId`'s rights changed: it closes that user's console sockets and
   * SFTP sessions on the server and refuses the console tokens issued before now. A node that cannot be
   * reached is told after its next heartbeat (src/nodes/node-notices.ts).
   */
  async accessChanged(serverId: string, userId: string): Promise<void> {
    // the change's time on the clock of the tokens' issue times: a token issued after it stands
    const at = Date.now();
    const server = await this.orm.em.fork().findOne(Server, { id: serverId }, { populate: ['node'] });
    if (!server) return;
    await this.notices.tell(server.node, `/api/servers/${serverId}/revoke`, { userId, at }, "could not tell the node to close a revoked user's console sockets");
  }

  /** Live figures from the node; `online: false` with nulls when it cannot be reached. */
  async nodeStats(actor: Actor | null, nodeId: string): Promise<NodeStats> {
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
