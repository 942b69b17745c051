import { SendBudget } from '../shared/send-budget';
import { promises as fsp, mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { deriveConsoleKey, deriveNodeKey, NonceCache } from '../shared/node-protocol';
import { childLogger } from '../logger';
import { makeTraversable } from '../shared/traversable';
import { agentPaths, assetsDir, type AgentPaths } from './paths';
import { sharedCgroups, ServerCgroups, enforcedLimits } from './environment/cgroup';
import { canIsolate, isolationWarning } from './environment/isolation';
import { makeServerMountPoints, privateTmpAvailable } from './environment/sandbox';
import { ServerManager } from './server/manager';
import type { ServerRuntimeOptions } from './server/server';
import { PanelClient } from './panel-client';
import { PanelSync } from './panel-sync';
import { SystemStats } from './system';
import { createApiHandler } from './http/api';
import { Revocations } from './http/revocations';
import { ServerFiles } from './filesystem/server-files';
import { applyConfigFiles } from './config-files/apply';
import { EditThreads } from './config-files/editor';
import { Disposers } from '../shared/disposers';
import { FailureCounter } from './http/failures';
import { FileWorkers, installWorker } from './filesystem/workers';
import { ConsoleGateway } from './http/console';
import { startSftp, type SftpInfo } from './sftp';
import { HANG_UP_REASONS } from './sftp/server';
import { Backups } from './backups';
import { BackupStore } from './backups/store';

const log = childLogger('agent');

export interface AgentOptions {
  panelUrl: string;
  nodeId: string;
  nodeToken: string;
  port: number;
  host?: string;
  dataDir: string;
  stopGraceSeconds?: number;
  /** console sockets per user (WS_MAX_CONNECTIONS_PER_USER; default 20) */
  wsMaxConnectionsPerUser?: number;
  /** console sockets per address before they authenticate (WS_MAX_ANONYMOUS_PER_ADDRESS; default 10) */
  wsMaxAnonymousPerAddress?: number;
  /** the most a file opened in the editor may hold (FILE_EDIT_MAX_BYTES; default 4 MiB) */
  fileEditMaxBytes?: number;
  /** processes (and threads) per server, its cgroup's pids.max (default 512) */
  serverPidsMax?: number;
  /** run servers as the agent's own user when it is not root (default false: refused) */
  allowUnisolatedServers?: boolean;
  /** PEM contents (not paths) of the certificate and key; the console then is wss:// */
  tls?: { cert: string; key: string };
  heartbeatSeconds?: number;
  /** SFTP port (SFTP_PORT, 2022; 0: any free port); null: no SFTP server */
  sftpPort?: number | null;
  /** resource poll interval (memory limit, cpu %), default 1000 ms */
  statsIntervalMs?: number;
  /** advanced / tests */
  tuning?: AgentTuning;
}

/** Knobs mostly useful for tests; defaults follow the contract. */
export interface AgentTuning {
  consoleAuthTimeoutMs?: number; // 10000
  consoleMaxBufferedBytes?: number; // 4 MiB
  /** what all console sockets may hold unsent together (each at most its share); default 64 MiB */
  consoleSendBudgetBytes?: number;
  consoleInboundPerSecond?: number; // 20
  consoleMaxPayload?: number; // 64 KiB
  tokenExpiringLeadSeconds?: number; // 60
  statsPushIntervalMs?: number; // 2000
  diskCheckIntervalMs?: number; // 10000
  crashLoopWindowMs?: number; // 60000
  autoRestartDelayMs?: number; // 1000
  installTimeoutMs?: number; // 15 min
  maxLineLength?: number; // 4096
  /** lines a second one server's output may put on its console (CONSOLE_MAX_LINES_PER_SECOND) */
  consoleMaxLinesPerSecond?: number; // 2000
  historyLines?: number; // 150
  panelRetryMinMs?: number; // 250
  panelRetryMaxMs?: number; // 15000
  sftpIdleMs?: number; // 15 min
  sftpMaxPerAddress?: number; // 10
  /** from a connection's first byte to its login (default 30 s) */
  sftpLoginTimeoutMs?: number; // 30000
  /** how long a request's body may take to arrive; a streamed file write may stall this long */
  bodyTimeoutMs?: number; // 60000
  /** cgroup filesystem root (default /sys/fs/cgroup); `false` disables the cgroup limits */
  cgroupRoot?: string | false;
}

/** A server's console lines per second when not configured (CONSOLE_MAX_LINES_PER_SECOND). */
export const DEFAULT_CONSOLE_MAX_LINES_PER_SECOND = 2000;

/** Processes per server when not configured: plenty for a game server, far from what takes a node down. */
export const DEFAULT_PIDS_MAX = 512;

export interface RunningAgent {
  port: number;
  /** the SFTP server's port and host key fingerprint; null without one */
  sftp: SftpInfo | null;
  close(opts?: { stopServers?: boolean }): Promise<void>;
}

export { enforcedLimits } from './environment/cgroup';
export type { ServerState } from './server/server';

/**
 * What every server user must reach (see environment/isolation.ts): its own directory below
 * `servers/` (0711), and ASSETS_DIR, a copy of the repository's assets/ (the repository itself may sit in a
 * folder only root can enter).
 */
async function prepareSharedPaths(paths: AgentPaths): Promise<void> {
  await fsp.mkdir(paths.assets, { recursive: true, mode: 0o755 });
  await fsp.chmod(paths.assets, 0o755);
  for (const name of await fsp.readdir(assetsDir())) {
    const target = path.join(paths.assets, name);
    await fsp.copyFile(path.join(assetsDir(), name), target);
    await fsp.chmod(target, 0o644);
  }
  await makeTraversable(path.join(paths.servers, 'any-server'));
  // servers reach their own directory below but cannot list the others (nor learn their owners' uids)
  await fsp.chmod(paths.servers, 0o711);
  await makeTraversable(path.join(paths.assets, 'any-file'));
  await fsp.mkdir(paths.run, { recursive: true, mode: 0o711 });
  await fsp.chmod(paths.run, 0o711);
}

/** Starts the node agent: HTTP API + console WebSocket on one port, panel sync, server restore. */
export async function startAgent(opts: AgentOptions): Promise<RunningAgent> {
  const t = opts.tuning ?? {};
  const nodeKey = deriveNodeKey(opts.nodeToken);
  const consoleKey = deriveConsoleKey(nodeKey);
  const paths = agentPaths(opts.dataDir);
  mkdirSync(paths.servers, { recursive: true });
  await prepareSharedPaths(paths);
  if (canIsolate() && privateTmpAvailable()) makeServerMountPoints();

  const cgroups =
    t.cgroupRoot === false ? new ServerCgroups('/nonexistent-cgroup-root') : t.cgroupRoot ? new ServerCgroups(t.cgroupRoot) : sharedCgroups();
  const runtime: ServerRuntimeOptions = {
    paths,
    cgroups,
    pidsMax: opts.serverPidsMax ?? DEFAULT_PIDS_MAX,
    stopGraceSeconds: opts.stopGraceSeconds ?? 30,
    allowUnisolated: opts.allowUnisolatedServers ?? false,
    statsIntervalMs: opts.statsIntervalMs ?? 1000,
    statsPushIntervalMs: t.statsPushIntervalMs ?? 2000,
    diskCheckIntervalMs: t.diskCheckIntervalMs ?? 10000,
    crashLoopWindowMs: t.crashLoopWindowMs ?? 60000,
    autoRestartDelayMs: t.autoRestartDelayMs ?? 1000,
    installTimeoutMs: t.installTimeoutMs ?? 15 * 60 * 1000,
    maxLineLength: t.maxLineLength ?? 4096,
    consoleMaxLinesPerSecond: t.consoleMaxLinesPerSecond ?? DEFAULT_CONSOLE_MAX_LINES_PER_SECOND,
    historyLines: t.historyLines ?? 150,
  };

  const panel = new PanelClient({
    panelUrl: opts.panelUrl,
    nodeId: opts.nodeId,
    nodeKey,
    minBackoffMs: t.panelRetryMinMs,
    maxBackoffMs: t.panelRetryMaxMs,
    // the events not delivered yet survive the agent's death (src/agent/panel-client.ts)
    queueFile: path.join(paths.root, 'panel-queue.jsonl'),
    // sent once the backups a dead agent left are reported (below): each report is on disk before
    // its marker goes, and reaches the panel after it
    sendAtOnce: false,
  });
  // what the agent opens, closed once in reverse by close() or by a start that fails (src/shared/disposers.ts)
  const disposers = new Disposers((name, err) => log.warn({ err: (err as Error)?.message ?? String(err), resource: name }, 'could not close a resource cleanly'));
  disposers.add('stop message', () => log.info('node agent stopped'));
  disposers.add('panel client', async () => {
    await panel.drain(2000);
    panel.close();
  });
  let stopServers = true;
  const manager = new ServerManager(runtime, (e) => panel.enqueue(e));
  disposers.add('servers', () => manager.shutdown(stopServers));
  const workerScript = installWorker(paths.lib);
  workerScript.catch((err: Error) => log.warn({ err: err.message }, 'the file manager\'s worker could not be installed: file requests will fail'));
  const fileWorkers = new FileWorkers(paths.run, workerScript);
  disposers.add('file workers', () => fileWorkers.close());
  const serverFiles = new ServerFiles(manager, fileWorkers);
  const editThreads = new EditThreads();
  disposers.add('configuration file threads', () => editThreads.close());
  runtime.beforeStart = (server) => applyConfigFiles(serverFiles, editThreads, server);
  const backupStore = new BackupStore(path.join(paths.root, 'backups'));
  runtime.afterRemove = (serverId) => backupStore.removeServer(serverId);
  const system = new SystemStats(paths.root);
  const unisolated = isolationWarning(runtime.allowUnisolated);
  if (unisolated) log.warn(unisolated);
  log.info(enforcedLimits(cgroups), 'resource limits of servers on this node');

  // --- learn the servers (panel first, state.json as fallback) and restore them
  const sync = new PanelSync(panel, manager, { minMs: t.panelRetryMinMs ?? 1000, maxMs: t.panelRetryMaxMs ?? 15000 });
  disposers.add('server list sync', () => sync.close());
  await sync.boot();
  let closed = false;

  // --- heartbeat
  const collectStats = () => {
    const servers = manager.list();
    return system.collect({ total: servers.length, running: servers.filter((s) => s.status === 'running').length });
  };
  let sftpInfo: SftpInfo | null = null;
  const beat = async (): Promise<void> => {
    try {
      sync.heartbeatAnswered(await panel.heartbeat(await collectStats(), sftpInfo));
    } catch (e) {
      sync.heartbeatFailed();
      log.debug({ err: (e as Error).message }, 'heartbeat failed');
    }
  };
  void beat();
  const heartbeatTimer = setInterval(() => void beat(), (opts.heartbeatSeconds ?? 10) * 1000);
  disposers.add('heartbeat', () => {
    closed = true;
    clearInterval(heartbeatTimer);
  });

  // --- HTTP(S) server: API + /console
  const revocations = new Revocations(path.join(paths.root, 'revocations.json'));
  const sftp =
    opts.sftpPort === null
      ? null
      : await startSftp({ port: opts.sftpPort ?? 2022, host: opts.host, idleMs: t.sftpIdleMs, maxPerAddress: t.sftpMaxPerAddress, loginTimeoutMs: t.sftpLoginTimeoutMs }, paths, serverFiles, panel, disposers).catch(async (err) => {
          await disposers.disposeAll();
          throw err;
        });
  sftpInfo = sftp?.info ?? null;
  if (sftpInfo) void beat();
  const files = { files: serverFiles, editMaxBytes: opts.fileEditMaxBytes ?? 4 * 1024 * 1024 };
  const backups = new Backups(backupStore, serverFiles, (e) => panel.enqueue(e));
  await backups.recover();
  panel.start();
  const api = createApiHandler({
    nodeId: opts.nodeId,
    nodeKey,
    nonces: new NonceCache(),
    manager,
    system,
    files,
    backups,
    failures: new FailureCounter(),
    revoke: (serverId, userId, at) => gateway.revoke(serverId, userId, at) + (sftp?.server.revoke(userId, serverId, HANG_UP_REASONS.accessChanged, at) ?? 0),
    revokeUser: (userId, at, reason) =>
      gateway.revoke(null, userId, at) + (sftp?.server.revoke(userId, undefined, reason === 'password' ? HANG_UP_REASONS.passwordChanged : HANG_UP_REASONS.accountChanged, at) ?? 0),
    bodyTimeoutMs: t.bodyTimeoutMs ?? 60_000,
  });
  const gateway = new ConsoleGateway({
    revocations,
    maxPerUser: opts.wsMaxConnectionsPerUser ?? 20,
    maxAnonymousPerAddress: opts.wsMaxAnonymousPerAddress ?? 10,
    report: (r) => panel.enqueue(r),
    nodeId: opts.nodeId,
    consoleKey,
    manager,
    authTimeoutMs: t.consoleAuthTimeoutMs ?? 10000,
    budget: new SendBudget(t.consoleMaxBufferedBytes ?? 4 * 1024 * 1024, t.consoleSendBudgetBytes ?? 64 * 1024 * 1024),
    inboundPerSecond: t.consoleInboundPerSecond ?? 20,
    maxPayload: t.consoleMaxPayload ?? 64 * 1024,
    expiringLeadSeconds: t.tokenExpiringLeadSeconds ?? 60,
  });
  const server = opts.tls ? https.createServer({ cert: opts.tls.cert, key: opts.tls.key }, api) : http.createServer(api);
  // a body's time is the API handler's (src/shared/body-time.ts): Node's would cut off long uploads
  server.requestTimeout = 0;
  server.headersTimeout = 15000;
  server.on('upgrade', (req, socket, head) => gateway.handleUpgrade(req, socket, head));
  server.on('clientError', (_e, socket) => socket.destroy());
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port, opts.host ?? '0.0.0.0', () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    gateway.close();
    await disposers.disposeAll();
    throw e;
  }
  disposers.add('HTTP server', () => {
    const done = new Promise<void>((r) => server.close(() => r()));
    server.closeAllConnections();
    return done;
  });
  // closed before the HTTP server, whose close waits for them: upgraded sockets are not its HTTP connections
  disposers.add('console sockets', () => gateway.close());
  const port = (server.address() as AddressInfo).port;
  log.info({ port, tls: !!opts.tls, nodeId: opts.nodeId }, 'node agent listening (API + /console)');

  return {
    port,
    sftp: sftp?.info ?? null,
    async close(closeOpts?: { stopServers?: boolean }): Promise<void> {
      if (!closed) stopServers = closeOpts?.stopServers ?? true;
      await disposers.disposeAll();
    },
  };
}

/** Reads TLS files given as paths (for the CLI). */
export function readTlsFiles(certPath: string, keyPath: string): { cert: string; key: string } {
  return { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
}
