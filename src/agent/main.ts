/**
 * `npm run agent`: the node agent as a standalone process.
 *
 * Environment: PANEL_URL, NODE_ID, NODE_TOKEN (required); AGENT_PORT (5000); AGENT_HOST (0.0.0.0);
 * DATA_DIR (./.data, agent files under <DATA_DIR>/agent/); STOP_GRACE_SECONDS (30);
 * AGENT_TLS_CERT / AGENT_TLS_KEY (PEM file paths, both or neither); HEARTBEAT_SECONDS (10); LOG_LEVEL;
 * ALLOW_UNISOLATED_SERVERS (false: an agent not running as root refuses to install and start servers);
 * SERVER_PIDS_MAX (512: processes and threads per server), WS_MAX_CONNECTIONS_PER_USER (20) and
 * WS_MAX_ANONYMOUS_PER_ADDRESS (10) (console sockets), FILE_EDIT_MAX_BYTES (4194304: the editor's limit), SFTP_PORT (2022),
 * CONSOLE_MAX_LINES_PER_SECOND (2000: a server's console lines a second; the rest is dropped and counted).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { logger } from '../logger';
import { DEFAULT_CONSOLE_MAX_LINES_PER_SECOND, readTlsFiles, startAgent, type AgentOptions } from './index';

export function configFromEnv(env: NodeJS.ProcessEnv): { options?: AgentOptions; errors: string[] } {
  const errors: string[] = [];
  const req = (name: string): string => {
    const v = env[name]?.trim();
    if (!v) errors.push(`${name} is required`);
    return v ?? '';
  };
  const int = (name: string, def: number, min: number, max: number): number => {
    const raw = env[name]?.trim();
    if (!raw) return def;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) errors.push(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
    return n;
  };
  const panelUrl = req('PANEL_URL');
  if (panelUrl) {
    try {
      const u = new URL(panelUrl);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') errors.push('PANEL_URL must be an http:// or https:// URL');
    } catch {
      errors.push(`PANEL_URL is not a valid URL (got "${panelUrl}")`);
    }
  }
  const nodeId = req('NODE_ID');
  const nodeToken = req('NODE_TOKEN');
  if (nodeToken && !nodeToken.startsWith('hpn_')) errors.push('NODE_TOKEN does not look like a node token (expected the hpn_… value from POST /admin/nodes/:id/token)');
  const port = int('AGENT_PORT', 5000, 0, 65535);
  const sftpPort = int('SFTP_PORT', 2022, 0, 65535);
  const stopGraceSeconds = int('STOP_GRACE_SECONDS', 30, 0, 3600);
  const serverPidsMax = int('SERVER_PIDS_MAX', 512, 16, 4194304);
  const wsMaxConnectionsPerUser = int('WS_MAX_CONNECTIONS_PER_USER', 20, 1, 100000);
  const wsMaxAnonymousPerAddress = int('WS_MAX_ANONYMOUS_PER_ADDRESS', 10, 1, 100000);
  const fileEditMaxBytes = int('FILE_EDIT_MAX_BYTES', 4 * 1024 * 1024, 1024, 256 * 1024 * 1024);
  const heartbeatSeconds = int('HEARTBEAT_SECONDS', 10, 1, 3600);
  const consoleMaxLinesPerSecond = int('CONSOLE_MAX_LINES_PER_SECOND', DEFAULT_CONSOLE_MAX_LINES_PER_SECOND, 1, 1_000_000);
  const allowRaw = env.ALLOW_UNISOLATED_SERVERS?.trim().toLowerCase() ?? '';
  if (!['', 'true', 'false', '1', '0', 'yes', 'no'].includes(allowRaw)) errors.push(`ALLOW_UNISOLATED_SERVERS must be true or false (got "${env.ALLOW_UNISOLATED_SERVERS}")`);
  const allowUnisolatedServers = allowRaw === 'true' || allowRaw === '1' || allowRaw === 'yes';
  const dataDir = path.resolve(env.DATA_DIR?.trim() || './.data');
  let tls: AgentOptions['tls'];
  const cert = env.AGENT_TLS_CERT?.trim();
  const key = env.AGENT_TLS_KEY?.trim();
  if (!!cert !== !!key) errors.push('AGENT_TLS_CERT and AGENT_TLS_KEY must be given together');
  else if (cert && key) {
    if (!existsSync(cert)) errors.push(`AGENT_TLS_CERT file not found: ${cert}`);
    if (!existsSync(key)) errors.push(`AGENT_TLS_KEY file not found: ${key}`);
    if (existsSync(cert) && existsSync(key)) tls = readTlsFiles(cert, key);
  }
  if (errors.length) return { errors };
  return {
    errors,
    options: { panelUrl, nodeId, nodeToken, port, sftpPort, host: env.AGENT_HOST?.trim() || undefined, dataDir, stopGraceSeconds, heartbeatSeconds, tls, allowUnisolatedServers, serverPidsMax, wsMaxConnectionsPerUser, wsMaxAnonymousPerAddress, fileEditMaxBytes, tuning: { consoleMaxLinesPerSecond } },
  };
}

async function main(): Promise<void> {
  const { options, errors } = configFromEnv(process.env);
  if (!options) {
    for (const e of errors) process.stderr.write(`agent: ${e}\n`);
    process.stderr.write('agent: see src/agent/main.ts for the configuration variables\n');
    process.exit(2);
  }
  const agent = await startAgent(options);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down the node agent (stopping servers gracefully)');
    agent
      .close({ stopServers: true })
      .then(() => process.exit(0))
      .catch((e: unknown) => {
        logger.error({ err: e instanceof Error ? e.message : String(e) }, 'error during shutdown');
        process.exit(1);
      });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

if (require.main === module) {
  main().catch((e: unknown) => {
    logger.fatal({ err: e instanceof Error ? e.message : String(e) }, 'node agent failed to start');
    process.exit(1);
  });
}
