import { promises as fsp, mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { deriveConsoleKey, deriveNodeKey, NonceCache } from '../shared/node-protocol';
import { childLogger } from '../logger';
import { makeTraversable } from '../shared/traversable';
import { agentPaths, assetsDir, type AgentPaths } from './paths';
import { sharedCpuLimiter, CpuLimiter, enforcedLimits } from './environment/cgroup';
import { ServerManager } from './server/manager';
import type { ServerRuntimeOptions } from './server/server';
import { PanelClient } from './panel-client';
import { SystemStats } from './system';
import { createApiHandler } from './http/api';
import { ConsoleGateway } from './http/console';

const log = childLogger('agent');

export interface AgentOptions {
  panelUrl: string;
  nodeId: string;
  nodeToken: string;
  port: number;
  host?: string;
  dataDir: string;
  stopGraceSeconds?: number;
  /** PEM contents (not paths) of the certificate and key; the console then is wss:// */
  tls?: { cert: string; key: string };
  heartbeatSeconds?: number;
  /** resource poll interval (memory limit, cpu %), default 1000 ms */
  statsIntervalMs?: number;
  /** advanced / tests */
  tuning?: AgentTuning;
}

/** Knobs mostly useful for tests; defaults follow the contract. */
export interface AgentTuning {
  consoleAuthTimeoutMs?: number; // 10000
  consoleMaxBufferedBytes?: number; // 4 MiB
  consoleInboundPerSecond?: number; // 20
  consoleMaxPayload?: number; // 64 KiB
  tokenExpiringLeadSeconds?: number; // 60
  statsPushIntervalMs?: number; // 2000
  diskCheckIntervalMs?: number; // 10000
  crashLoopWindowMs?: number; // 60000
  autoRestartDelayMs?: number; // 1000
  installTimeoutMs?: number; // 15 min
  maxLineLength?: number; // 4096
  floodLines?: number; // 2000
  floodWindowMs?: number; // 100
  historyLines?: number; // 150
  panelRetryMinMs?: number; // 250
  panelRetryMaxMs?: number; // 15000
  /** cgroup filesystem root (default /sys/fs/cgroup); `false` disables cpu limits */
  cgroupRoot?: string | false;
}

export interface RunningAgent {
  port: number;
  close(opts?: { stopServers?: boolean }): Promise<void>;
}

export { enforcedLimits } from './environment/cgroup';
export type { ServerState } from './server/server';

/**
 * What every server user must reach (see environment/isolation.ts): its own directory below
 * `servers/`, and ASSETS_DIR, a copy of the repository's assets/ (the repository itself may sit in a
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
  await makeTraversable(path.join(paths.assets, 'any-file'));
}

/** Starts the node agent: HTTP API + console WebSocket on one port, panel sync, server restore. */
export async function startAgent(opts: AgentOptions): Promise<RunningAgent> {
  const t = opts.tuning ?? {};
  const nodeKey = deriveNodeKey(opts.nodeToken);
  const consoleKey = deriveConsoleKey(nodeKey);
  const paths = agentPaths(opts.dataDir);
  mkdirSync(paths.servers, { recursive: true });
  await prepareSharedPaths(paths);

  const cpuLimiter =
    t.cgroupRoot === false ? new CpuLimiter('/nonexistent-cgroup-root') : t.cgroupRoot ? new CpuLimiter(t.cgroupRoot) : sharedCpuLimiter();
  const runtime: ServerRuntimeOptions = {
    paths,
    cpuLimiter,
    stopGraceSeconds: opts.stopGraceSeconds ?? 30,
    statsIntervalMs: opts.statsIntervalMs ?? 1000,
    statsPushIntervalMs: t.statsPushIntervalMs ?? 2000,
    diskCheckIntervalMs: t.diskCheckIntervalMs ?? 10000,
    crashLoopWindowMs: t.crashLoopWindowMs ?? 60000,
    autoRestartDelayMs: t.autoRestartDelayMs ?? 1000,
    installTimeoutMs: t.installTimeoutMs ?? 15 * 60 * 1000,
    maxLineLength: t.maxLineLength ?? 4096,
    floodLines: t.floodLines ?? 2000,
    floodWindowMs: t.floodWindowMs ?? 100,
    historyLines: t.historyLines ?? 150,
  };

  const panel = new PanelClient({
    panelUrl: opts.panelUrl,
    nodeId: opts.nodeId,
    nodeKey,
    minBackoffMs: t.panelRetryMinMs,
    maxBackoffMs: t.panelRetryMaxMs,
  });
  const manager = new ServerManager(runtime, (e) => panel.enqueue(e));
  const system = new SystemStats(paths.root);
  const limits = enforcedLimits(cpuLimiter);
  log.info({ cpu: limits.cpuMechanism }, 'resource limits: memory and disk enforced, cpu ' + (limits.cpuMechanism === 'none' ? 'NOT enforced' : `via ${limits.cpuMechanism}`));

  // --- learn the servers (panel first, state.json as fallback) and restore them
  let panelServers = null;
  try {
    panelServers = await panel.fetchServers();
  } catch (e) {
    log.warn({ err: (e as Error).message }, 'panel unreachable at boot; restoring servers from state.json and retrying');
  }
  await manager.restore(panelServers);

  let closed = false;
  let syncTimer: NodeJS.Timeout | null = null;
  let syncDelay = t.panelRetryMinMs ?? 1000;
  const retrySync = (): void => {
    syncTimer = setTimeout(async () => {
      syncTimer = null;
      if (closed) return;
      try {
        const list = await panel.fetchServers();
        if (closed) return;
        await manager.reconcile(list);
        log.info({ servers: list.length }, 'synchronised server list with the panel');
      } catch {
        syncDelay = Math.min(syncDelay * 2, t.panelRetryMaxMs ?? 15000);
        retrySync();
      }
    }, syncDelay);
  };
  if (!panelServers) retrySync();

  // --- heartbeat
  const collectStats = () => {
    const servers = manager.list();
    return system.collect({ total: servers.length, running: servers.filter((s) => s.status === 'running').length });
  };
  const beat = async (): Promise<void> => {
    try {
      await panel.heartbeat(await collectStats());
    } catch (e) {
      log.debug({ err: (e as Error).message }, 'heartbeat failed');
    }
  };
  void beat();
  const heartbeatTimer = setInterval(() => void beat(), (opts.heartbeatSeconds ?? 10) * 1000);

  // --- HTTP(S) server: API + /console
  const api = createApiHandler({ nodeId: opts.nodeId, nodeKey, nonces: new NonceCache(), manager, system });
  const gateway = new ConsoleGateway({
    nodeId: opts.nodeId,
    consoleKey,
    manager,
    authTimeoutMs: t.consoleAuthTimeoutMs ?? 10000,
    maxBufferedBytes: t.consoleMaxBufferedBytes ?? 4 * 1024 * 1024,
    inboundPerSecond: t.consoleInboundPerSecond ?? 20,
    maxPayload: t.consoleMaxPayload ?? 64 * 1024,
    expiringLeadSeconds: t.tokenExpiringLeadSeconds ?? 60,
  });
  const server = opts.tls ? https.createServer({ cert: opts.tls.cert, key: opts.tls.key }, api) : http.createServer(api);
  server.requestTimeout = 30000;
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
    clearInterval(heartbeatTimer);
    if (syncTimer) clearTimeout(syncTimer);
    panel.close();
    gateway.close();
    await manager.shutdown(true);
    throw e;
  }
  const port = (server.address() as AddressInfo).port;
  log.info({ port, tls: !!opts.tls, nodeId: opts.nodeId }, 'node agent listening (API + /console)');

  return {
    port,
    async close(closeOpts?: { stopServers?: boolean }): Promise<void> {
      if (closed) return;
      closed = true;
      clearInterval(heartbeatTimer);
      if (syncTimer) clearTimeout(syncTimer);
      gateway.close();
      const httpClosed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await manager.shutdown(closeOpts?.stopServers ?? true);
      await panel.drain(2000);
      panel.close();
      await httpClosed;
      log.info('node agent stopped');
    },
  };
}

/** Reads TLS files given as paths (for the CLI). */
export function readTlsFiles(certPath: string, keyPath: string): { cert: string; key: string } {
  return { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
}
