import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseAuthHeader, verifyRequest, type NonceCache } from '../../shared/node-protocol';
import { childLogger } from '../../logger';
import { AgentError, notFound } from '../errors';
import { SERVER_ID_RE } from '../paths';
import type { ServerManager } from '../server/manager';
import type { SystemStats } from '../system';
import { commandSchema, parseBody, parseSpec, powerSchema } from './validation';

const log = childLogger('agent');
export const MAX_BODY_BYTES = 1024 * 1024;

export interface ApiContext {
  nodeId: string;
  nodeKey: Buffer;
  nonces: NonceCache;
  manager: ServerManager;
  system: SystemStats;
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
  let raw: Buffer;
  try {
    raw = await readBody(req);
  } catch (e) {
    res.setHeader('connection', 'close');
    throw e;
  }
  const auth = parseAuthHeader(req.headers.authorization);
  if (!auth || auth.nodeId !== ctx.nodeId || !verifyRequest(auth, ctx.nodeKey, method, rawUrl, raw, ctx.nonces)) throw unauthorized();

  const pathname = new URL(rawUrl, 'http://agent').pathname.replace(/\/+$/, '') || '/';
  const m = /^\/api\/servers\/([^/]+)(?:\/([a-z]+))?$/.exec(pathname);

  if (pathname === '/api/system' && method === 'GET') {
    const servers = ctx.manager.list();
    const stats = await ctx.system.collect({ total: servers.length, running: servers.filter((s) => s.status === 'running').length });
    return send(res, 200, { data: stats });
  }
  if (!m) throw notFound('Unknown route');
  const id = decodeURIComponent(m[1]!);
  const sub = m[2] ?? '';
  const validId = SERVER_ID_RE.test(id);

  if (!sub && method === 'PUT') {
    if (!validId) throw new AgentError(422, 'VALIDATION_ERROR', 'Invalid server id', { fields: { id: 'must be 1-64 letters, digits, - or _' } });
    const spec = parseSpec(id, parseJson(raw, req));
    const server = await ctx.manager.upsert(spec);
    return send(res, 200, { data: server.state() });
  }
  if (!validId) throw notFound('Server not found');

  if (!sub && method === 'GET') return send(res, 200, { data: ctx.manager.get(id).state() });
  if (!sub && method === 'DELETE') {
    await ctx.manager.remove(id);
    return send(res, 204);
  }
  if (sub === 'power' && method === 'POST') {
    const server = ctx.manager.get(id);
    const { action } = parseBody(powerSchema, parseJson(raw, req));
    await server.power(action);
    return send(res, 200, { data: server.state() });
  }
  if (sub === 'commands' && method === 'POST') {
    const server = ctx.manager.get(id);
    const { command } = parseBody(commandSchema, parseJson(raw, req));
    server.sendCommand(command);
    return send(res, 204);
  }
  if (sub === 'reinstall' && method === 'POST') {
    const server = await ctx.manager.reinstall(id);
    return send(res, 200, { data: server.state() });
  }
  if (sub === 'logs' && method === 'GET') return send(res, 200, { data: { lines: ctx.manager.get(id).buffer.lines() } });
  throw notFound('Unknown route');
}
