/**
 * What the agent and a server's file worker say to each other on one connection: the agent sends one
 * JSON line (a FileRequest), then the bytes of a write; the worker answers one JSON line (a
 * FileResponse), then the bytes of a read.
 */
import type { Socket } from 'node:net';
import type { Entry } from './jail';

export type FileRequest =
  | { op: 'list'; path: string; page: number; limit: number }
  | { op: 'stat'; path: string }
  | { op: 'read'; path: string; maxBytes: number }
  | { op: 'download'; path: string; start?: number; end?: number }
  | { op: 'write'; path: string; allowance: number }
  | { op: 'mkdir'; path: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'copy'; path: string; allowance: number }
  | { op: 'delete'; paths: string[] }
  | { op: 'chmod'; path: string; mode: number }
  | { op: 'search'; path: string; query: string }
  | { op: 'compress'; paths: string[]; destination: string; allowance: number }
  | { op: 'decompress'; path: string; destination: string; allowance: number };

export type FileResult =
  | { entries: Entry[]; total: number }
  | { entry: Entry; created?: boolean }
  | { size: number; entry?: Entry; length?: number }
  | { done: true };

export type FileResponse = { ok: true; result: FileResult; body?: boolean } | { ok: false; status: number; code: string; message: string; details?: Record<string, unknown> };

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
  });
}
