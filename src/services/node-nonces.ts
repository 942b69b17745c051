/**
 * The nonces of signed node requests that the gateway instances of a scale-out (REDIS_URL) accepted,
 * kept in the database they share (`node_nonces`), so that a request one instance took is refused by
 * every other whatever the state of Redis (src/http/node-auth.ts asks here).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { readRows } from '../db/read-rows.js';

/**
 * How long an accepted nonce is kept. A signature is fresh for MAX_CLOCK_SKEW_SECONDS either way of the
 * clock of the instance judging it, and the instances' clocks may differ from each other: keeping it
 * 10 minutes refuses a replay to any instance whose clock is less than 9 minutes behind the one that
 * took it (70 s allowed only 10 s). The rows are small, and each insert purges expired ones.
 */
export const NONCE_TTL_SECONDS = 600;
/** Expired nonces each insert deletes (it adds one row, so the table holds about the last NONCE_TTL_SECONDS' requests). */
const NONCE_PURGE_ROWS = 8;

/**
 * One statement records the nonce and tells whether it was new (the primary key decides, atomically,
 * between instances racing with the same request). It also deletes a few expired rows, rows that
 * other instances are deleting being skipped rather than waited for. The times are the database's,
 * the same for every instance.
 */
const RECORD_NONCE_SQL =
  'with purged as (delete from "node_nonces" where ("node_id", "nonce") in ' +
  `(select "node_id", "nonce" from "node_nonces" where "expires_at" < now() limit ${NONCE_PURGE_ROWS} for update skip locked)) ` +
  'insert into "node_nonces" ("node_id", "nonce", "expires_at") values ($1, $2, now() + make_interval(secs => $3)) ' +
  'on conflict do nothing returning 1 as "fresh"';

/**
 * True when no gateway instance has accepted this nonce of this node before (it is recorded now). A
 * database error is thrown: the request is refused (fail closed) and the agent sends it again, signed
 * afresh.
 */
export async function firstUseEverywhere(orm: MikroORM, nodeId: string, nonce: string): Promise<boolean> {
  const rows = await readRows<{ fresh: number }>(orm, RECORD_NONCE_SQL, [nodeId, nonce, NONCE_TTL_SECONDS]);
  return rows.length === 1;
}
