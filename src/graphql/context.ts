/**
 * The per-operation GraphQL context: `{ actor, services, req, res, loaders }`. Built once per HTTP
 * request (Apollo) or per WebSocket operation (graphql-ws); the loaders are never shared between
 * requests, so nothing cached leaks from one caller to another.
 */
import type { IncomingMessage } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import type { Request, Response } from 'express';
import type { Blueprint } from '../entities/Blueprint.js';
import type { Node } from '../entities/Node.js';
import type { User } from '../entities/User.js';
import { readRows } from '../db/read-rows.js';
import type { Actor } from '../services/actor.js';
import type { Services } from '../services/index.js';
import type { Allocation } from '../services/servers.service.js';

/** What the GraphQL User, Node and Blueprint types show, read as plain rows (never a credential column). */
export type UserRecord = Pick<User, 'id' | 'email' | 'name' | 'role' | 'createdAt' | 'updatedAt'>;
export type NodeRecord = Pick<Node, 'id' | 'name' | 'fqdn' | 'port' | 'scheme' | 'memory' | 'disk' | 'cpuCores' | 'status' | 'lastSeenAt' | 'tokenCreatedAt' | 'createdAt' | 'updatedAt'>;
export type BlueprintRecord = Pick<
  Blueprint,
  'id' | 'key' | 'name' | 'description' | 'startup' | 'stop' | 'ready' | 'install' | 'variables' | 'defaults' | 'builtin' | 'createdAt' | 'updatedAt'
>;

/**
 * A DataLoader of rows by id that also answers synchronously for rows it has already fetched
 * (`peek`): a relation field whose row was prefetched resolves without a promise, which keeps
 * graphql-js on its synchronous path for the whole list item.
 */
export class RecordLoader<T extends { id: string }> extends DataLoader<string, T | null> {
  private readonly found: Map<string, T>;

  constructor(fetch: (ids: readonly string[]) => Promise<T[]>) {
    const found = new Map<string, T>();
    super(
      async (ids) => {
        for (const row of await fetch(ids)) found.set(row.id, row);
        return ids.map((id) => found.get(id) ?? null);
      },
      { maxBatchSize: 500 },
    );
    this.found = found;
  }

  peek(id: string): T | undefined {
    return this.found.get(id);
  }
}

export interface Loaders {
  user: RecordLoader<UserRecord>;
  node: RecordLoader<NodeRecord>;
  blueprint: RecordLoader<BlueprintRecord>;
  /** Memory/disk allocated per node id (one grouped query per tick). */
  allocation: DataLoader<string, Allocation>;
}

export interface GraphQLContext {
  actor: Actor | null;
  services: Services;
  /** The HTTP request (or the WebSocket upgrade request for subscriptions). */
  req: Request | IncomingMessage;
  /** The HTTP response; null over WebSocket (no cookies can be set there). */
  res: Response | null;
  loaders: Loaders;
}

/**
 * One batched `select … where id = any($1)` per table and tick, whatever the number of parents.
 * Relations are read-only here, so they come back as plain rows (columns aliased to the entity's
 * property names, timestamps made Dates) instead of managed entities: hydration was the largest
 * single cost of a GraphQL page in the benchmark's profile.
 */
function rowsById<T extends { id: string }>(orm: MikroORM, table: string, columns: Record<Exclude<keyof T, 'id'>, string>, dates: (keyof T)[]): RecordLoader<T> {
  const select = ['id', ...Object.entries(columns).map(([prop, column]) => `${column as string} as "${prop}"`)].join(', ');
  const sql = `select ${select} from ${table} where id = any($1::uuid[])`;
  return new RecordLoader<T>(async (ids) => {
    const rows = await readRows<Record<string, unknown>>(orm, sql, [ids]);
    for (const row of rows) for (const d of dates) if (row[d as string] != null) row[d as string] = new Date(row[d as string] as string);
    return rows as T[];
  });
}

export function createLoaders(orm: MikroORM, services: Services): Loaders {
  return {
    user: rowsById<UserRecord>(orm, 'users', { email: 'email', name: 'name', role: 'role', createdAt: 'created_at', updatedAt: 'updated_at' }, ['createdAt', 'updatedAt']),
    node: rowsById<NodeRecord>(
      orm,
      'nodes',
      {
        name: 'name',
        fqdn: 'fqdn',
        port: 'port',
        scheme: 'scheme',
        memory: 'memory',
        disk: 'disk',
        cpuCores: 'cpu_cores',
        status: 'status',
        lastSeenAt: 'last_seen_at',
        tokenCreatedAt: 'token_created_at',
        createdAt: 'created_at',
        updatedAt: 'updated_at',
      },
      ['lastSeenAt', 'tokenCreatedAt', 'createdAt', 'updatedAt'],
    ),
    blueprint: rowsById<BlueprintRecord>(
      orm,
      'blueprints',
      {
        key: 'key',
        name: 'name',
        description: 'description',
        startup: 'startup',
        stop: 'stop',
        ready: 'ready',
        install: 'install',
        variables: 'variables',
        defaults: 'defaults',
        builtin: 'builtin',
        createdAt: 'created_at',
        updatedAt: 'updated_at',
      },
      ['createdAt', 'updatedAt'],
    ),
    allocation: new DataLoader<string, Allocation>(async (ids) => {
      const m = await services.nodes.allocations([...ids]);
      return ids.map((id) => m.get(id) ?? { memory: 0, disk: 0 });
    }),
  };
}
