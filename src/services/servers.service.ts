import os from 'node:os';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { ConsoleBus } from '../console/bus.js';
import { GONE } from '../console/types.js';
import { Blueprint } from '../entities/Blueprint.js';
import { Node } from '../entities/Node.js';
import { Server } from '../entities/Server.js';
import { Subuser } from '../entities/Subuser.js';
import { User } from '../entities/User.js';
import { ALL_PERMISSIONS } from '../permissions/keys.js';
import { demand, demandOwner, keysOf, type ServerAccess } from '../permissions/policy.js';
import { accessOf } from './access.service.js';
import { noRecorder, type ActivityRecorder } from './activity.service.js';
import { readRows } from '../db/read-rows.js';
import { AppError } from '../errors.js';
import { childLogger } from '../logger.js';
import { parseId, parseInput } from '../validation/common.js';
import type { Paginated } from '../validation/pagination.js';
import { createServerInput, FIXED_FIELDS, fixedFieldsGiven, updateServerInput, type UpdateServerInput } from '../validation/servers.js';
import type { Actor } from './actor.js';
import { isAdmin, requireActor } from './actor.js';
import { noProvisioner, type ServerProvisioner } from './provisioner.js';
import { resolveVariables, viewableKeys, type Setter } from './server-variables.js';
import { assertMayChangeVariables, assertMayKeepBackups, assertMayUseBlueprint, assertWithinQuota, BACKUP_LIMIT_FALLBACK, OPEN_RULES, type ServerRules } from './server-rules.js';
import {
  BLUEPRINT_RECORDS,
  jsonObjectOf,
  NODE_RECORDS,
  reviveDates,
  selectList,
  SERVER_RECORDS,
  shownVariables,
  USER_RECORDS,
  type BlueprintRecord,
  type NodeRecord,
  type RecordTable,
  type ServerRecord,
  type UserRecord,
} from './records.js';
import type { ServerListQuery } from '../validation/servers.js';
import type { ServerStatus } from '../shared/node-protocol.js';

const log = childLogger('servers');

export interface ServerInclude {
  owner?: boolean;
  node?: boolean;
  blueprint?: boolean;
}

/** The relations a server list can include, with the record property that holds their id. */
const INCLUDABLE: [keyof ServerInclude, { records: RecordTable; idProperty: keyof ServerRecord }][] = [
  ['owner', { records: USER_RECORDS, idProperty: 'ownerId' }],
  ['node', { records: NODE_RECORDS, idProperty: 'nodeId' }],
  ['blueprint', { records: BLUEPRINT_RECORDS, idProperty: 'blueprintId' }],
];

export interface ServerPage extends Paginated<ServerRecord> {
  /** The page's related rows asked for with `include` (each once); empty arrays otherwise. */
  included: { users: UserRecord[]; nodes: NodeRecord[]; blueprints: BlueprintRecord[] };
}

export interface Allocation {
  memory: number;
  disk: number;
}

/** Memory and disk (MiB) allocated to the servers of a node, optionally leaving one server out. */
export async function allocatedOn(em: EntityManager, nodeId: string, exceptServerId?: string): Promise<Allocation> {
  const rows = await em.execute<{ memory: string | null; disk: string | null }[]>(
    `select coalesce(sum("memory"), 0)::bigint as "memory", coalesce(sum("disk"), 0)::bigint as "disk"
       from "servers" where "node_id" = ? and "id" <> ?`,
    [nodeId, exceptServerId ?? '00000000-0000-0000-0000-000000000000'],
  );
  return { memory: Number(rows[0]?.memory ?? 0), disk: Number(rows[0]?.disk ?? 0) };
}

/** The largest cpu value (percent of one core) a server may have on a node. */
export function maxCpuOf(node: Node): number {
  const cores = node.cpuCores ?? (typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length);
  return Math.max(1, cores) * 100;
}

/**
 * Servers: users see and act on their own servers, admins on all. Another user's server is a 404
 * (its existence is not leaked). Capacity is checked with the node row locked (SELECT … FOR UPDATE),
 * so concurrent creates and resizes never overbook a node; the owner's quota is checked after it,
 * under a lock per owner (src/services/server-rules.ts).
 */
