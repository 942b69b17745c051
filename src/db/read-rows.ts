/**
 * The few hottest statements (authentication of every request, the server list page and its count, the
 * GraphQL relation loaders, the activity log's inserts outside a transaction) send their SQL straight to a pooled `pg` client of MikroORM's own pool,
 * with `$1` placeholders. The same statements through `em.getConnection().execute()` pass through
 * knex's raw-query formatting and runner first, which the benchmark's profile showed costing more
 * CPU than the query itself. Everything else (writes, transactions, entities) stays on MikroORM.
 * Never use this inside a transaction: it does not see the transaction's connection.
 * Statements are prepared once per pooled connection (named by a hash of their text) and run on
 * one generic plan, so PostgreSQL neither parses nor plans them again on every request: planning the
 * GraphQL server page cost more than running it. Preparing alone does not achieve that: by default
 * PostgreSQL plans a prepared statement again for each call's values (a "custom plan") whenever the
 * plan made for any values looks dearer, and with `limit $n` it always does (it assumes the limit
 * may be 10% of the table). So each connection is switched to `plan_cache_mode = force_generic_plan`
 * before its first statement here. That setting governs named prepared statements only, which
 * only this module makes: MikroORM's and knex's statements are unnamed and planned per call as before.
 * Measured on the server page: 0.7 ms less PostgreSQL CPU per GraphQL request, 0.2 ms per REST one.
 * A statement whose best plan depends on its values (a filter that is selective for some values
 * and not for others) passes `{ prepare: false }`: it goes unnamed and is planned for its values.
 * The texts are a small fixed set (built from constant fragments; the values always travel as
 * parameters); past MAX_NAMED distinct texts, statements go unnamed.
 * Each statement is announced on knex's `query` event like knex's own, so query listeners
 * (debugging, the tests that count the queries of a GraphQL page) see these too.
 */
import { createHash } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';

interface PgClient {
  query(config: { name?: string; text: string; values?: readonly unknown[] }): Promise<{ rows: unknown[] }>;
}

const MAX_NAMED = 256;
const names = new Map<string, string>();

function statementName(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED) {
    name = 'hp_' + createHash('sha1').update(text).digest('hex').slice(0, 24);
    names.set(text, name);
  }
  return name;
}

/** Pooled connections already switched to generic plans (see above); a new connection is switched on first use. */
const genericPlans = new WeakSet<PgClient>();

async function useGenericPlans(connection: PgClient): Promise<void> {
  if (genericPlans.has(connection)) return;
  genericPlans.add(connection);
  try {
    await connection.query({ text: 'set plan_cache_mode = force_generic_plan' });
  } catch {
    // PostgreSQL before 12 has no such setting: the statements are still prepared, only planned per call
  }
}

/** The part of knex's client that lends out pool connections. */
interface PooledClient {
  acquireConnection(): Promise<PgClient>;
  releaseConnection(connection: PgClient): Promise<void>;
}

export async function readRows<T>(
  orm: MikroORM | EntityManager,
  text: string,
  values: readonly unknown[] = [],
  opts: { prepare?: boolean } = {},
): Promise<T[]> {
  const em = 'em' in orm ? orm.em : orm;
  const knex = em.getConnection().getKnex();
  const pool = knex.client as unknown as PooledClient;
  knex.emit('query', { method: 'raw', sql: text, bindings: values });
  const connection = await pool.acquireConnection();
  try {
    const name = opts.prepare === false ? undefined : statementName(text);
    if (name) await useGenericPlans(connection);
    return (await connection.query(name ? { name, text, values } : { text, values })).rows as T[];
  } finally {
    void pool.releaseConnection(connection);
  }
}
