import { sleep, until } from '../support/wait';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import jwt from 'jsonwebtoken';
import { ConsoleClient, type ConsoleMessage } from '../support/console-client';
import {
  deriveConsoleKey,
  deriveNodeKey,
  generateNodeToken,
  NonceCache,
  parseAuthHeader,
  signRequest,
  verifyRequest,
  type NodeStats,
  type SftpGrant,
  type ServerSpec,
  type ServerStateEvent,
  type ServerStatus,
} from '../../src/shared/node-protocol';
import { startAgent, type AgentOptions, type AgentTuning, type RunningAgent } from '../../src/agent';
import { BUILTIN_BLUEPRINTS, mergeVariables } from '../../src/blueprints/builtin';

export { sleep };

/** `until` (test/support/wait.ts) with the agent tests' argument order. */
export function waitFor<T>(fn: () => T | Promise<T>, what: string, timeoutMs = 10000, everyMs = 25): Promise<NonNullable<T>> {
  return until(fn, timeoutMs, what, everyMs);
}

export function tmpDir(prefix = 'hp-agent-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** A tiny real panel: serves the server list, records signed events / heartbeats. */
export class FakePanel {
  events: ServerStateEvent[] = [];
  heartbeats: NodeStats[] = [];
  /** the SFTP server the agent reported in its last heartbeat */
  sftp: { port: number; fingerprint: string } | null = null;
  /** SFTP logins the panel accepts: `username\0password` → the grant */
  sftpGrants = new Map<string, SftpGrant>();
  badSignatures = 0;
  servers: Array<{ spec: ServerSpec; status: ServerStatus }> = [];
  down = false;
  private server: http.Server;
  private nonces = new NonceCache();
  url = '';

  constructor(
    readonly nodeId: string,
    readonly nodeKey: Buffer,
  ) {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        if (this.down) {
          res.writeHead(503).end();
          return;
        }
        const auth = parseAuthHeader(req.headers.authorization);
        if (!auth || auth.nodeId !== this.nodeId || !verifyRequest(auth, this.nodeKey, req.method!, req.url!, raw, this.nonces)) {
          this.badSignatures++;
          res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"code":"UNAUTHORIZED","message":"bad","details":{}}}');
          return;
        }
        const body = raw.length ? JSON.parse(raw.toString()) : null;
        if (req.method === 'GET' && req.url === '/api/agent/v1/servers') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: this.servers }));
        } else if (req.method === 'POST' && req.url === '/api/agent/v1/events') {
          this.events.push(...(body.events as ServerStateEvent[]));
          res.writeHead(204).end();
        } else if (req.method === 'POST' && req.url === '/api/agent/v1/heartbeat') {
          this.heartbeats.push(body.stats as NodeStats);
          this.sftp = body.sftp ?? null;
          res.writeHead(204).end();
        } else if (req.method === 'POST' && req.url === '/api/agent/v1/sftp/login') {
          const grant = this.sftpGrants.get(`${body.username}\u0000${body.password}`);
          if (grant) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: grant }));
          else res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"code":"UNAUTHORIZED","message":"no","details":{}}}');
        } else res.writeHead(404).end();
      });
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  eventsFor(id: string): ServerStateEvent[] {
    return this.events.filter((e) => e.serverId === id);
  }

  statusesFor(id: string): ServerStatus[] {
    return this.eventsFor(id).map((e) => e.status);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

export interface Harness {
  nodeId: string;
  nodeToken: string;
  nodeKey: Buffer;
  consoleKey: Buffer;
  dataDir: string;
  panel: FakePanel;
  agent: RunningAgent;
  base: string;
  opts: AgentOptions;
  request<T = any>(method: string, p: string, body?: unknown, extraHeaders?: Record<string, string>): Promise<{ status: number; body: T }>;
  token(srv: string, opts?: { perms?: string[]; expiresIn?: number; node?: string; key?: Buffer; sub?: string }): string;
  console(srv: string, opts?: { perms?: string[]; expiresIn?: number; auth?: boolean }): Promise<ConsoleClient>;
  restartAgent(stopServers?: boolean): Promise<void>;
  /** Closes everything; returns the pids that were still running under the data dir (should be none). */
  close(): Promise<number[]>;
}

export async function startHarness(tuning: AgentTuning = {}, extra: Partial<AgentOptions> = {}): Promise<Harness> {
  const nodeId = 'node-' + Math.random().toString(36).slice(2, 10);
  const nodeToken = generateNodeToken();
  const nodeKey = deriveNodeKey(nodeToken);
  const consoleKey = deriveConsoleKey(nodeKey);
  const dataDir = tmpDir();
  const panel = new FakePanel(nodeId, nodeKey);
  await panel.listen();
  const opts: AgentOptions = {
    panelUrl: panel.url,
    nodeId,
    nodeToken,
    port: 0,
    sftpPort: 0,
    host: '127.0.0.1',
    dataDir,
    stopGraceSeconds: 3,
    heartbeatSeconds: 1,
    statsIntervalMs: 200,
    tuning: { statsPushIntervalMs: 300, panelRetryMinMs: 50, panelRetryMaxMs: 300, autoRestartDelayMs: 100, ...tuning },
    // tests open many console sockets of one user at once; test/agent/console-caps.test.ts sets the caps it tests
    wsMaxConnectionsPerUser: 10_000,
    wsMaxAnonymousPerAddress: 10_000,
    ...extra,
  };
  const h: Harness = {
    nodeId,
    nodeToken,
    nodeKey,
    consoleKey,
    dataDir,
    panel,
    opts,
    agent: await startAgent(opts),
    base: '',
    async request(method, p, body, extraHeaders = {}) {
      const text = body === undefined ? '' : JSON.stringify(body);
      const headers: Record<string, string> = { authorization: signRequest(nodeId, nodeKey, method, p, text), ...extraHeaders };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(h.base + p, { method, headers, body: body === undefined ? undefined : text });
      const raw = await res.text();
      return { status: res.status, body: raw ? JSON.parse(raw) : undefined };
    },
    token(srv, o = {}) {
      return jwt.sign({ sub: o.sub ?? 'user-1', srv, node: o.node ?? nodeId, perms: o.perms ?? ['websocket.connect', 'control.console', 'control.start', 'control.stop', 'control.restart'] }, o.key ?? consoleKey, {
        algorithm: 'HS256',
        expiresIn: o.expiresIn ?? 600,
      });
    },
    async console(srv, o = {}) {
      const c = await ConsoleClient.connect(`ws://127.0.0.1:${h.agent.port}/console`);
      if (o.auth !== false) {
        c.send({ type: 'auth', token: h.token(srv, o) });
        await c.next('auth_success');
      }
      return c;
    },
    async restartAgent(stopServers = false) {
      await h.agent.close({ stopServers });
      h.agent = await startAgent(opts);
      h.base = `http://127.0.0.1:${h.agent.port}`;
    },
    async close() {
      await h.agent.close({ stopServers: true }).catch(() => {});
      // nothing may be left running; kill and report stragglers
      const left = killAllUnder(dataDir);
      await panel.close();
      rmSync(dataDir, { recursive: true, force: true });
      return left;
    },
  };
  h.base = `http://127.0.0.1:${h.agent.port}`;
  return h;
}

/** Kills every process whose cwd is inside `dir` (test cleanup). */
export function killAllUnder(dir: string): number[] {
  const killed: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readlinkSync(`/proc/${e}/cwd`).startsWith(dir + '/')) {
        process.kill(Number(e), 'SIGKILL');
        killed.push(Number(e));
      }
    } catch {
      /* gone */
    }
  }
  return killed;
}

