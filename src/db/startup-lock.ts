/**
 * The start-up step that writes shared state (migrations, built-in blueprints, the first
 * administrator) runs on one gateway instance at a time: several instances starting together on one
 * database (a first start with two replicas, an upgrade that ships a migration) would otherwise each
 * create the same tables or the same administrator, and all but one start would fail.
 *
 * The lock is a session-level PostgreSQL advisory lock held on a connection of its own (not one of
 * the pool's, which the step itself uses and may be a single connection), for the whole step; each
 * step re-reads what it has to do once it holds the lock (pending migrations, whether an
 * administrator exists). If the instance dies while holding it, its connection ends and so does the
 * lock.
 */
import pg from 'pg';
import { childLogger } from '../logger.js';

const log = childLogger('db');

/** The advisory lock's key: hashtext of this name, as the other advisory locks of the project. */
const STARTUP_LOCK_NAME = 'hostpanel:startup';

export interface StartupLock {
  /** Releases the lock and closes its connection (once; later calls do nothing). */
  release(): Promise<void>;
}

/** Waits until this instance holds the start-up lock of the database at `url`. */
export async function takeStartupLock(url: string): Promise<StartupLock> {
  const client = new pg.Client({ connectionString: url });
  // an error of the idle connection (the server went away) must not crash the process: the lock is gone with it
  client.on('error', (err) => log.warn({ err: err.message }, 'the start-up lock connection failed'));
  await client.connect();
  try {
    const free = await client.query<{ ok: boolean }>(`select pg_try_advisory_lock(hashtext($1)) as ok`, [STARTUP_LOCK_NAME]);
    if (!free.rows[0]?.ok) {
      log.info('another gateway instance is starting on this database: waiting for its start-up step (migrations, blueprints, first administrator)');
      await client.query(`select pg_advisory_lock(hashtext($1))`, [STARTUP_LOCK_NAME]);
    }
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
  let released: Promise<void> | null = null;
  return {
    release: () =>
      (released ??= (async () => {
        try {
          await client.query(`select pg_advisory_unlock(hashtext($1))`, [STARTUP_LOCK_NAME]);
        } catch (err) {
          log.warn({ err: (err as Error).message }, 'could not release the start-up lock: ending its connection releases it');
        }
        // ending the session releases the lock in any case
        await client.end().catch(() => undefined);
      })()),
  };
}

/** Runs `step` while holding the start-up lock. */
export async function withStartupLock<T>(url: string, step: () => Promise<T>): Promise<T> {
  const lock = await takeStartupLock(url);
  try {
    return await step();
  } finally {
    await lock.release();
  }
}