export class ServersService {
  constructor(
    private readonly orm: MikroORM,
    private readonly provisioner: ServerProvisioner = noProvisioner,
    private readonly rules: ServerRules = OPEN_RULES,
    private readonly activity: ActivityRecorder = noRecorder,
    /** where the server's deletion is told to its live feeds (activity, backups), on every instance */
    private readonly bus: ConsoleBus | null = null,
  ) {}

  private get em() {
    return this.orm.em;
  }

  /**
   * A page of the servers the actor may see. `include` adds the page's owners, nodes and blueprints
   * (deduplicated, in `included`) from the same query, for callers that show them (GraphQL).
   */
  async list(actor: Actor | null, query: ServerListQuery, include: ServerInclude = {}): Promise<ServerPage> {
    const a = requireActor(actor);
    const { page, ...filters } = query;
    // The hottest read of the API, in one round trip: the page walks the (created_at, id) index and
    // stops at `limit`; the total is an uncorrelated sub-select, evaluated once; included relations
    // are joined by primary key, one JSON object per distinct related row. Only a page past the end
    // (no row to carry the total) needs a second query. The rows come back as read-only records
    // (src/services/records.ts). A window count would have to read and sort every matching row.
    // A user sees the servers they own and those shared with them (subusers); `$1` is the user's id.
    const filter: [condition: (alias: string, n: number) => string, value: unknown][] = [];
    const admin = isAdmin(a);
    if (!admin) filter.push([(t, i) => `(${t}.owner_id = $${i} or ${t}.id in (select su.server_id from subusers su where su.user_id = $${i}))`, a.user.id]);
    if (filters.status) filter.push([(t, i) => `${t}.status = $${i}`, filters.status]);
    if (filters.nodeId) filter.push([(t, i) => `${t}.node_id = $${i}`, filters.nodeId]);
    const where = (alias: string) => (filter.length ? `where ${filter.map(([c], i) => c(alias, i + 1)).join(' and ')}` : '');
    const params = filter.map(([, v]) => v);
    const n = params.length;
    // the caller's keys and folders on a shared server ride on its row; null on the servers they own
    const shared = admin ? '' : `, (select jsonb_build_array(su.permissions, su.paths) from subusers su where su.server_id = s.id and su.user_id = $1 and s.owner_id <> $1) as "$shared"`;
    // and the variables its blueprint shows the server's users (viewableKeys in SQL)
    const viewable = admin
      ? ''
      : `, (select coalesce(array_agg(bv->>'key'), '{}') from blueprints b, jsonb_array_elements(b.variables) bv where b.id = s.blueprint_id and coalesce(bv->>'userViewable', 'true') <> 'false') as "$viewable"`;
    // the page is cut first (index walk + limit); included relations are read for the page's ids only
    const pageSql = `select ${selectList(SERVER_RECORDS, 's')}${shared}${viewable}, (select count(*) from servers c ${where('c')}) as "$total"
      from servers s ${where('s')} order by s.created_at asc, s.id asc limit $${n + 1} offset $${n + 2}`;
    const wanted = INCLUDABLE.filter(([key]) => include[key]);
    // Included rows ride on the page's first row only, as one JSON array per relation: each a sub-select
    // by primary key over the page's distinct ids, evaluated once. (Joining them to every page row and
    // picking one per id with window functions made PostgreSQL sort the wide joined rows three times.)
    const sql = wanted.length
      ? `with p as materialized (${pageSql})
         select p.*, ${wanted
           .map(
             ([key, rel]) =>
               `case when p.id = (select id from p order by "createdAt" asc, id asc limit 1) then (select json_agg(${jsonObjectOf(rel.records, key)}) from ${rel.records.table} ${key}
                  where ${key}.id in (select "${rel.idProperty}" from p)) end as "$${key}"`,
           )
           .join(', ')}
         from p order by p."createdAt" asc, p.id asc`
      : pageSql;
    // A status or node filter is very selective for some values and not for others (one server
    // installing among thousands offline): such a page is planned for its values, not prepared.
    const prepare = !filters.status && !filters.nodeId;
    const rows = await readRows<Record<string, unknown>>(this.orm, sql, [...params, page.limit, page.offset], { prepare });
    let total = rows.length ? Number(rows[0]!.$total) : 0;
    if (!rows.length && page.offset > 0)
      total = Number((await readRows<{ n: string }>(this.orm, `select count(*) as n from servers c ${where('c')}`, params, { prepare }))[0]!.n);
    const included: Record<keyof ServerInclude, unknown[]> = { owner: [], node: [], blueprint: [] };
    for (const [key, rel] of wanted) {
      const related = (rows[0]?.[`$${key}`] ?? []) as Record<string, unknown>[];
      for (const r of related) included[key].push(reviveDates(rel.records, r));
    }
    const items = rows.map((row) => {
      // a new object without the extra columns (`delete` would leave V8 a slow dictionary object)
      const { $total: _total, $owner: _owner, $node: _node, $blueprint: _blueprint, $shared: shared, $viewable: viewableVariables, ...record } = row;
      const server = reviveDates(SERVER_RECORDS, record) as ServerRecord;
      const [keys, paths] = (shared as [string[], string[]] | null | undefined) ?? [[ALL_PERMISSIONS], []];
      server.permissions = keys;
      server.paths = paths;
      if (viewableVariables) server.viewableVariables = viewableVariables as string[];
      return server;
    });
    return {
      items,
      meta: { total, page: page.page, limit: page.limit },
      included: { users: included.owner as UserRecord[], nodes: included.node as NodeRecord[], blueprints: included.blueprint as BlueprintRecord[] },
    };
  }

