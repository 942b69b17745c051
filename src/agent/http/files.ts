/**
 * The agent's file routes (under /api/servers/:id/files): each is handed to the server's file worker
 * (src/agent/filesystem), which works as the server's uid. JSON in and out, except the raw bytes of
 * `contents` (read and write) and `download` (streamed, Range honoured). A write's bytes are streamed
 * to the worker without being held: its request is signed over the path and headers, with the body
 * marked as streamed (STREAMED_BODY), since the panel cannot hash bytes it has not seen yet.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { AgentError, notFound } from '../errors';
import { answerError, budgetOf, ServerFiles } from '../filesystem/server-files';
import type { FileRequest, FileResponse } from '../filesystem/protocol';
import { decodeReach } from '../filesystem/reach';
import type { FileWorkers } from '../filesystem/workers';
import type { Server } from '../server/server';
import { discardRest } from '../../shared/discard-body';
import { parseBody } from './validation';

export const FILE_ROUTE = /^\/api\/servers\/([^/]+)\/files(?:\/(contents|download|rename|copy|delete|directory|chmod|search|stat|compress|decompress))?$/;

export interface FilesContext {
  files: ServerFiles;
  /** the most a file opened in the editor may hold (FILE_EDIT_MAX_BYTES) */
  editMaxBytes: number;
}

const pathBody = z.object({ path: z.string().max(8192) });
const schemas = {
  rename: z.object({ from: z.string().max(8192), to: z.string().max(8192) }),
  copy: pathBody,
  directory: pathBody,
  delete: z.object({ paths: z.array(z.string().max(8192)).min(1).max(1000) }),
  chmod: z.object({ path: z.string().max(8192), mode: z.string().regex(/^0?[0-7]{3}$/, 'must be an octal string of permission bits, e.g. 644') }),
  compress: z.object({ paths: z.array(z.string().max(8192)).min(1).max(1000), destination: z.string().max(8192) }),
  decompress: z.object({ path: z.string().max(8192), destination: z.string().max(8192), noReplace: z.boolean().optional() }),
};

/** Whether this request is a streamed write (its body is not read before the signature check). */
export function isStreamedWrite(method: string, pathname: string): boolean {
  return method === 'PUT' && FILE_ROUTE.exec(pathname)?.[2] === 'contents';
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

function fail(r: Extract<FileResponse, { ok: false }>): never {
  throw answerError(r);
}

const int = (v: string | null, def: number, min: number, max: number): number => {
  const n = v === null ? def : Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new AgentError(422, 'VALIDATION_ERROR', 'Invalid page or limit', { fields: { page: `an integer from ${min}` } });
  return n;
};

/** Handles one file route; `json` is the verified JSON body of the non-streamed routes. */
export async function handleFiles(ctx: FilesContext, req: IncomingMessage, res: ServerResponse, url: URL, json: unknown): Promise<void> {
  const m = FILE_ROUTE.exec(url.pathname.replace(/\/+$/, ''))!;
  const server = await ctx.files.open(decodeURIComponent(m[1]!));
  const route = m[2] ?? '';
  const method = (req.method ?? 'GET').toUpperCase();
  const q = (name: string) => url.searchParams.get(name);
  // what the caller may reach (their folder scopes, the deny-list): the worker checks it where paths really lead
  const reach = decodeReach(q('reach'));
  const ask = (r: FileRequest) => ctx.files.ask(server, { ...r, reach });
  const simple = async (r: FileRequest, status = 200, key: 'entry' | 'entries' = 'entry') => {
    const answer = await ctx.files.simple(server, { ...r, reach });
    if (!answer.ok) fail(answer);
    const result = answer.result as Record<string, unknown>;
    sendJson(res, status, key === 'entries' ? { data: result.entries, meta: { total: result.total } } : { data: result.entry ?? null });
  };

  if (route === '' && method === 'GET') return simple({ op: 'list', path: q('path') ?? '/', page: int(q('page'), 1, 1, 1_000_000), limit: int(q('limit'), 500, 1, 1000) }, 200, 'entries');
  if (route === 'stat' && method === 'GET') return simple({ op: 'stat', path: q('path') ?? '/' });
  if (route === 'search' && method === 'GET') return simple({ op: 'search', path: q('path') ?? '/', query: String(q('query') ?? '').slice(0, 255) }, 200, 'entries');
  if (route === 'contents' && method === 'GET') {
    const { res: answer, body } = await ask({ op: 'read', path: q('path') ?? '', maxBytes: ctx.editMaxBytes });
    if (!answer.ok) {
      body.destroy();
      fail(answer);
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'no-store' });
    await pipeline(body, res);
    return;
  }
  if (route === 'contents' && method === 'PUT') {
    const answer = await ctx.files.write(server, q('path') ?? '', req, Number(q('max') ?? Infinity), reach, 0, q('createOnly') === '1');
    if (!answer.ok) {
      discardRest(req);
      fail(answer);
    }
    const result = answer.result as { entry: unknown; created?: boolean };
    return sendJson(res, result.created ? 201 : 200, { data: result.entry, meta: { created: Boolean(result.created) } });
  }
  if (route === 'download' && method === 'GET') return download(ask, q('path') ?? '', req, res);
  if (method !== 'POST') throw notFound('Unknown route');
  if (route === 'rename') return simple({ op: 'rename', ...parseBody(schemas.rename, json) });
  if (route === 'directory') return simple({ op: 'mkdir', path: parseBody(schemas.directory, json).path }, 201);
  if (route === 'chmod') {
    const { path, mode } = parseBody(schemas.chmod, json);
    return simple({ op: 'chmod', path, mode: parseInt(mode, 8) });
  }
  if (route === 'copy') {
    const { allowance, done } = await budgetOf(server).reserve();
    try {
      return await simple({ op: 'copy', path: parseBody(schemas.copy, json).path, allowance }, 201);
    } finally {
      done(0);
      ctx.files.changed(server);
    }
  }
  if (route === 'compress' || route === 'decompress') return archive(server, route, json, simple);
  if (route === 'delete') {
    const answer = await ctx.files.simple(server, { op: 'delete', paths: parseBody(schemas.delete, json).paths, reach });
    ctx.files.changed(server);
    if (!answer.ok) fail(answer);
    res.writeHead(204);
    res.end();
    return;
  }
  throw notFound('Unknown route');
}

