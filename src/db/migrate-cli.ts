/** `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded database). */
import 'reflect-metadata';
import { loadConfig } from '../config.js';
import { logger } from '../logger.js';
import { startEmbeddedPostgres } from './embedded.js';
import { openDatabase } from './orm.js';

async function main() {
  const config = loadConfig();
  const embedded = config.databaseUrl ? null : await startEmbeddedPostgres(config.dataDir, config.embeddedPgPort);
  const orm = await openDatabase(config.databaseUrl ?? embedded!.url);
  const executed = await orm.getMigrator().getExecutedMigrations();
  logger.info({ applied: executed.map((m) => m.name) }, 'database is up to date');
  await orm.close();
  await embedded?.stop();
}

main().catch((err) => {
  logger.fatal({ err }, 'migration failed');
  process.exit(1);
});
