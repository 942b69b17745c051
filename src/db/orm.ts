import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from '../../mikro-orm.config.js';
import { childLogger } from '../logger.js';

const log = childLogger('db');

/** Connects and applies every pending migration (idempotent: a second start applies nothing). */
export async function openDatabase(url: string, opts: { poolMax?: number } = {}): Promise<MikroORM> {
  const orm = await MikroORM.init(ormConfig(url, opts));
  const migrator = orm.getMigrator();
  const pending = await migrator.getPendingMigrations();
  if (pending.length) {
    log.info({ migrations: pending.map((m) => m.name) }, 'applying database migrations');
    await migrator.up();
  }
  return orm;
}
