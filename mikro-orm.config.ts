/**
 * MikroORM configuration shared by the app, the migration CLI and the tests.
 * The schema is owned by migrations (src/migrations); it is never synchronised automatically.
 */
import { defineConfig, PostgreSqlDriver } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { childLogger } from './src/logger.js';
import { ENTITIES } from './src/entities/index.js';
import { MIGRATIONS } from './src/migrations/index.js';

const ormLog = childLogger('mikro-orm');

export function ormConfig(clientUrl: string, opts: { debug?: boolean; poolMax?: number } = {}) {
  return defineConfig({
    driver: PostgreSqlDriver,
    clientUrl,
    entities: ENTITIES,
    extensions: [Migrator],
    discovery: { disableDynamicFileAccess: true },
    migrations: {
      migrationsList: MIGRATIONS,
      transactional: true,
      allOrNothing: true,
      snapshot: false,
    },
    forceUtcTimezone: true,
    debug: opts.debug ?? false,
    logger: (message: string) => ormLog.debug(message),
    pool: { min: 0, max: opts.poolMax ?? 10 },
    // Every unit of work is forked per request (RequestContext); the global EM is never used.
    allowGlobalContext: false,
  });
}

export default ormConfig(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/hostpanel');
