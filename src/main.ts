/** `npm start`: the whole platform on one machine. Prints where it listens and how to sign in. */
import 'reflect-metadata';
import { ConfigError, loadConfig } from './config.js';
import { logger } from './logger.js';
import { startPlatform } from './platform.js';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const platform = await startPlatform(config);
  const { firstAdmin } = platform;
  const agent = platform.agent();
  const lines = [
    '',
    `  Panel:    ${platform.url}   (web page)`,
    `  REST API: ${platform.url}/api/v1   (docs: ${platform.url}/docs)`,
    `  GraphQL:  ${platform.url}/graphql`,
    `  Health:   ${platform.url}/health`,
    `  Database: ${config.databaseUrl ? 'DATABASE_URL' : `embedded PostgreSQL in ${config.dataDir}/postgres`}`,
    `  Node:     ${agent ? `local agent on port ${agent.port} (console ws://localhost:${agent.port}/console)` : 'no local agent (LOCAL_AGENT=false)'}`,
    '',
    firstAdmin.password
      ? `  Sign in as ${firstAdmin.email} with password ${firstAdmin.password}  (shown once; change it with PATCH /api/v1/users/me)`
      : `  Sign in as ${firstAdmin.email}${firstAdmin.created ? ' with ADMIN_PASSWORD' : ' (administrator created at first start)'}`,
    `  e.g. curl -X POST ${platform.url}/api/v1/auth/signin -H 'Content-Type: application/json' -d '{"email":"${firstAdmin.email}","password":"…"}'`,
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');
  logger.info({ url: platform.url }, 'panel is listening');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 60_000);
    force.unref();
    try {
      await platform.close();
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err) => {
  logger.fatal({ err }, 'the platform could not start');
  process.exit(1);
});