/** Compress (201, the archive's entry) or decompress (200, the entries made), within the disk's allowance. */
async function archive(server: Server, route: 'compress' | 'decompress', json: unknown, simple: (r: FileRequest, status?: number, key?: 'entry' | 'entries') => Promise<void>): Promise<void> {
  const budget = budgetOf(server);
  const { allowance, done } = await budget.reserve();
  try {
    if (route === 'compress') {
      return await simple({ op: 'compress', ...parseBody(schemas.compress, json), allowance }, 201);
    }
    return await simple({ op: 'decompress', ...parseBody(schemas.decompress, json), allowance }, 200, 'entries');
  } finally {
    done(0);
    budget.invalidate();
  }
}

/**
 * Streams a file: the whole of it, or the one range a `Range: bytes=a-b` header asks for (206). A
 * range that lies past the end is ignored and the whole file sent (200), as RFC 9110 allows: the API
 * keeps to its documented statuses (CONTRACT §1), of which 206 is the one a range needs.
 */
async function download(ask: (r: FileRequest) => ReturnType<FileWorkers['request']>, path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // one `bytes=a-` or `bytes=a-b` range; any other Range header is ignored (the whole file, 200)
  const range = /^bytes=(\d+)-(\d*)$/.exec(String(req.headers.range ?? '').trim());
  let start = range ? Number(range[1]) : undefined;
  const end = range && range[2] ? Number(range[2]) : undefined;
  const open = async (from?: number, to?: number) => {
    const { res: answer, body } = await ask({ op: 'download', path, start: from, end: to });
    if (!answer.ok) {
      body.destroy();
      fail(answer);
    }
    return { body, ...(answer.result as { size: number; length: number }) };
  };
  let { body, size, length } = await open(start, end);
  if (start !== undefined && (start >= size || (end !== undefined && end < start))) {
    body.destroy();
    start = undefined;
    ({ body, size, length } = await open());
  }
  const headers: Record<string, string | number> = { 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes', 'cache-control': 'no-store', 'content-length': length };
  if (start !== undefined) headers['content-range'] = `bytes ${start}-${start + length - 1}/${size}`;
  res.writeHead(start !== undefined ? 206 : 200, headers);
  await pipeline(body, res);
}
