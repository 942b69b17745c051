/**
 * Open files of an SFTP session. A read handle streams the file from the server's worker from the
 * offset asked for and serves the following reads from that stream (clients read in order; a jump
 * starts a new stream). A write handle streams what is written into one atomic write of the worker
 * (a temporary file renamed over the old one when the handle closes), so that an upload cut off half
 * way leaves the old file as it was; the writes must cover the file once from its start (a little out
 * of order is fine; resuming at an offset is refused).
 * Each handle runs its requests one at a time, in the order they came.
 */
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { AgentError } from '../errors';
import type { FileResponse } from '../filesystem/protocol';
import type { Reach } from '../filesystem/reach';
import type { Allowance } from './allowance';
import { answerError as failed, type ServerFiles } from '../filesystem/server-files';
import type { Server } from '../server/server';

const MIB = 1024 * 1024;

const outOfOrder = (): AgentError => new AgentError(422, 'INVALID_STATE', 'Writes must cover the file once, from its start: resuming an upload at an offset or rewriting bytes is not supported, upload the whole file again.');


abstract class Queued {
  private chain: Promise<unknown> = Promise.resolve();

  /** Runs `fn` after every earlier request of this handle. */
  protected queued<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }
}

export class ReadHandle extends Queued {
  readonly kind = 'read';
  private stream: Socket | null = null;
  private chunks: AsyncIterator<Buffer> | null = null;
  private rest: Buffer = Buffer.alloc(0);
  private position = -1;
  private ended = false;
  /** the size and time of the file at the first read: a jump that finds them changed fails */
  private identity: string | null = null;

  constructor(
    private readonly files: ServerFiles,
    private readonly server: Server,
    readonly path: string,
    private readonly reach?: Reach,
  ) {
    super();
  }

  /** Up to `length` bytes from `offset`; null at the end of the file. */
  read(offset: number, length: number): Promise<Buffer | null> {
    return this.queued(async () => {
      if (offset !== this.position) await this.restart(offset);
      while (this.rest.length < length && !this.ended) {
        const next = await this.chunks!.next();
        if (next.done) this.ended = true;
        else this.rest = this.rest.length ? Buffer.concat([this.rest, next.value]) : next.value;
      }
      if (!this.rest.length) return null;
      const out = this.rest.subarray(0, length);
      this.rest = this.rest.subarray(out.length);
      this.position += out.length;
      return out;
    });
  }

  private async restart(offset: number): Promise<void> {
    this.stream?.destroy();
    const { res, body } = await this.files.ask(this.server, { op: 'download', path: this.path, start: offset, reach: this.reach });
    if (!res.ok) {
      body.destroy();
      throw failed(res);
    }
    // a jump reopens the file by its path: one replaced (or changed) since the first read would give
    // a mix of two files' bytes
    const { entry } = res.result as { entry?: { size: number; modifiedAt: string } };
    const identity = entry ? `${entry.size}\u0000${entry.modifiedAt}` : null;
    this.identity ??= identity;
    if (identity !== this.identity) {
      body.destroy();
      throw new AgentError(422, 'INVALID_STATE', `${this.path} changed while it was being read: download it again.`);
    }
    this.stream = body;
    this.chunks = body[Symbol.asyncIterator]();
    this.rest = Buffer.alloc(0);
    this.position = offset;
    this.ended = false;
  }

  close(): Promise<void> {
    return this.queued(async () => void this.stream?.destroy());
  }
}

export class WriteHandle extends Queued {
  readonly kind = 'write';
  private readonly body = new PassThrough({ highWaterMark: MIB });
  private readonly result: Promise<FileResponse>;
  private position = 0;
  private failure: AgentError | null = null;
  /** the permission bits the client set while uploading (FSETSTAT), for the file once it is in place */
  mode: number | null = null;
  /** writes that came before the bytes ahead of them, by offset (their bytes taken from `aheadBytes`) */
  private readonly ahead = new Map<number, Buffer>();

  /** `aheadBytes`: the connection's allowance for writes that come ahead of their place. */
  /** `createOnly`: opened as a new file, so a file made there before the close is kept and the upload refused */
  constructor(files: ServerFiles, server: Server, readonly path: string, reach: Reach | undefined, private readonly aheadBytes: Allowance, createOnly = false) {
    super();
    this.result = files.write(server, path, this.body, Infinity, reach, 0, createOnly).catch((err: Error) => ({ ok: false, status: 500, code: 'INTERNAL_ERROR', message: err.message }) as const);
    void this.result.then((r) => {
      if (!r.ok) this.failure = failed(r);
    });
  }

  get written(): number {
    return this.position;
  }

  /**
   * Takes the bytes at `offset`. Clients keep many writes in flight and some (the ssh2 client's
   * fastPut) send them as their reads of the local file finish, a little out of order: a write ahead
   * of the position waits here, within the connection's allowance, until the bytes before it came.
   */
  write(offset: number, data: Buffer): Promise<void> {
    return this.queued(async () => {
      if (this.failure) throw this.failure;
      if (offset > this.position) {
        if (this.ahead.has(offset) || !this.aheadBytes.take(data.length)) throw outOfOrder();
        // a copy: the request's bytes are a view of a larger packet, which would stay held with them
        this.ahead.set(offset, Buffer.from(data));
        return;
      }
      if (offset !== this.position) throw outOfOrder();
      await this.push(data);
      for (let next = this.ahead.get(this.position); next; next = this.ahead.get(this.position)) {
        this.ahead.delete(this.position);
        this.aheadBytes.give(next.length);
        await this.push(next);
      }
    });
  }

  /** Gives back what the writes held ahead of their place hold. */
  private dropAhead(): void {
    for (const b of this.ahead.values()) this.aheadBytes.give(b.length);
    this.ahead.clear();
  }

  private async push(data: Buffer): Promise<void> {
    this.position += data.length;
    if (this.body.write(data)) return;
    // the worker reads slower than the client sends: answer once it caught up (or failed)
    await Promise.race([once(this.body, 'drain'), this.result]);
    if (this.failure) throw this.failure;
  }

  /** Ends the upload: resolves once the file is in place; a failure (the disk limit) rejects. */
  close(): Promise<void> {
    return this.queued(async () => {
      if (this.ahead.size) {
        this.dropAhead();
        this.body.destroy();
        throw new AgentError(422, 'INVALID_STATE', 'The upload has a gap (bytes never sent before the end): nothing was written.');
      }
      this.body.end();
      const r = await this.result;
      if (!r.ok) throw failed(r);
    });
  }

  /** The session ended before the handle was closed: the upload is dropped, the old file stays. */
  abort(): void {
    this.dropAhead();
    this.body.destroy();
  }
}

export class DirHandle {
  readonly kind = 'dir';
  page = 1;
  done = false;
  constructor(readonly path: string) {}
}

export type Handle = ReadHandle | WriteHandle | DirHandle;
