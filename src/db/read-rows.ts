/**
 * The few hottest reads (authentication of every request, the server list page and its count, the
 * GraphQL relation loaders) send their SQL straight to a pooled `pg` client of MikroORM's own pool,
 * with `$1` placeholders. The same statements through `em.getConnection().execute()` pass through
 * knex's raw-query formatting and runner first, which the benchmark's profile showed costing more
 * CPU than the query itself. Everything else (writes, transactions, entities) stays on MikroORM.
 * Never use this inside a transaction: it does not see the transaction's connection.
 * Each statement is announced on knex's `query` event like knex's own, so query listeners
 * (debugging, the tests that count the queries of a GraphQL page) see these too.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';

interface PgClient {
  query(text: string, values?: readonly unknown[]): Promise<{ rows: unknown[] }>;
}

/** The part of knex's client that lends out pool connections. */
interface PooledClient {
  acquireConnection(): Promise<PgClient>;
  releaseConnection(connection: PgClient): Promise<void>;
}

export async function readRows<T>(orm: MikroORM | EntityManager, text: string, values: readonly unknown[] = []): Promise<T[]> {
  const em = 'em' in orm ? orm.em : orm;
  const knex = em.getConnection().getKnex();
  const pool = knex.client as unknown as PooledClient;
  knex.emit('query', { method: 'raw', sql: text, bindings: values });
  const connection = await pool.acquireConnection();
  try {
    return (await connection.query(text, values)).rows as T[];
  } finally {
    void pool.releaseConnection(connection);
  }
}
