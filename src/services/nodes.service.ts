import { ForeignKeyConstraintViolationException, LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { Node } from '../entities/Node.js';
import { Server } from '../entities/Server.js';
import { AppError } from '../errors.js';
import { childLogger } from '../logger.js';
import { LOCAL_NODE_NAME } from '../nodes/local-node.js';
import { issueNodeToken } from '../nodes/node-token.js';
import type { MasterKey } from '../security/master-key.js';
import { parseId, parseInput } from '../validation/common.js';
import { createNodeInput, updateNodeInput, type UpdateNodeInput } from '../validation/nodes.js';
import type { Paginated } from '../validation/pagination.js';
import type { Actor } from './actor.js';
import type { ActivityRecorder } from './activity.service.js';
import { requireActor, requireAdmin } from './actor.js';
import type { Allocation } from './servers.service.js';
import type { Page } from '../validation/pagination.js';

const log = childLogger('nodes');

/** A node with what its servers have allocated (MiB). */
export interface NodeView {
  node: Node;
  allocated: Allocation;
}

/** What a user sees of a node when choosing where to create a server. */
export interface NodeChoice {
  id: string;
  name: string;
  status: 'online' | 'offline';
  available: Allocation;
}

export interface IssuedNodeToken {
  /** The secret for the agent: shown once, stored only as a hash. */
  token: string;
  nodeId: string;
  createdAt: Date;
}

/** Nodes (admin only): registration, removal and their secrets. */
export class NodesService {
  constructor(
    private readonly orm: MikroORM,
    private readonly masterKey: MasterKey,
    private readonly activity: ActivityRecorder,
    /** The panel runs the node "local" in its own process (LOCAL_AGENT). */
    private readonly localAgent = false,
  ) {}

  private get em() {
    return this.orm.em;
  }

  async list(actor: Actor | null, page: Page): Promise<Paginated<NodeView>> {
    requireAdmin(actor);
    const [nodes, total] = await this.em.findAndCount(Node, {}, { orderBy: { createdAt: 'asc', id: 'asc' }, limit: page.limit, offset: page.offset });
    const alloc = await this.allocations(nodes.map((n) => n.id));
    return {
      items: nodes.map((node) => ({ node, allocated: alloc.get(node.id) ?? { memory: 0, disk: 0 } })),
      meta: { total, page: page.page, limit: page.limit },
    };
  }

  /**
   * The nodes any signed-in user may place servers on, with what is still free there (MiB), so that a
   * user can pick one without the admin-only node records. Same pagination and order as `list`.
   */
  async choices(actor: Actor | null, page: Page): Promise<Paginated<NodeChoice>> {
    requireActor(actor);
    const [nodes, total] = await this.em.findAndCount(Node, {}, { orderBy: { createdAt: 'asc', id: 'asc' }, limit: page.limit, offset: page.offset });
    const alloc = await this.allocations(nodes.map((n) => n.id));
    return {
      items: nodes.map((n) => {
        const used = alloc.get(n.id) ?? { memory: 0, disk: 0 };
        return { id: n.id, name: n.name, status: n.status, available: { memory: Math.max(0, n.memory - used.memory), disk: Math.max(0, n.disk - used.disk) } };
      }),
      meta: { total, page: page.page, limit: page.limit },
    };
  }

  async get(actor: Actor | null, id: string): Promise<NodeView> {
    requireAdmin(actor);
    const node = await this.find(id);
    return { node, allocated: (await this.allocations([node.id])).get(node.id) ?? { memory: 0, disk: 0 } };
  }

  /** Registers a node and issues its first token (returned once). */
  async create(actor: Actor | null, input: unknown): Promise<NodeView & { token: IssuedNodeToken }> {
    requireAdmin(actor);
    const data = parseInput(createNodeInput, input);
    if (await this.em.count(Node, { name: data.name })) throw nameTaken();
    let created: { node: Node; token: IssuedNodeToken };
    try {
      created = await this.em.transactional(async (tx) => {
        const node = tx.create(Node, {
          name: data.name,
          fqdn: data.fqdn,
          port: data.port,
          scheme: data.scheme,
          memory: data.memory,
          disk: data.disk,
          cpuCores: data.cpuCores ?? null,
        });
        const { token, createdAt } = await issueNodeToken(tx, this.masterKey, node);
        await this.activity.record({ event: 'node:create', actor, properties: { nodeId: node.id, name: node.name, fqdn: node.fqdn } }, tx);
        return { node, token: { token, nodeId: node.id, createdAt } };
      });
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw nameTaken();
      throw err;
    }
    const { node, token } = created;
    log.info({ nodeId: node.id, name: node.name }, 'node registered');
    return { node, allocated: { memory: 0, disk: 0 }, token };
  }

  /**
   * Changes a node's name, address or capacity. Memory or disk below what its servers have allocated
   * is 422 INVALID_STATE, checked with the node row locked (the lock server creation and resizes
   * take), so no server lands in between. Records `node:update` naming the fields that changed (none
   * changed: no entry). The agent client reads the address from the node row at every call.
   */
  async update(actor: Actor | null, id: string, input: unknown): Promise<NodeView> {
    requireAdmin(actor);
    const nodeId = (await this.find(id)).id;
    const data = parseInput(updateNodeInput, input);
    try {
      return await this.em.transactional(async (em) => {
        const node = await em.findOne(Node, { id: nodeId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
        if (!node) throw AppError.notFound('Node'); // deleted meanwhile
        const fields = changedFields(node, data);
        if (this.runsInPanel(node)) assertKeepsAddress(fields);
        if (fields.includes('name') && (await em.count(Node, { name: data.name, id: { $ne: nodeId } }))) throw nameTaken();
        const allocated = (await this.allocations([nodeId], em)).get(nodeId) ?? { memory: 0, disk: 0 };
        assertHoldsAllocated(node, data, allocated);
        em.assign(node, Object.fromEntries(fields.map((k) => [k, data[k]])));
        if (fields.length) await this.activity.record({ event: 'node:update', actor, properties: { nodeId, fields } }, em);
        return { node, allocated };
      });
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw nameTaken();
      throw err;
    }
  }

  /** Removes a node; 422 NODE_HAS_SERVERS while servers remain on it. */
  async remove(actor: Actor | null, id: string): Promise<void> {
    requireAdmin(actor);
    const nodeId = (await this.find(id)).id;
    try {
      await this.em.transactional(async (em) => {
        // The same lock as server creation: no server can land on the node while it is removed.
        const node = await em.findOne(Node, { id: nodeId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
        if (!node) throw AppError.notFound('Node');
        const servers = await em.count(Server, { node: nodeId });
        if (servers) throw hasServers(servers);
        em.remove(node);
        await this.activity.record({ event: 'node:delete', actor, properties: { nodeId, name: node.name } }, em);
      });
    } catch (err) {
      if (err instanceof ForeignKeyConstraintViolationException) throw hasServers(await this.em.count(Server, { node: nodeId }));
      throw err;
    }
    log.info({ nodeId }, 'node removed');
  }

  /** `POST /admin/nodes/:id/token`: admin check, then {@link issueToken}. */
  /**
   * A new token for a node's agent. The agent the panel runs in its own process takes its token when
   * the panel starts and cannot be handed another: its node's token is renewed by a restart instead.
   */
  async rotateToken(actor: Actor | null, id: string): Promise<IssuedNodeToken> {
    requireAdmin(actor);
    const node = await this.find(id);
    if (this.runsInPanel(node)) {
      throw AppError.invalidState(`The node "${LOCAL_NODE_NAME}" runs inside the panel (LOCAL_AGENT), which renews its token at every start: restart the panel to renew it.`);
    }
    const issued = await this.issueToken(node.id);
    await this.activity.record({ event: 'node:token', actor, properties: { nodeId: issued.nodeId } });
    return issued;
  }

  /**
   * Issues a new node token: stores sha256(token) and the derived node key encrypted with the master
   * key. The previous token stops working at once. No authorization check: callers do it.
   */
  async issueToken(nodeId: string): Promise<IssuedNodeToken> {
    const node = await this.em.findOne(Node, { id: nodeId });
    if (!node) throw AppError.notFound('Node');
    const { token, createdAt } = await issueNodeToken(this.em, this.masterKey, node);
    log.info({ nodeId }, 'node token issued');
    return { token, nodeId: node.id, createdAt };
  }

  /** The node whose agent runs inside the panel (LOCAL_AGENT): found by its name, its address set at every start. */
  private runsInPanel(node: Node): boolean {
    return this.localAgent && node.name === LOCAL_NODE_NAME;
  }

  private async find(id: unknown): Promise<Node> {
    const node = await this.em.findOne(Node, { id: parseId(id, 'Node') });
    if (!node) throw AppError.notFound('Node');
    return node;
  }

  /** Allocated memory/disk per node id (read through `em`: a transaction's, when given). */
  async allocations(nodeIds: string[], em: EntityManager = this.em): Promise<Map<string, Allocation>> {
    const out = new Map<string, Allocation>();
    if (!nodeIds.length) return out;
    const rows = await em.execute<{ node_id: string; memory: string; disk: string }[]>(
      `select "node_id", coalesce(sum("memory"), 0)::bigint as "memory", coalesce(sum("disk"), 0)::bigint as "disk"
         from "servers" where "node_id" in (${nodeIds.map(() => '?').join(', ')}) group by "node_id"`,
      nodeIds,
    );
    for (const r of rows) out.set(r.node_id, { memory: Number(r.memory), disk: Number(r.disk) });
    return out;
  }
}

function nameTaken() {
  return AppError.alreadyExists('name', 'A node with this name already exists.');
}

/** The fields of `data` whose value differs from the node's. */
function changedFields(node: Node, data: UpdateNodeInput): (keyof UpdateNodeInput)[] {
  return (Object.keys(data) as (keyof UpdateNodeInput)[]).filter((k) => data[k] !== undefined && data[k] !== node[k]);
}

/** The node "local" is found by its name and gets its address at every start: neither may change. */
function assertKeepsAddress(fields: string[]): void {
  const fixed = fields.filter((k) => ['name', 'fqdn', 'port', 'scheme'].includes(k));
  if (fixed.length) {
    const message = `The node "${LOCAL_NODE_NAME}" runs inside the panel (LOCAL_AGENT), which finds it by its name and sets its address at every start: its ${fixed.join(', ')} cannot change.`;
    throw AppError.invalidState(message, { fields: Object.fromEntries(fixed.map((k) => [k, 'cannot change on the node the panel runs'])) });
  }
}

/**
 * 422 INVALID_STATE when memory or disk would go down below what the node's servers have allocated
 * (`details.fields` names each, `details.allocated` gives both figures). Server creation checks the
 * same sum against the node's figures (servers.service assertFits).
 */
function assertHoldsAllocated(node: Node, data: UpdateNodeInput, allocated: Allocation): void {
  const fields: Record<string, string> = {};
  for (const k of ['memory', 'disk'] as const) {
    const want = data[k];
    if (want !== undefined && want < node[k] && want < allocated[k]) fields[k] = `The servers on this node have ${allocated[k]} MiB of ${k} allocated; delete or shrink them first (or set ${k} to at least ${allocated[k]}).`;
  }
  if (Object.keys(fields).length) throw AppError.invalidState(Object.values(fields).join(' '), { fields, allocated });
}

function hasServers(count: number) {
  return new AppError('NODE_HAS_SERVERS', `The node still hosts ${count} server(s). Delete or move them first.`, { servers: count });
}
