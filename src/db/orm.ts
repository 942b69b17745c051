import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from '../../mikro-orm.config.js';
import { childLogger } from '../logger.js';
import { withStartupLock } from './startup-lock.js';

const log = childLogger('db');

/** Connects, without applying migrations (the platform applies them under its start-up lock). */
export async function connectDatabase(url: string, opts: { poolMax?: number } = {}): Promise<MikroORM> {
  return MikroORM.init(ormConfig(url, opts));
}

/**
 * Applies every pending migration (idempotent: a second start applies nothing). The caller holds the
 * start-up lock (src/db/startup-lock.ts): what is pending is read here, under it, so an instance that
 * waited for another one's migrations finds nothing left to do.
 */
export async function applyMigrations(orm: MikroORM): Promise<void> {
  const migrator = orm.getMigrator();
  const pending = await migrator.getPendingMigrations();
  if (pending.length) {
    log.info({ migrations: pending.map((m) => m.name) }, 'applying database migrations');
    await migrator.up();
  }
}

/** Connects and applies every pending migration, one instance at a time (the migration CLI, tests). */
export async function openDatabase(url: string, opts: { poolMax?: number } = {}): Promise<MikroORM> {
  const orm = await connectDatabase(url, opts);
  try {
    await withStartupLock(url, () => applyMigrations(orm));
  } catch (err) {
    await orm.close(true);
    throw err;
  }
  return orm;
}
