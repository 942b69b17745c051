/**
 * The agent's side of the file workers: one worker process per server with files in use, run as the
 * server's uid and gid (or as the agent when it cannot switch users), stopped after a minute without
 * requests. `request` opens one connection to it per file request (protocol.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { childLogger } from '../../logger';
import { AgentError } from '../errors';
import type { ServerIdentity } from '../environment/isolation';
import { readJsonLine, type FileRequest, type FileResponse } from './protocol';

const log = childLogger('agent');
const IDLE_MS = 60_000;
const START_TIMEOUT_MS = 10_000;

export interface FileTarget {
  id: string;
  /** the server's directory */
  dir: string;
  identity: ServerIdentity | null;
}

interface Worker {
  child: ChildProcess;
  socketPath: string;
  ready: Promise<void>;
  idle: NodeJS.Timeout | null;
  busy: number;
}

/** The compiled worker's folder (src/agent): beside this file when running from dist/, else dist/'s (tests run src/). */
function compiledAgentDir(): string {
  if (existsSync(path.join(__dirname, 'worker.js'))) return path.resolve(__dirname, '..');
  const dist = path.resolve(__dirname, '../../../dist/src/agent');
  if (existsSync(path.join(dist, 'filesystem', 'worker.js'))) return dist;
  throw new Error('the file worker is not built: run `npm run build`');
}

/** The modules the worker loads, relative to src/agent: nothing else of the agent (no secrets, no packages). */
const WORKER_FILES = ['errors.js', 'filesystem/worker.js', 'filesystem/jail.js', 'filesystem/paths.js', 'filesystem/protocol.js'];

/**
 * Copies the worker's compiled code into `lib` (0755, files 0644): the agent's own folder may be one
 * only root can enter, and the worker runs as the server's user. Returns the worker's path there.
 */
export async function installWorker(lib: string): Promise<string> {
  const from = compiledAgentDir();
  await fsp.mkdir(path.join(lib, 'filesystem'), { recursive: true, mode: 0o755 });
  for (const dir of [lib, path.join(lib, 'filesystem')]) await fsp.chmod(dir, 0o755);
  for (const file of WORKER_FILES) {
    await fsp.copyFile(path.join(from, file), path.join(lib, file));
    await fsp.chmod(path.join(lib, file), 0o644);
  }
  return path.join(lib, 'filesystem', 'worker.js');
}

export class FileWorkers {
  private readonly workers = new Map<string, Worker>();

  /**
   * `runDir`: a folder of the agent's (0711) that holds one folder per server for its worker's socket;
   * `script`: the worker (see installWorker).
   */
  constructor(
    private readonly runDir: string,
    private readonly script: Promise<string>,
  ) {}

  /** Sends `req` (and `body`, the bytes of a write) to the server's worker; resolves with its answer and the bytes that follow it. */
  async request(target: FileTarget, req: FileRequest, body?: Readable): Promise<{ res: FileResponse; body: Socket }> {
    const w = await this.worker(target);
    w.busy++;
    if (w.idle) clearTimeout(w.idle);
    w.idle = null;
    const socket = connect({ path: w.socketPath, allowHalfOpen: true });
    const done = () => {
      w.busy--;
      if (w.busy === 0 && this.workers.get(target.id) === w) w.idle = setTimeout(() => this.stop(target.id), IDLE_MS).unref();
    };
    socket.once('close', done);
    // a broken connection shows as an answer or a body that ends early; an error event must not crash the agent
    socket.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    socket.write(JSON.stringify(req) + '\n');
    if (body) body.pipe(socket);
    else socket.end();
    const res = await readJsonLine<FileResponse>(socket, () => new AgentError(500, 'INTERNAL_ERROR', 'The file worker closed the connection without an answer.'));
    return { res, body: socket };
  }

  private async worker(target: FileTarget): Promise<Worker> {
    const known = this.workers.get(target.id);
    if (known && known.child.exitCode === null && !known.child.killed) {
      await known.ready;
      return known;
    }
    const folder = path.join(this.runDir, target.id);
    await fsp.mkdir(folder, { recursive: true, mode: 0o700 });
    if (target.identity) await fsp.chown(folder, target.identity.uid, target.identity.gid);
    const socketPath = path.join(folder, 'files.sock');
    await fsp.rm(socketPath, { force: true });
    const child = fork(await this.script, [target.dir, socketPath], {
      ...(target.identity ? { uid: target.identity.uid, gid: target.identity.gid } : {}),
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      execArgv: [],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    const ready = new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('the file worker did not start in time')), START_TIMEOUT_MS);
      child.on('message', (m: { type?: string; message?: string }) => {
        if (m?.type === 'listening') {
          clearTimeout(t);
          resolve();
        } else if (m?.type === 'error') reject(new Error(m.message));
      });
      child.once('exit', (code) => {
        clearTimeout(t);
        reject(new Error(`the file worker exited (${code}): ${stderr.trim().slice(-500)}`));
      });
    });
    const w: Worker = { child, socketPath, ready, idle: null, busy: 0 };
    this.workers.set(target.id, w);
    child.once('exit', () => {
      if (this.workers.get(target.id) === w) this.workers.delete(target.id);
    });
    try {
      await ready;
    } catch (err) {
      log.error({ serverId: target.id, err: (err as Error).message }, 'file worker failed to start');
      child.kill('SIGKILL');
      throw new AgentError(500, 'INTERNAL_ERROR', 'The file manager of this server could not start.');
    }
    return w;
  }

  /** Stops the worker of a server (its files are about to go, or it has been idle). */
  stop(serverId: string): void {
    const w = this.workers.get(serverId);
    if (!w) return;
    this.workers.delete(serverId);
    if (w.idle) clearTimeout(w.idle);
    w.child.kill('SIGTERM');
  }

  close(): void {
    for (const id of [...this.workers.keys()]) this.stop(id);
  }
}
