/** `npm start`: the whole platform on one machine. Prints where it listens and how to sign in. */
import 'reflect-metadata';
import { ConfigError, loadConfig } from './config.js';
import { logger } from './logger.js';
import { startPlatform, type Platform } from './platform.js';

/**
 * SIGINT/SIGTERM are ours from the first line: a signal that arrives while the platform is starting
 * (initdb, migrations) is remembered and acted on as soon as the start is done, so the embedded
 * PostgreSQL, a child process, is never left running behind a killed panel.
 */
let platform: Platform | null = null;
let stopRequested: string | null = null;
let stopping = false;

async function stop(signal: string): Promise<void> {
  if (!platform) {
    stopRequested ??= signal;
    logger.info({ signal }, 'stop requested while starting; stopping once the start is done');
    setTimeout(() => process.exit(1), 120_000).unref(); // a start that never ends
    return;
  }
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
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));

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
  platform = await startPlatform(config);
  if (stopRequested) return stop(stopRequested);
  const { firstAdmin } = platform;
  const agent = platform.agent();
  const lines = [
    '',
    `  Panel:    ${platform.url}   (web page)`,
    `  REST API: ${platform.url}/api/v1   (docs: ${platform.url}/docs)`,
    `  GraphQL:  ${platform.url}/graphql`,
    `  Health:   ${platform.url}/health`,
    `  Database: ${config.databaseUrl ? 'DATABASE_URL' : `embedded PostgreSQL in ${config.dataDir}/postgres`}`,
    `  Node:     ${agent ? localNodeLine(agent.port, config) : 'no local agent (LOCAL_AGENT=false)'}`,
    '',
    firstAdmin.password
      ? `  Sign in as ${firstAdmin.email} with password ${firstAdmin.password}  (shown once; change it with PATCH /api/v1/users/me)`
      : `  Sign in as ${firstAdmin.email}${firstAdmin.created ? ' with ADMIN_PASSWORD' : ' (administrator created at first start)'}`,
    `  e.g. curl -X POST ${platform.url}/api/v1/auth/signin -H 'Content-Type: application/json' -d '{"email":"${firstAdmin.email}","password":"…"}'`,
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');
  logger.info({ url: platform.url }, 'panel is listening');
}

/** Where users reach the local node (its host is PANEL_URL's, else localhost), and how to change it. */
function localNodeLine(port: number, config: { panelUrl?: string; sftpPort: number }): string {
  const host = config.panelUrl ? new URL(config.panelUrl).hostname : 'localhost';
  const where = `local agent, console ws://${host}:${port}/console, SFTP ${host}:${config.sftpPort}`;
  // an address only this machine reaches (or none: 0.0.0.0 is where one listens, not where one goes)
  const local = /^(localhost|127(\.\d+){3}|\[::1?\]|0\.0\.0\.0)$/i.test(host);
  return local ? `${where}\n            (reachable from this machine only: set PANEL_URL to its public address for other users)` : where;
}

main().catch((err) => {
  logger.fatal({ err }, 'the platform could not start');
  process.exit(1);
});
