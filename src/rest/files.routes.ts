/**
 * `/servers/:id/files`: the file manager. The byte routes (PUT contents, POST upload, GET contents and
 * download) stream through to the node; the others are JSON. Mounted in two parts: the streamed
 * writes before the JSON body parser (their bodies are raw), the rest after it.
 */
import { AsyncResource } from 'node:async_hooks';
import { finished, PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { Router, type Request, type Response } from 'express';
import { attachment } from '../http/attachment.js';
import { AppError } from '../errors.js';
import { discardRest } from '../shared/discard-body.js';
import type { FileEntry } from '../services/files.service.js';
import type { Services } from '../services/index.js';
import { sendData, sendNoContent } from './respond.js';
import { parseFileListQuery, parseFileSearchQuery } from '../validation/files.js';

const single = (v: unknown): unknown => (Array.isArray(v) ? v[0] : v);
/** What a streamed write holds between the client and the node (the default 16 KiB slowed it down). */
const STREAM_BUFFER_BYTES = 1024 * 1024;

/**
 * Runs a streamed write of `req`'s body, handed to it through a stream of its own: when the write
 * fails before the client has sent everything, that stream is let go (whatever it is handed to may
 * destroy it) and the rest of the body is read and dropped (discardRest).
 */
async function streamedWrite<T>(req: Request<{ id: string }>, run: (body: Readable) => Promise<T>): Promise<T> {
  const body = new PassThrough({ highWaterMark: STREAM_BUFFER_BYTES });
  req.pipe(body);
  // a client that goes away half way cuts the write off (a pipe alone would leave it waiting). The
  // stream is closed without an error: nothing may listen to it yet (the write first asks the node
  // about the file), and whatever reads it later sees it closed early
  finished(req, (err) => err && body.destroy());
  try {
    return await run(body);
  } catch (err) {
    req.unpipe(body);
    body.destroy();
    discardRest(req);
    throw err;
  }
}

/** PUT contents and POST upload (raw bodies): before the JSON parser. */
/** Whether a request is a streamed upload (multipart upload, raw write): its body may take as long as it needs. */
export function isStreamedUpload(method: string, url: string): boolean {
  return (method === 'POST' || method === 'PUT') && /^\/api\/v1\/servers\/[^/?]+\/files\/(upload|contents)\/?(\?|$)/.test(url);
}

export function fileWriteRoutes(services: Services): Router {
  const r = Router();
  r.put('/servers/:id/files/contents', async (req, res) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (declared > services.files.maxUploadBytes) throw tooLarge(services.files.maxUploadBytes);
    const { entry } = await streamedWrite(req, (body) => services.files.write(req.actor ?? null, req.params.id, single(req.query.path), body));
    sendData(res, entry);
  });
  r.post('/servers/:id/files/upload', async (req, res) => {
    try {
      sendData(res, await upload(services, req), 201);
    } catch (err) {
      discardRest(req);
      throw err;
    }
  });
  return r;
}

/** The JSON and read routes: after the JSON parser. */
export function fileRoutes(services: Services): Router {
  const r = Router();
  r.get('/servers/:id/files', async (req, res) => {
    const page = await services.files.list(req.actor ?? null, req.params.id, parseFileListQuery(req.query));
    res.status(200).json({ data: page.items, meta: page.meta });
  });
  r.get('/servers/:id/sftp', async (req, res) => sendData(res, await services.sftp.details(req.actor ?? null, req.params.id)));
  r.get('/servers/:id/files/search', async (req, res) =>
    sendData(res, await services.files.search(req.actor ?? null, req.params.id, parseFileSearchQuery(req.query))),
  );
  r.get('/servers/:id/files/contents', async (req, res) => {
    const { bytes, text } = await services.files.contents(req.actor ?? null, req.params.id, single(req.query.path));
    res.status(200).type(text ? 'text/plain; charset=utf-8' : 'application/octet-stream').send(bytes);
  });
  r.get('/servers/:id/files/download', async (req, res) => download(services, req, res));
  r.post('/servers/:id/files/rename', async (req, res) => sendData(res, await services.files.rename(req.actor ?? null, req.params.id, req.body)));
  r.post('/servers/:id/files/copy', async (req, res) => sendData(res, await services.files.copy(req.actor ?? null, req.params.id, req.body), 201));
  r.post('/servers/:id/files/delete', async (req, res) => {
    await services.files.remove(req.actor ?? null, req.params.id, req.body);
    sendNoContent(res);
  });
  r.post('/servers/:id/files/directory', async (req, res) => sendData(res, await services.files.mkdir(req.actor ?? null, req.params.id, req.body), 201));
  r.post('/servers/:id/files/chmod', async (req, res) => sendData(res, await services.files.chmod(req.actor ?? null, req.params.id, req.body)));
  r.post('/servers/:id/files/compress', async (req, res) => sendData(res, await services.files.compress(req.actor ?? null, req.params.id, req.body), 201));
  r.post('/servers/:id/files/decompress', async (req, res) => sendData(res, await services.files.decompress(req.actor ?? null, req.params.id, req.body)));
  return r;
}