export function specFor(key: string, id: string, overrides: Partial<ServerSpec> = {}, vars: Record<string, string> = {}): ServerSpec {
  const bp = BUILTIN_BLUEPRINTS.find((b) => b.key === key);
  if (!bp) throw new Error('no blueprint ' + key);
  return {
    id,
    name: `${key} ${id}`,
    startup: bp.startup,
    stop: bp.stop,
    ready: bp.ready,
    install: bp.install,
    variables: mergeVariables(bp, vars),
    memory: bp.defaults.memory,
    cpu: bp.defaults.cpu,
    disk: bp.defaults.disk,
    autoRestart: false,
    ...overrides,
  };
}

export const demoSpec = (id: string, overrides: Partial<ServerSpec> = {}, vars: Record<string, string> = {}): ServerSpec => specFor('demo-game', id, overrides, vars);

export function newId(): string {
  return randomUUID();
}

export async function getState(h: Harness, id: string): Promise<any> {
  const r = await h.request('GET', `/api/servers/${id}`);
  return r.body?.data;
}

export async function waitStatus(h: Harness, id: string, status: ServerStatus, timeoutMs = 10000): Promise<any> {
  return waitFor(
    async () => {
      const s = await getState(h, id);
      return s?.status === status ? s : null;
    },
    `server ${id} to be ${status}`,
    timeoutMs,
    50,
  );
}

/** Creates a server and waits for the install to finish (offline). */
export async function createServer(h: Harness, spec: ServerSpec): Promise<void> {
  const r = await h.request('PUT', `/api/servers/${spec.id}`, spec);
  if (r.status !== 200) throw new Error(`PUT failed: ${r.status} ${JSON.stringify(r.body)}`);
  await waitStatus(h, spec.id, 'offline', 20000);
}

export async function power(h: Harness, id: string, action: string): Promise<{ status: number; body: any }> {
  return h.request('POST', `/api/servers/${id}/power`, { action });
}

export async function startRunning(h: Harness, id: string): Promise<void> {
  const r = await power(h, id, 'start');
  if (r.status !== 200) throw new Error(`start failed: ${r.status} ${JSON.stringify(r.body)}`);
  await waitStatus(h, id, 'running', 15000);
}

export async function logs(h: Harness, id: string): Promise<string[]> {
  return (await h.request('GET', `/api/servers/${id}/logs`)).body.data.lines;
}

export { ConsoleClient, type ConsoleMessage as Msg };
