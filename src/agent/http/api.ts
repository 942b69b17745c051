import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_CLOCK_SKEW_SECONDS, parseAuthHeader, STREAMED_BODY, verifyRequest, type NonceCache } from '../../shared/node-protocol';
import { FailureCounter } from './failures';
import { limitBodyTime } from '../../shared/body-time';
import { FILE_ROUTE, handleFiles, isStreamedWrite, type FilesContext } from './files';
import { BACKUP_ROUTE, handleBackups } from './backups';
import type { Backups } from '../backups';
import { childLogger } from '../../logger';
import { AgentError, notFound } from '../errors';
import { SERVER_ID_RE } from '../paths';
import type { ServerManager } from '../server/manager';
import type { SystemStats } from '../system';
import { commandSchema, parseBody, parseSpec, powerSchema, revokeSchema, userRevokeSchema, type UserRevokeReason } from './validation';

const log = childLogger('agent');
export const MAX_BODY_BYTES = 1024 * 1024;

export interface ApiContext {
  nodeId: string;
  nodeKey: Buffer;
  nonces: NonceCache;
  manager: ServerManager;
  system: SystemStats;
  files: FilesContext;
  backups: Backups;
  /** failed signatures per client address (past the limit, requests are refused unread) */
  failures: FailureCounter;
  /** Closes `userId`'s console sockets to the server; returns how many. */
  revoke(serverId: string, userId: string, at?: number): number;
  /**
   * Takes back everything the user holds on the node as of `at` (`account`: an administrator deleted
   * their account, set its password or took its administrator role; `password`: they changed their
   * password): console sockets and tokens on every server, and SFTP sessions; returns how many closed.
   */
  revokeUser(userId: string, at: number | undefined, reason: UserRevokeReason): number;
  /** how long a request's body may take to arrive (a streamed write's: how long it may stall); src/shared/body-time.ts */
  bodyTimeoutMs: number;
}

function send(res: ServerResponse, status: number, body?: unknown): void {
  if (res.headersSent) return;
  if (body === undefined) {
    res.writeHead(status);
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

export function sendError(res: ServerResponse, err: AgentError): void {
  send(res, err.status, { error: { code: err.code, message: err.message, details: err.details } });
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_BODY_BYTES) return reject(new AgentError(400, 'BAD_REQUEST', 'Request body is larger than 1 MiB'));
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new AgentError(400, 'BAD_REQUEST', 'Request body is larger than 1 MiB'));
        req.removeAllListeners('data');
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseJson(raw: Buffer, req: IncomingMessage): unknown {
  if (raw.length === 0) return {};
  const ct = String(req.headers['content-type'] ?? '');
  if (ct && !/^application\/json\b/i.test(ct)) throw new AgentError(400, 'BAD_REQUEST', 'Content-Type must be application/json');
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new AgentError(400, 'BAD_REQUEST', 'Malformed JSON body');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new AgentError(400, 'BAD_REQUEST', 'Body must be a JSON object');
  return body;
}

const unauthorized = (): AgentError => new AgentError(401, 'UNAUTHORIZED', 'Missing or invalid request signature');

/** The signed agent HTTP API (everything under /api). */
export function createApiHandler(ctx: ApiContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(ctx, req, res).catch((e: unknown) => {
      if (e instanceof AgentError) return sendError(res, e);
      log.error({ err: e instanceof Error ? e.stack : String(e), url: req.url }, 'agent API request failed');
      sendError(res, new AgentError(500, 'INTERNAL_ERROR', 'Internal error'));
    });
  };
}