const tooLarge = (max: number) => new AppError('VALIDATION_ERROR', `A file may hold at most ${max} bytes (FILE_UPLOAD_MAX_BYTES).`, { fields: { file: `must be at most ${max} bytes` } });

/** Streams the node's answer: the file as an attachment, 206 for a range. */
async function download(services: Services, req: Request<{ id: string }>, res: Response): Promise<void> {
  const range = typeof req.headers.range === 'string' ? req.headers.range : undefined;
  const { response, path } = await services.files.download(req.actor ?? null, req.params.id, single(req.query.path), range);
  const name = path.split('/').pop() || 'download';
  res.status(response.status);
  for (const h of ['content-length', 'content-range', 'accept-ranges']) {
    const v = response.header(h);
    if (v !== null) res.setHeader(h, v);
  }
  res.setHeader('content-type', 'application/octet-stream');
  res.setHeader('content-disposition', attachment(name));
  await pipeline(response.body, res);
}

/**
 * multipart/form-data: each file part is streamed to the node as its own write into the folder `path`,
 * one after the other; the answer lists the entries written. A part over FILE_UPLOAD_MAX_BYTES or the
 * disk limit stops the upload with its error (what was written before it stays).
 */
async function upload(services: Services, req: Request<{ id: string }>): Promise<FileEntry[]> {
  const dir = await services.files.uploadTarget(req.actor ?? null, req.params.id, single(req.query.path));
  if (!/^multipart\/form-data/i.test(String(req.headers['content-type'] ?? ''))) throw AppError.badRequest('An upload is multipart/form-data with one part per file.');
  const max = services.files.maxUploadBytes;
  // browsers send a part's file name as UTF-8 bytes: busboy reads them as latin1 unless told
  const parser = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { fileSize: max, files: 1000, fields: 10 } });
  const written: FileEntry[] = [];
  let chain = Promise.resolve();
  let failure: unknown = null;
  let settle: { resolve: () => void; reject: (err: unknown) => void } | null = null;
  const parsed = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  // a part that failed ends the upload at once: its answer does not wait for the rest of the body
  // (which the route reads and drops), nor for busboy, which a failed part's stream may hold up
  const stop = (err: unknown): void => {
    failure ??= err;
    req.unpipe(parser);
    parser.destroy();
    settle!.reject(failure);
  };
  // bound to this request's context (its database session): busboy emits a part from whichever later
  // read of the socket holds its headers, outside that context
  parser.on('file', AsyncResource.bind((_field: string, stream: Readable & { truncated?: boolean }, info: busboy.FileInfo) => {
    stream.on('limit', () => stream.destroy(tooLarge(max)));
    // the part's write reads its error too; this listener holds one that comes while the part waits
    // for the parts before it, or while its write asks the node about the file first
    stream.on('error', (err) => void (failure ??= err));
    chain = chain.then(async () => {
      // a part that failed while it waited for the ones before it ends the upload as any failure does
      if (failure) return stop(failure);
      const name = info.filename?.split(/[\\/]/).pop() ?? '';
      if (!name || name === '.' || name === '..') return stop(new AppError('INVALID_PATH', 'Every uploaded file needs a name.', { fields: { file: 'has no name' } }));
      try {
        written.push((await services.files.write(req.actor ?? null, req.params.id, `${dir}/${name}`, stream, 'upload')).entry);
      } catch (err) {
        stop((stream as { truncated?: boolean }).truncated ? tooLarge(max) : err);
      }
    });
  }));
  parser.on('close', () => settle!.resolve());
  parser.on('error', (err: Error) => settle!.reject(failure ?? AppError.badRequest(`The upload is not valid multipart/form-data: ${err.message}`)));
  req.pipe(parser);
  // a client gone half way ends the part being written, so that the node drops its half file
  finished(req, (err) => err && parser.destroy(new Error('the client closed the connection')));
  await parsed;
  await chain;
  if (failure) throw failure;
  if (!written.length) throw new AppError('VALIDATION_ERROR', 'The upload holds no file.', { fields: { file: 'is required' } });
  return written;
}
