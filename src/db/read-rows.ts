/**
 * The few hottest reads (authentication of every request, the server list page and its count, the
 * GraphQL relation loaders) send their SQL straight to a pooled `pg` client of MikroORM's own pool,
 * with `$1` placeholders. The same statements through `em.getConnection().execute()` pass through
 * knex's raw-query formatting and runner first, which the benchmark's profile showed costing more
 * CPU than the query itself. Everything else (writes, transactions, entities) stays on MikroORM.
 * Never use this inside a transaction: it does not see the transaction's connection.
 * The statements are prepared once per pooled connection (named by a hash of their text) so that
 * PostgreSQL does not parse and plan them again on every request: planning the joined server page
 * took longer than running it. The texts are a small fixed set (built from constant fragments; the
 * values always travel as parameters); past MAX_NAMED distinct texts, statements go unnamed.
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
    const name = statementName(text);
    return (await connection.query(name ? { name, text, values } : { text, values })).rows as T[];
  } finally {
    void pool.releaseConnection(connection);
  }
}
