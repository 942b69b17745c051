/**
 * What the agent and a server's file worker say to each other on one connection: the agent sends one
 * JSON line (a FileRequest), then the bytes of a write in frames (a 4-byte length, then that many
 * bytes; a frame of length 0 ends them, so that a body cut off on its way, which ends the connection
 * without it, is never taken for a whole file); the worker answers one JSON line (a FileResponse),
 * then the bytes of a read.
 */
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type { Entry } from './jail';
import type { Reach } from './reach';

/** One request; `reach`: what it may reach in the server (reach.ts), checked where paths really lead. */
export type FileRequest = { reach?: Reach } & (
  | { op: 'list'; path: string; page: number; limit: number }
  | { op: 'stat'; path: string; follow?: boolean }
  | { op: 'read'; path: string; maxBytes: number }
  // noFollow: a symlink at `path` is refused (INVALID_PATH), not followed
  | { op: 'download'; path: string; start?: number; end?: number; noFollow?: boolean }
  // createOnly: a file there when the write ends (made meanwhile) is kept, and the write refused (ALREADY_EXISTS)
  | { op: 'write'; path: string; allowance: number; createOnly?: boolean }
  | { op: 'mkdir'; path: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'copy'; path: string; allowance: number }
  | { op: 'delete'; paths: string[]; missingOk?: boolean }
  | { op: 'unlink'; path: string }
  | { op: 'rmdir'; path: string }
  | { op: 'readlink'; path: string }
  // raw: the target is written as it is (a restore puts back the link the server had); else it is
  // made relative and must lead inside the server (paths.ts linkTarget)
  | { op: 'symlink'; path: string; target: string; raw?: boolean }
  | { op: 'chmod'; path: string; mode: number }
  | { op: 'search'; path: string; query: string }
  // untext: what the walk does with a name that is not UTF-8 text (jail.ts Untext; refused by default)
  | { op: 'walk'; path: string; untext?: 'skip' | 'remove' }
  | { op: 'compress'; paths: string[]; destination: string; allowance: number }
  // noReplace: nothing that exists is replaced (ALREADY_EXISTS), for a caller without file.update
  | { op: 'decompress'; path: string; destination: string; allowance: number; noReplace?: boolean }
);

export type FileResult =
  | { entries: Entry[]; total: number }
  | { entry: Entry; created?: boolean; replaced?: number }
  | { size: number; entry?: Entry; length?: number }
  | { done: true }
  | { target: string };

export type FileResponse = { ok: true; result: FileResult; body?: boolean } | { ok: false; status: number; code: string; message: string; details?: Record<string, unknown> };

/** One line of a walk's answer. */
export interface WalkEntry {
  path: string;
  type: 'file' | 'directory' | 'symlink';
  mode: number;
  size: number;
  mtimeMs: number;
  target?: string;
  /** what the entry takes on disk as the disk limit counts it (its blocks, one at least) */
  disk: number;
}

/** The longest line either side accepts. */
export const MAX_LINE_BYTES = 1024 * 1024;

/**
 * Reads one JSON line from `socket` and leaves the socket paused at the first byte after it (the
 * bytes of a write, or of a read's answer). Rejects with `ended` when the connection ends first.
 */
export function readJsonLine<T>(socket: Socket, ended: () => Error): Promise<T> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('error', onEnd);
      socket.off('close', onEnd);
    };
    const onEnd = () => {
      cleanup();
      reject(ended());
    };
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const nl = buf.indexOf(10);
      if (nl < 0) {
        if (buf.length > MAX_LINE_BYTES) {
          cleanup();
          reject(new Error('line too long'));
        }
        return;
      }
      cleanup();
      socket.pause();
      const rest = buf.subarray(nl + 1);
      if (rest.length) socket.unshift(rest);
      try {
        resolve(JSON.parse(buf.subarray(0, nl).toString('utf8')) as T);
      } catch (err) {
        reject(err);
      }
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('error', onEnd);
    // destroyed on this side (a body cut off on its way) ends with neither 'end' nor 'error'
    socket.on('close', onEnd);
  });
}

const frameHeader = (length: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(length);
  return b;
};

/**
 * Sends `body` to `socket` in frames, then the end frame and the end of the connection's writing
 * side; a body that closes before its end (an aborted request) destroys the connection instead.
 */
export function sendFramed(body: Readable, socket: Socket): void {
  // a body that failed before it got here (a check that refused its bytes) will emit nothing more
  if (body.destroyed && !body.readableEnded) {
    socket.destroy();
    return;
  }
  let held = false; // paused here until the socket drains
  const onData = (chunk: Buffer) => {
    if (socket.destroyed) return;
    socket.cork();
    socket.write(frameHeader(chunk.length));
    const more = socket.write(chunk);
    socket.uncork();
    if (!more) {
      held = true;
      body.pause();
    }
  };
  const onDrain = () => {
    if (!held) return;
    held = false;
    body.resume();
  };
  const onEnd = () => socket.end(frameHeader(0));
  const onClose = () => {
    if (!body.readableEnded) socket.destroy();
  };
  body.on('data', onData);
  body.on('end', onEnd);
  body.on('close', onClose);
  socket.on('drain', onDrain);
  // the worker answered (or went away) before the end: what is left of the body is the caller's to drop
  socket.once('close', () => {
    body.off('data', onData);
    body.off('end', onEnd);
    body.off('close', onClose);
    onDrain();
  });
}

/** The bytes of the frames read from `socket` (paused at the first one); throws when it ends before the end frame. */
export async function* readFramed(socket: Socket): AsyncGenerator<Buffer> {
  let buf: Buffer = Buffer.alloc(0);
  let need = -1; // bytes of the current frame still to come; -1: a header is next
  for await (const chunk of socket.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    while (buf.length) {
      if (need < 0) {
        if (buf.length < 4) break;
        need = buf.readUInt32BE(0);
        buf = buf.subarray(4);
        if (need === 0) return;
      }
      const take = Math.min(need, buf.length);
      if (take) yield buf.subarray(0, take);
      buf = buf.subarray(take);
      need -= take;
      if (need === 0) need = -1;
    }
  }
  throw new Error('the body ended before its end: the write was cut off');
}
