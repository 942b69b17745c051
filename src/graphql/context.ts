/**
 * The per-operation GraphQL context: `{ actor, services, req, res, loaders }`. Built once per HTTP
 * request (Apollo) or per WebSocket operation (graphql-ws); the loaders are never shared between
 * requests, so nothing cached leaks from one caller to another.
 */
import type { IncomingMessage } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import type { Request, Response } from 'express';
import { Blueprint } from '../entities/Blueprint.js';
import { Node } from '../entities/Node.js';
import { User } from '../entities/User.js';
import type { Actor } from '../services/actor.js';
import type { Services } from '../services/index.js';
import type { Allocation } from '../services/servers.service.js';

export interface Loaders {
  user: DataLoader<string, User | null>;
  node: DataLoader<string, Node | null>;
  blueprint: DataLoader<string, Blueprint | null>;
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

type WithId = { id: string };

/** One batched `select … where id in (…)` per entity type and tick, whatever the number of parents. */
function byId<T extends WithId>(em: EntityManager, entity: new (...args: never[]) => T): DataLoader<string, T | null> {
  return new DataLoader<string, T | null>(
    async (ids) => {
      const rows = (await em.find(entity as never, { id: { $in: [...ids] } } as never)) as T[];
      const map = new Map(rows.map((r) => [r.id, r]));
      return ids.map((id) => map.get(id) ?? null);
    },
    { maxBatchSize: 500 },
  );
}

/** `em` must be the request's forked EntityManager (the one the services use through RequestContext). */
export function createLoaders(em: EntityManager, services: Services): Loaders {
  return {
    user: byId(em, User),
    node: byId(em, Node),
    blueprint: byId(em, Blueprint),
    allocation: new DataLoader<string, Allocation>(async (ids) => {
      const m = await services.nodes.allocations([...ids]);
      return ids.map((id) => m.get(id) ?? { memory: 0, disk: 0 });
    }),
  };
}