async function handle(ctx: ApiContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = (req.method ?? 'GET').toUpperCase();
  const rawUrl = req.url ?? '/';
  const url = new URL(rawUrl, 'http://agent');
  const pathname = url.pathname.replace(/\/+$/, '') || '/';
  const streamed = isStreamedWrite(method, pathname);
  // a body too late is dropped with its connection (the agent's answer to any unreadable request)
  limitBodyTime(req, res, { ms: ctx.bodyTimeoutMs, streamed, late: () => req.socket.destroy() });
  const address = req.socket.remoteAddress ?? 'unknown';
  const refusedFor = ctx.failures.refusedFor(address);
  if (refusedFor) {
    res.setHeader('connection', 'close');
    res.setHeader('retry-after', String(refusedFor));
    throw new AgentError(429, 'RATE_LIMITED', `Too many failed signatures from this address; try again in ${refusedFor} s.`);
  }
  // the header first: a body is read only for a fresh signature of this node
  const auth = parseAuthHeader(req.headers.authorization);
  const fresh = auth !== null && auth.nodeId === ctx.nodeId && Math.abs(Math.floor(Date.now() / 1000) - auth.ts) <= MAX_CLOCK_SKEW_SECONDS;
  let raw: Buffer = Buffer.alloc(0);
  try {
    if (fresh) raw = streamed ? Buffer.from(STREAMED_BODY) : await readBody(req);
  } catch (e) {
    res.setHeader('connection', 'close');
    throw e;
  }
  if (!fresh || !verifyRequest(auth, ctx.nodeKey, method, rawUrl, raw, ctx.nonces)) {
    ctx.failures.failed(address);
    res.setHeader('connection', 'close');
    throw unauthorized();
  }
  if (FILE_ROUTE.test(pathname)) return handleFiles(ctx.files, req, res, url, streamed ? null : parseJson(raw, req));
  if (BACKUP_ROUTE.test(pathname)) {
    const out = await handleBackups({ manager: ctx.manager, backups: ctx.backups }, method, pathname, () => parseJson(raw, req), res);
    if (out === 'streamed') return;
    return out.data === undefined ? send(res, 204) : send(res, 200, { data: out.data });
  }

  const route = ROUTES.find((r) => r.method === method && r.path.test(pathname));
  if (!route) throw notFound('Unknown route');
  const id = decodeURIComponent(route.path.exec(pathname)![1] ?? '');
  // a new server's id is validated as input (422); any other unknown id cannot exist (404)
  if (!NODE_WIDE.has(route.path) && !SERVER_ID_RE.test(id)) {
    if (route.method === 'PUT') throw new AgentError(422, 'VALIDATION_ERROR', 'Invalid server id', { fields: { id: 'must be 1-64 letters, digits, - or _' } });
    throw notFound('Server not found');
  }
  const answer = await route.handle(ctx, id, () => parseJson(raw, req));
  return answer === undefined ? send(res, 204) : send(res, 200, { data: answer });
}

interface Route {
  method: string;
  path: RegExp;
  /** the answer's `data` (200), or undefined (204) */
  handle(ctx: ApiContext, id: string, body: () => unknown): Promise<unknown> | unknown;
}

const SYSTEM = /^\/api\/system$/;
const USER_REVOKE = /^\/api\/users\/revoke$/;
/** Routes of the whole node (no server id in their path). */
const NODE_WIDE = new Set([SYSTEM, USER_REVOKE]);
const server = (sub = '') => new RegExp(`^/api/servers/([^/]+)${sub ? `/${sub}` : ''}$`);

/** The agent's routes (the file routes are src/agent/http/files.ts's). */
const ROUTES: Route[] = [
  {
    method: 'GET',
    path: SYSTEM,
    handle: (ctx) => {
      const servers = ctx.manager.list();
      return ctx.system.collect({ total: servers.length, running: servers.filter((s) => s.status === 'running').length });
    },
  },
  { method: 'PUT', path: server(), handle: async (ctx, id, body) => (await ctx.manager.upsert(parseSpec(id, body()))).state() },
  { method: 'GET', path: server(), handle: (ctx, id) => ctx.manager.get(id).state() },
  { method: 'DELETE', path: server(), handle: (ctx, id) => ctx.manager.remove(id) },
  {
    method: 'POST',
    path: server('power'),
    handle: async (ctx, id, body) => {
      const s = ctx.manager.get(id);
      await s.power(parseBody(powerSchema, body()).action);
      return s.state();
    },
  },
  {
    method: 'POST',
    path: server('commands'),
    handle: (ctx, id, body) => {
      const s = ctx.manager.get(id);
      s.sendCommand(parseBody(commandSchema, body()).command);
    },
  },
  { method: 'POST', path: server('reinstall'), handle: async (ctx, id) => (await ctx.manager.reinstall(id)).state() },
  {
    method: 'POST',
    path: server('revoke'),
    handle: (ctx, id, body) => {
      const { userId, at } = parseBody(revokeSchema, body());
      return { closed: ctx.revoke(id, userId, at) };
    },
  },
  {
    method: 'POST',
    path: USER_REVOKE,
    handle: (ctx, _id, body) => {
      const { userId, at, reason } = parseBody(userRevokeSchema, body());
      return { closed: ctx.revokeUser(userId, at, reason ?? 'account') };
    },
  },
  { method: 'GET', path: server('logs'), handle: (ctx, id) => ({ lines: ctx.manager.get(id).buffer.lines() }) },
];
