/**
 * A server's file worker: a process of its own, run by the agent as the server's uid and gid, that
 * carries out file requests on the server's directory (jail.ts). It listens on a unix socket in a
 * folder only its uid (and root) can enter; each connection is one request (protocol.ts). It tells
 * the agent over IPC when it listens, and exits when the agent goes.
 *
 *   node worker.js <server directory> <socket path>
 */
import { createServer, type Socket } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { AgentError } from '../errors';
import { compress, decompress } from './archives';
import { footprintOnDisk, Jail, WRITE_BATCH_BYTES, type Untext } from './jail';
import { displayPath, linkTarget, pathComponents } from './paths';
import { readFramed, readJsonLine, type FileRequest, type FileResponse, type FileResult, type WalkEntry } from './protocol';

function answer(socket: Socket, res: FileResponse): void {
  socket.write(JSON.stringify(res) + '\n');
}

function failure(err: unknown): FileResponse {
  if (err instanceof AgentError) return { ok: false, status: err.status, code: err.code, message: err.message, details: err.details };
  return { ok: false, status: 500, code: 'INTERNAL_ERROR', message: (err as Error)?.message ?? String(err) };
}

async function serve(whole: Jail, socket: Socket): Promise<void> {
  socket.on('error', () => socket.destroy());
  let req: FileRequest;
  try {
    req = await readJsonLine<FileRequest>(socket, () => new Error('connection ended before the request line'));
  } catch {
    socket.destroy();
    return;
  }
  try {
    const jail = whole.reaching(req.reach);
    if (req.op === 'download') return await download(jail, socket, req);
    if (req.op === 'walk') return await walk(jail, socket, req.path, req.untext);
    if (req.op === 'read') {
      // the contents follow the answer line
      const data = await jail.readFile(pathComponents(req.path), req.maxBytes);
      answer(socket, { ok: true, result: { size: data.length }, body: true });
      socket.end(data);
      return;
    }
    const result = await run(jail, req, socket);
    answer(socket, { ok: true, result });
    socket.end();
  } catch (err) {
    answer(socket, failure(err));
    socket.end();
  }
}

