/**
 * The file requests of one server, as every protocol of the agent makes them (the HTTP file routes,
 * SFTP): the worker that does them as the server's uid, and the disk budget that every write draws
 * from, so that an upload over HTTP and one over SFTP at once cannot both fill the same free space.
 */
import { finished, Transform, type Readable } from 'node:stream';
import type { Socket } from 'node:net';
import { AgentError, notFound } from '../errors';
import type { ServerManager } from '../server/manager';
import type { Server } from '../server/server';
import { DiskBudget, type Meter } from './budget';
import { ENTRY_BYTES, footprint } from './footprint';
import { diskLimit } from './jail';
import type { FileRequest, FileResponse } from './protocol';
import type { Reach } from './reach';
import type { FileWorkers } from './workers';

const MIB = 1024 * 1024;

/** The worker's refusal as an error (its status, code and message). */
export const answerError = (r: Extract<FileResponse, { ok: false }>): AgentError => new AgentError(r.status, r.code, r.message, r.details ?? {});
/** An error as the worker's refusal. */
const refusal = (e: AgentError): FileResponse => ({ ok: false, status: e.status, code: e.code, message: e.message });
const budgets = new WeakMap<Server, DiskBudget>();

export function budgetOf(server: Server): DiskBudget {
  let b = budgets.get(server);
  if (!b) budgets.set(server, (b = new DiskBudget(server.dir, () => server.spec.disk * MIB)));
  return b;
}

export class ServerFiles {
  constructor(
    readonly manager: ServerManager,
    readonly workers: FileWorkers,
  ) {
    // the servers' directories are swept of what interrupted writes left by their own workers
    manager.sweepFilesWith((server) => workers.sweep({ id: server.spec.id, dir: server.dir, identity: server.identity }));
  }

  /** The server `id` with its files ready; 404 when it is not on this node. */
  async open(id: string): Promise<Server> {
    const server = this.manager.find(id);
    if (!server || server.deleted) throw notFound('Server not found');
    await server.prepareFiles();
    return server;
  }

  ask(server: Server, req: FileRequest, body?: Readable): Promise<{ res: FileResponse; body: Socket }> {
    return this.workers.request({ id: server.spec.id, dir: server.dir, identity: server.identity }, req, body);
  }

  /**
   * A request with no bytes after its answer. A folder or a link it makes (`mkdir`, `symlink`) takes
   * a block of the disk limit, refused (DISK_LIMIT) when there is none left.
   */
  async simple(server: Server, req: FileRequest): Promise<FileResponse> {
    const makes = req.op === 'mkdir' || req.op === 'symlink';
    const meter = makes ? await this.entryMeter(server) : null;
    if (makes && !meter) return refusal(diskLimit());
    let grown = 0;
    try {
      const { res, body } = await this.ask(server, req);
      body.destroy();
      if (res.ok && makes) grown = ENTRY_BYTES;
      return res;
    } finally {
      meter?.done(grown);
    }
  }

  /** A hold on the disk budget with the new entry's own block taken, or null when there is no block left (`frees`: see DiskBudget.meter). */
  private async entryMeter(server: Server, frees = 0): Promise<Meter | null> {
    const meter = await budgetOf(server).meter(frees);
    if (meter.charge(0)) return meter;
    meter.done(0);
    return null;
  }

  /**
   * Writes `body` to `path` (atomically, see Jail.writeFile) at most `max` bytes, each chunk charged to
   * the disk budget as it passes to the worker: one the free space has no room for cuts the write off
   * (DISK_LIMIT; the worker drops its temporary file). `reach`: what the writer may reach (reach.ts).
   * `frees`: the disk the file it replaces takes, when the caller knows it (a restore): the write is
   * then judged on its result (DiskBudget.meter).
   */
  async write(server: Server, path: string, body: Readable, max = Infinity, reach?: Reach, frees = 0, createOnly = false): Promise<FileResponse> {
    // the file's own block first: no room for it, no write (an empty file takes one too)
    const meter = await this.entryMeter(server, frees);
    if (!meter) {
      body.resume();
      return refusal(diskLimit());
    }
    let refused = false;
    const metered = new Transform({
      transform(chunk: Buffer, _enc, next) {
        if (meter.charge(chunk.length)) return next(null, chunk);
        refused = true;
        next(diskLimit());
      },
    });
    // the refusal is answered below; a body that ends early (or had already) cuts the write off
    metered.on('error', () => undefined);
    finished(body, (err) => err && metered.destroy());
    body.pipe(metered);
    let grown = 0;
    try {
      const asked = await this.ask(server, { op: 'write', path, allowance: Math.min(meter.allowance, max), reach, ...(createOnly ? { createOnly } : {}) }, metered);
      asked.body.destroy();
      // what the disk holds more: the new file less the one it replaced
      if (asked.res.ok && 'entry' in asked.res.result) grown = footprint(asked.res.result.entry?.size ?? 0) - ('replaced' in asked.res.result ? (asked.res.result.replaced ?? 0) : 0);
      return refused && !asked.res.ok ? refusal(diskLimit()) : asked.res;
    } catch (err) {
      if (refused) return refusal(diskLimit());
      throw err;
    } finally {
      // a write that failed any way (a body cut off, the worker gone) gives back what it held
      meter.done(grown);
    }
  }

  /** After changes of many files at once (deletes, archives): the next write measures the disk again. */
  changed(server: Server): void {
    budgetOf(server).invalidate();
  }
}
