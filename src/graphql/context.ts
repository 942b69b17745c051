/**
 * The per-operation GraphQL context: `{ actor, services, req, res, loaders }`. Built once per HTTP
 * request (Apollo) or per WebSocket operation (graphql-ws); the loaders are never shared between
 * requests, so nothing cached leaks from one caller to another. The rows come from
 * `services.lookup`: one batched select per table and tick, whatever the number of parents.
 */
import type { IncomingMessage } from 'node:http';
import DataLoader from 'dataloader';
import type { Request, Response } from 'express';
import type { Actor } from '../services/actor.js';
import type { Services } from '../services/index.js';
import type { BlueprintRecord, NodeRecord, UserRecord } from '../services/records.js';
import type { Allocation } from '../services/servers.service.js';

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

  /** Rows fetched elsewhere (a list that included its relations) answer later loads and peeks. */
  remember(rows: Iterable<T>): void {
    for (const row of rows) {
      this.found.set(row.id, row);
      this.prime(row.id, row);
    }
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

/** Each loader is made on first use: most operations need one or two of them, or none. */
export function createLoaders(services: Services): Loaders {
  let user: Loaders['user'] | undefined;
  let node: Loaders['node'] | undefined;
  let blueprint: Loaders['blueprint'] | undefined;
  let allocation: Loaders['allocation'] | undefined;
  return {
    get user() {
      return (user ??= new RecordLoader((ids) => services.lookup.users(ids)));
    },
    get node() {
      return (node ??= new RecordLoader((ids) => services.lookup.nodes(ids)));
    },
    get blueprint() {
      return (blueprint ??= new RecordLoader((ids) => services.lookup.blueprints(ids)));
    },
    get allocation() {
      return (allocation ??= new DataLoader<string, Allocation>(async (ids) => {
        const m = await services.nodes.allocations([...ids]);
        return ids.map((id) => m.get(id) ?? { memory: 0, disk: 0 });
      }));
    },
  };
}