async function download(jail: Jail, socket: Socket, req: Extract<FileRequest, { op: 'download' }>): Promise<void> {
  const { handle, size, entry } = await jail.openFile(pathComponents(req.path), !req.noFollow);
  try {
    const start = Math.min(req.start ?? 0, size);
    const end = Math.min(req.end ?? size - 1, size - 1);
    const length = Math.max(0, end - start + 1);
    answer(socket, { ok: true, result: { size, entry, length }, body: true });
    // past the answer line an error can only cut the connection (the agent sees the body end early)
    if (length) await pipeline(handle.createReadStream({ start, end, autoClose: false, highWaterMark: WRITE_BATCH_BYTES }), socket, { end: false }).catch(() => socket.destroy());
    socket.end();
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Everything below `path` as JSON lines after the answer (one WalkEntry each, folders before what
 * they hold, then `{"end":true}`, or `{"error":{status,code,message}}` when the walk was refused): the backups' view of a server's files. Symlinks are listed with their targets, never
 * followed. A name that is not UTF-8 text is refused (the walk's error line), or as `untext` says.
 */
async function walk(jail: Jail, socket: Socket, raw: string, untext: Untext = 'refuse'): Promise<void> {
  const root = pathComponents(raw);
  answer(socket, { ok: true, result: { done: true }, body: true });
  try {
    await jail.walk(root, async (parts, st) => {
      if (!parts.length) return;
      const type = st.isFile() ? 'file' : st.isDirectory() ? 'directory' : st.isSymbolicLink() ? 'symlink' : null;
      if (!type) return; // devices, sockets, fifos: not a server's data
      const entry: WalkEntry = { path: displayPath(parts), type, mode: st.mode & 0o777, size: st.isFile() ? st.size : 0, mtimeMs: st.mtimeMs, disk: footprintOnDisk(st) };
      if (type === 'symlink') {
        // a link replaced by a file or a folder since its lstat is gone as listed: left out, as a deleted one is
        const target = await jail.readlink(parts).catch((e: unknown) => (e instanceof AgentError && e.code === 'INVALID_STATE' ? null : Promise.reject(e)));
        if (target === null) return;
        entry.target = target;
      }
      if (!socket.write(JSON.stringify(entry) + '\n')) await new Promise((r) => socket.once('drain', r));
    }, untext);
    socket.end(JSON.stringify({ end: true }) + '\n');
  } catch (err) {
    // past the answer line, a refusal (a folder the worker may not read, a name that is not text)
    // is the last line instead of the end line; anything else cuts the connection off
    if (err instanceof AgentError) socket.end(JSON.stringify({ error: { status: err.status, code: err.code, message: err.message } }) + '\n');
    else socket.destroy();
  }
}

async function run(jail: Jail, req: Exclude<FileRequest, { op: 'download' | 'read' | 'walk' }>, socket: Socket): Promise<FileResult> {
  switch (req.op) {
    case 'list': {
      const { items, total } = await jail.list(pathComponents(req.path), req.page, req.limit);
      return { entries: items, total };
    }
    case 'stat':
      return { entry: req.follow ? await jail.statFollowing(pathComponents(req.path)) : await jail.stat(pathComponents(req.path)) };
    case 'write':
      // the framed bytes that follow the request line; the socket stays open for the answer
      return jail.writeFile(pathComponents(req.path), readFramed(socket), req.allowance, undefined, req.createOnly);
    case 'mkdir':
      return { entry: await jail.mkdir(pathComponents(req.path)) };
    case 'rename':
      return { entry: await jail.rename(pathComponents(req.from), pathComponents(req.to)) };
    case 'copy':
      return { entry: await jail.copy(pathComponents(req.path), req.allowance) };
    case 'delete': {
      await jail.removeAll(req.paths.map((p) => pathComponents(p)), req.missingOk);
      return { done: true };
    }
    case 'unlink':
      await jail.unlink(pathComponents(req.path));
      return { done: true };
    case 'rmdir':
      await jail.rmdir(pathComponents(req.path));
      return { done: true };
    case 'readlink':
      return { target: await jail.readlink(pathComponents(req.path)) };
    case 'symlink': {
      const link = pathComponents(req.path);
      return { entry: await jail.symlink(link, req.raw ? req.target : linkTarget(link, req.target)) };
    }
    case 'chmod':
      return { entry: await jail.chmod(pathComponents(req.path), req.mode) };
    case 'search': {
      const entries = await jail.search(pathComponents(req.path), req.query);
      return { entries, total: entries.length };
    }
    case 'compress': {
      const paths = req.paths.map((p) => pathComponents(p));
      return { entry: await compress(jail, paths, pathComponents(req.destination), req.allowance) };
    }
    case 'decompress': {
      const entries = await decompress(jail, pathComponents(req.path), pathComponents(req.destination), req.allowance, req.noReplace === true);
      return { entries, total: entries.length };
    }
  }
}

/** How often the worker tells the agent how far its sweep is (the agent logs it, and waits on). */
const SWEEP_REPORT_MS = 1000;

/**
 * Removes what interrupted writes left (Jail.sweepTemps), telling the agent how far it is every second
 * and what it did at the end. It runs before the worker listens: every write of the server's files runs
 * in its worker, and the agent starts a server's worker only once the one before it has exited
 * (workers.ts), so no write is under way, and no request is answered before the sweep is done.
 */
async function sweep(jail: Jail): Promise<void> {
  const started = Date.now();
  let reported = started;
  try {
    const done = await jail.sweepTemps((seen, removed) => {
      const now = Date.now();
      if (now - reported < SWEEP_REPORT_MS) return;
      reported = now;
      process.send?.({ type: 'sweeping', seen, removed });
    });
    process.send?.({ type: 'swept', ...done, ms: Date.now() - started });
  } catch (err) {
    process.send?.({ type: 'swept', error: (err as Error)?.message ?? String(err), ms: Date.now() - started });
  }
}

export function startWorker(root: string, socketPath: string): void {
  const jail = new Jail(root);
  // half-open: the agent ends its side after a write's bytes and still reads the answer
  const server = createServer({ allowHalfOpen: true }, (socket) => void serve(jail, socket).catch(() => socket.destroy()));
  server.on('error', (err) => {
    process.send?.({ type: 'error', message: err.message });
    process.exit(1);
  });
  process.on('disconnect', () => process.exit(0));
  void sweep(jail).then(() => server.listen(socketPath, () => process.send?.({ type: 'listening' })));
}

if (require.main === module) startWorker(process.argv[2]!, process.argv[3]!);