  /**
   * The server and what the actor holds on it: its owner, an administrator, or a subuser (with the
   * keys granted). Anyone else gets a 404. Node and blueprint are loaded; `permissions` is set.
   */
  async access(actor: Actor | null, id: string): Promise<{ server: Server; access: ServerAccess }> {
    const a = requireActor(actor);
    const serverId = parseId(id, 'Server');
    const server = await this.em.findOne(Server, { id: serverId }, { populate: ['node', 'blueprint'] });
    if (!server) throw AppError.notFound('Server');
    const shared = isAdmin(a) || server.owner.id === a.user.id ? null : await this.em.findOne(Subuser, { server: serverId, user: a.user.id });
    const access = accessOf(a.user, server.id, server.owner.id, shared?.permissions ?? null, shared?.paths ?? null);
    server.permissions = keysOf(access);
    server.paths = [...access.paths];
    if (access.role !== 'admin') server.viewableVariables = viewableKeys(server.blueprint);
    return { server, access };
  }

  /** The folders the actor's file keys on the server are limited to; empty: the whole server. */
  async scopes(actor: Actor | null, id: string): Promise<string[]> {
    return (await this.access(actor, id)).server.paths ?? [];
  }

  /** The server if the actor may see it (owner, admin or subuser), else 404. */
  async get(actor: Actor | null, id: string): Promise<Server> {
    return (await this.access(actor, id)).server;
  }

