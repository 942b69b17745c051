/**
 * What node agents tell the panel (src/rest/agent.routes.ts is the transport): their servers'
 * state changes, heartbeats with live figures, and the list of servers they should run.
 */
import { RequestContext } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Node } from '../entities/Node.js';
import { Server } from '../entities/Server.js';
import { childLogger } from '../logger.js';
import { serverSpec } from '../nodes/spec.js';
import { SERVER_STATUSES, type NodeStats, type ServerSpec, type ServerStatus } from '../shared/node-protocol.js';
import { isUuid, parseInput } from '../validation/common.js';
import type { ServerEvents } from './server-events.js';
import type { ServerProvisioner } from './provisioner.js';

const log = childLogger('node-agent');

const eventsInput = z.object({
  events: z
    .array(
      z.object({
        serverId: z.string(),
        status: z.enum(SERVER_STATUSES as [ServerStatus, ...ServerStatus[]]),
        at: z.string(),
        exitCode: z.number().int().nullable().optional(),
        reason: z.string().max(32).optional(),
      }),
    )
    .max(10_000),
});

const heartbeatInput = z.object({
  stats: z.object({
    cpu: z.object({ cores: z.number().int().positive().nullable() }).partial().passthrough(),
  }).passthrough(),
});

/** A node not heard from for this long is offline. */
export const NODE_OFFLINE_AFTER_MS = 30_000;

export class NodeAgentService {
  constructor(
    private readonly orm: MikroORM,
    private readonly events: ServerEvents,
    private readonly provisioner: ServerProvisioner,
  ) {}

  /** Background resyncs under way (see close()). */
  private readonly background = new Set<Promise<void>>();
  private closed = false;

  private get em() {
    return this.orm.em;
  }

  async serversOf(node: Node): Promise<{ spec: ServerSpec; status: ServerStatus }[]> {
    const servers = await this.em.find(Server, { node: node.id }, { populate: ['blueprint'], orderBy: { createdAt: 'asc', id: 'asc' } });
    return servers.map((s) => ({ spec: serverSpec(s), status: s.status }));
  }

  /** Applies state changes in order. Unknown servers (deleted meanwhile) are skipped. */
  async applyEvents(node: Node, input: unknown): Promise<number> {
    const { events } = parseInput(eventsInput, input);
    const ids = [...new Set(events.map((e) => e.serverId))].filter(isUuid);
    const servers = new Map((await this.em.find(Server, { id: { $in: ids }, node: node.id })).map((s) => [s.id, s]));
    let applied = 0;
    for (const e of events) {
      const server = servers.get(e.serverId);
      if (!server) continue;
      server.status = e.status;
      if (e.exitCode !== undefined) server.lastExitCode = e.exitCode;
      if (e.reason) server.lastStopReason = e.reason;
      if (e.reason === 'crashed' || e.reason === 'memory_limit') {
        server.crashCount += 1;
        const at = new Date(e.at);
        server.lastCrashAt = Number.isNaN(at.getTime()) ? new Date() : at;
      }
      applied++;
    }
    node.status = 'online';
    node.lastSeenAt = new Date();
    await this.em.flush();
    for (const e of events) {
      if (servers.has(e.serverId)) this.events.publishStatus(e.serverId, e.status);
    }
    return applied;
  }

  async heartbeat(node: Node, input: unknown): Promise<void> {
    const { stats } = parseInput(heartbeatInput, input);
    const cameBack = node.status !== 'online';
    node.status = 'online';
    node.lastSeenAt = new Date();
    const cores = (stats as unknown as NodeStats).cpu?.cores;
    if (typeof cores === 'number' && cores > 0) node.cpuCores = cores;
    await this.em.flush();
    if (cameBack) this.resync(node.id);
  }

  /**
   * A node that was offline (never seen, timed out, or a push to it failed) may have missed servers
   * created or changed meanwhile: push every server's spec again (idempotent on the agent), in the
   * background.
   */
  private resync(nodeId: string): void {
    if (this.closed) return;
    const task: Promise<void> = RequestContext.create(this.orm.em, async () => {
      const servers = await this.orm.em.find(Server, { node: nodeId }, { populate: ['node', 'blueprint'] });
      for (const server of servers) {
        if (this.closed) break; // closing: the rest waits for the next time the node comes back
        await this.provisioner.sync(server).catch((err: unknown) => log.warn({ serverId: server.id, err: (err as Error).message }, 'resync of a server failed'));
      }
      if (servers.length) log.info({ nodeId, servers: servers.length }, 'node is back: server specs pushed again');
    })
      .catch((err: unknown) => log.warn({ nodeId, err: (err as Error).message }, 'node resync failed'))
      .finally(() => this.background.delete(task));
    this.background.add(task);
  }

  /**
   * Starts no more background work and waits for what is under way: the platform calls this before it
   * closes the database (a resync left running would query a closed pool).
   */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.background]);
  }

  /** Marks nodes that stopped sending heartbeats as offline. */
  async sweepOffline(): Promise<number> {
    const em = this.orm.em.fork();
    const n = await em.nativeUpdate(
      Node,
      { status: 'online', $or: [{ lastSeenAt: null }, { lastSeenAt: { $lt: new Date(Date.now() - NODE_OFFLINE_AFTER_MS) } }] },
      { status: 'offline' },
    );
    if (n) log.info({ nodes: n }, 'nodes marked offline (no heartbeat)');
    return n;
  }
}