  async create(actor: Actor | null, input: unknown): Promise<Server> {
    const a = requireActor(actor);
    const data = parseInput(createServerInput, input);
    const fields: Record<string, string> = {};

    let ownerId = a.user.id;
    if (data.ownerId !== undefined && data.ownerId !== a.user.id) {
      if (!isAdmin(a)) throw AppError.forbidden('Only administrators may create servers for other users.');
      if (!(await this.em.count(User, { id: data.ownerId }))) fields.ownerId = 'no user with this id';
      else ownerId = data.ownerId;
    }
    const blueprint = await this.em.findOne(Blueprint, { id: data.blueprintId });
    if (!blueprint) fields.blueprintId = 'no blueprint with this id';
    else assertMayUseBlueprint(a, blueprint, this.rules);
    if (!(await this.em.count(Node, { id: data.nodeId }))) fields.nodeId = 'no node with this id';
    let variables: Record<string, string> = {};
    if (blueprint) variables = resolveVariables(blueprint, {}, data.variables ?? {}, fields, setterOf(a));
    if (Object.keys(fields).length || !blueprint) throw AppError.validation(fields);
    assertMayKeepBackups(a, data.backupLimit, undefined, this.rules);

    const server = await this.em.transactional(async (em) => {
      const node = await em.findOne(Node, { id: data.nodeId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      if (!node) throw AppError.validation({ nodeId: 'no node with this id' }); // deleted meanwhile
      const maxCpu = maxCpuOf(node);
      const memory = data.memory ?? blueprint.defaults?.memory ?? 512;
      const disk = data.disk ?? blueprint.defaults?.disk ?? 1024;
      let cpu = data.cpu ?? Math.min(blueprint.defaults?.cpu ?? 100, maxCpu);
      if (data.cpu !== undefined && data.cpu > maxCpu) {
        throw AppError.validation({ cpu: `must be at most ${maxCpu} (${maxCpu / 100} cores × 100 on this node)` });
      }
      cpu = Math.max(1, cpu);
      await assertFits(em, node, { memory, disk }, { memory: 0, disk: 0 });
      await assertWithinQuota(em, a, ownerId, { memory, cpu, disk }, this.rules);
      const server = em.create(Server, {
        name: data.name,
        description: data.description ?? '',
        owner: em.getReference(User, ownerId),
        node,
        blueprint: em.getReference(Blueprint, blueprint.id),
        memory,
        cpu,
        disk,
        backupLimit: data.backupLimit ?? this.rules.backupLimitDefault ?? BACKUP_LIMIT_FALLBACK,
        variables,
        autoRestart: data.autoRestart ?? false,
        status: blueprint.install && blueprint.install.trim() ? 'installing' : 'offline',
      });
      const properties = { name: data.name, nodeId: data.nodeId, blueprintId: blueprint.id, ownerId, memory, cpu, disk };
      await this.activity.record({ event: 'server:create', serverId: server.id, actor: a, properties }, em);
      return server;
    });
    const created = await this.afterWrite(server.id);
    if (!isAdmin(a)) created.viewableVariables = viewableKeys(created.blueprint);
    return created;
  }

  async update(actor: Actor | null, id: string, input: unknown): Promise<Server> {
    const a = requireActor(actor);
    const { server: current, access } = await this.access(a, id);
    const data = withoutUnchanged(parseInput(updateServerInput, input), current);
    const fixed = fixedFieldsGiven(data);
    if (Object.keys(fixed).length) throw AppError.validation(fixed);
    const changesSettings = data.memory !== undefined || data.cpu !== undefined || data.disk !== undefined || data.backupLimit !== undefined || data.variables !== undefined || data.autoRestart !== undefined;
    if (changesSettings) demandOwner(access, 'change its memory, cpu, disk, backup limit, variables or auto-restart');
    if (data.name !== undefined || data.description !== undefined) demand(access, 'settings.rename');
    if (data.variables) assertMayChangeVariables(a, current.blueprint, this.rules);

    // Every update of a node's servers holds the node row's lock (capacity), so the server row read
    // after it is the latest: variables merge into what concurrent updates have committed.
    await this.em.transactional(async (em) => {
      const node = await em.findOne(Node, { id: current.node.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      const server = await em.findOne(Server, { id: current.id }, { refresh: true });
      if (!node || !server) throw AppError.notFound('Server'); // deleted meanwhile
      const fields: Record<string, string> = {};
      const variables = data.variables ? resolveVariables(current.blueprint, server.variables, data.variables, fields, setterOf(a)) : undefined;
      if (Object.keys(fields).length) throw AppError.validation(fields);
      // against the limit as committed (the node's lock orders this update after the others)
      assertMayKeepBackups(a, data.backupLimit, server.backupLimit, this.rules);
      if (data.cpu !== undefined && data.cpu !== server.cpu && data.cpu > maxCpuOf(node)) {
        const maxCpu = maxCpuOf(node);
        throw AppError.validation({ cpu: `must be at most ${maxCpu} (${maxCpu / 100} cores × 100 on this node)` });
      }
      const next = { memory: data.memory ?? server.memory, disk: data.disk ?? server.disk };
      // Only growth is checked: shrinking a server on an overbooked node (after the node was resized) is always fine.
      if (next.memory > server.memory || next.disk > server.disk) {
        await assertFits(em, node, next, server, server.id);
      }
      const cpu = data.cpu ?? server.cpu;
      if (next.memory > server.memory || next.disk > server.disk || cpu > server.cpu) {
        await assertWithinQuota(em, a, server.owner.id, { ...next, cpu }, this.rules, { id: server.id, had: server });
      }
      if (data.name !== undefined) server.name = data.name;
      if (data.description !== undefined) server.description = data.description;
      if (data.cpu !== undefined) server.cpu = data.cpu;
      if (data.autoRestart !== undefined) server.autoRestart = data.autoRestart;
      if (data.backupLimit !== undefined) server.backupLimit = data.backupLimit;
      if (variables) server.variables = variables;
      server.memory = next.memory;
      server.disk = next.disk;
      server.specRevision += 1;
      // the names of what changed; variable values can be secrets (passwords of the game's admin console)
      const changed = Object.keys(data).filter((k) => (data as Record<string, unknown>)[k] !== undefined);
      await this.activity.record({ event: 'server:update', serverId: server.id, actor, properties: { fields: changed, variables: Object.keys(data.variables ?? {}) } }, em);
    });
    return this.afterWrite(current.id, access);
  }

  /**
   * The node kills the process and removes the files first; when it cannot be reached the record
   * stays (422 NODE_UNAVAILABLE) so that nothing is left running without a record. Administrators
   * may pass `force` to drop the record anyway (e.g. the node is gone for good).
   */
  async remove(actor: Actor | null, id: string, { force = false }: { force?: boolean } = {}): Promise<void> {
    const { server, access } = await this.access(actor, id);
    demandOwner(access, 'delete it');
    if (force && !isAdmin(requireActor(actor))) throw AppError.forbidden('Only administrators may force-delete a server.');
    try {
      await this.provisioner.remove(server);
    } catch (err) {
      if (!(force && err instanceof AppError && err.code === 'NODE_UNAVAILABLE')) throw err;
      log.warn({ serverId: server.id, nodeId: server.node.id }, 'node unreachable: server record force-deleted by an administrator');
    }
    await this.em.transactional(async (em) => {
      em.remove(em.getReference(Server, server.id));
      await this.activity.record({ event: 'server:delete', serverId: server.id, actor, properties: { name: server.name, force: force ?? false } }, em);
    });
    // its feeds complete (the console's end when its node feed does)
    await this.bus?.publish(server.id, GONE).catch((err: unknown) => log.warn({ err, serverId: server.id }, 'could not tell the live feeds that the server is gone'));
  }

  /**
   * Runs the blueprint's install script again, as at create (`installing`, then `offline` or
   * `install_failed`), with the blueprint as it is now: the way back from a failed install once an
   * administrator has fixed the script. The server's files stay; the script runs over them, as in
   * Pterodactyl. The owner's and administrators' alone, and only while nothing runs (the status is
   * checked and set under the node's row lock, as every update of the node's servers). When the node
   * cannot be reached the server keeps its status (422 NODE_UNAVAILABLE).
   */
  async reinstall(actor: Actor | null, id: string): Promise<Server> {
    const { server: current, access } = await this.access(actor, id);
    demandOwner(access, 'reinstall it');
    const { was, now } = await this.em.transactional(async (em) => {
      await em.findOne(Node, { id: current.node.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      const server = await em.findOne(Server, { id: current.id }, { refresh: true, populate: ['blueprint'] });
      if (!server) throw AppError.notFound('Server'); // deleted meanwhile
      assertMayReinstall(server.status);
      const was = { status: server.status, lastExitCode: server.lastExitCode, lastStopReason: server.lastStopReason };
      // as the node reports an install's start: no exit code or stop reason yet
      Object.assign(server, { status: server.blueprint.install?.trim() ? 'installing' : 'offline', lastExitCode: null, lastStopReason: null });
      server.specRevision += 1;
      return { was, now: server.status };
    });
    const server = await this.reload(current.id, access);
    try {
      await this.provisioner.reinstall(server);
    } catch (err) {
      // nothing was installed: the server as it was, unless the node has reported another status meanwhile
      await this.em.nativeUpdate(Server, { id: server.id, status: now }, was);
      throw err;
    }
    await this.activity.record({ event: 'server:reinstall', serverId: server.id, actor, properties: { blueprintId: server.blueprint.id } });
    return server;
  }

  /**
   * Reloads the committed server and tells its node (best effort: errors are logged). A server
   * deleted meanwhile (a DELETE racing this write) is a 404. Every write of a server's settings ends here.
   */
  async afterWrite(serverId: string, access?: ServerAccess): Promise<Server> {
    const server = await this.reload(serverId, access);
    try {
      await this.provisioner.sync(server);
    } catch (err) {
      log.warn({ err, serverId: server.id, nodeId: server.node.id }, 'could not sync the server to its node; the agent will pick it up later');
    }
    return server;
  }

  /** The committed server with its node and blueprint, as the holder of `access` reads it (a 404 once deleted). */
  private async reload(serverId: string, access?: ServerAccess): Promise<Server> {
    const server = await this.em.findOne(Server, { id: serverId }, { populate: ['node', 'blueprint'], refresh: true });
    if (!server) throw AppError.notFound('Server');
    server.permissions = access ? keysOf(access) : [ALL_PERMISSIONS];
    server.paths = access ? [...access.paths] : [];
    if (access && access.role !== 'admin') server.viewableVariables = viewableKeys(server.blueprint);
    return server;
  }
}

/** A reinstall needs a server that runs nothing: offline, or after a failed install. */
function assertMayReinstall(status: ServerStatus): void {
  if (status === 'offline' || status === 'install_failed') return;
  if (status === 'installing') throw AppError.invalidState('The server is already installing.');
  if (status === 'restoring') throw AppError.invalidState('A backup is being restored; reinstall the server once it is done.');
  throw AppError.invalidState(`Stop the server before reinstalling it (it is ${status}).`);
}

/**
 * Throws CAPACITY_EXCEEDED when `want` does not fit on the node next to its other servers.
 * `had` is what the server already holds (0 for a new one); growth is what must fit.
 */
async function assertFits(em: EntityManager, node: Node, want: Allocation, had: Allocation, serverId?: string): Promise<void> {
  const used = await allocatedOn(em, node.id, serverId);
  const available = { memory: Math.max(0, node.memory - used.memory), disk: Math.max(0, node.disk - used.disk) };
  const fields: Record<string, string> = {};
  if (want.memory > had.memory && want.memory > available.memory) fields.memory = `only ${available.memory} MiB of memory is free on this node`;
  if (want.disk > had.disk && want.disk > available.disk) fields.disk = `only ${available.disk} MiB of disk is free on this node`;
  if (Object.keys(fields).length) {
    throw new AppError('CAPACITY_EXCEEDED', 'The node does not have enough free memory or disk for this server.', {
      nodeId: node.id,
      requested: { memory: want.memory, disk: want.disk },
      available,
      fields,
    });
  }
}

/**
 * `data` without what it would not change on `server`: a record sent back as GET gave it (or with one
 * field changed) changes only what differs, and needs only the keys for that. A variable the caller
 * sees (shownVariables: `server` as access() gave it) given its value is left out too; one they do
 * not see always stays, so that a right guess of a value kept from them is refused as a wrong one is.
 * `variables` goes when nothing of it is left.
 */
function withoutUnchanged(data: UpdateServerInput, server: Server): UpdateServerInput {
  const out: UpdateServerInput = { ...data };
  for (const k of ['name', 'description', 'memory', 'cpu', 'disk', 'backupLimit', 'autoRestart', ...FIXED_FIELDS] as const) {
    if (out[k] !== undefined && out[k] === server[k]) delete out[k];
  }
  if (out.variables) {
    const shown = shownVariables(server);
    const changed = Object.entries(out.variables).filter(([k, v]) => !Object.hasOwn(shown, k) || shown[k] !== v);
    if (changed.length) out.variables = Object.fromEntries(changed);
    else delete out.variables;
  }
  return out;
}

/** Administrators set every variable of a server; its owner and subusers what the blueprint lets them. */
function setterOf(actor: Actor): Setter {
  return isAdmin(actor) ? 'admin' : 'user';
}
