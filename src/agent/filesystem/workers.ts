/**
 * The agent's side of the file workers: one worker process per server with files in use, run as the
 * server's uid and gid (or as the agent when it cannot switch users), stopped after a minute without
 * requests. `request` opens one connection to it per file request (protocol.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, promises as fsp, readFileSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { childLogger } from '../../logger';
import { AgentError } from '../errors';
import type { ServerIdentity } from '../environment/isolation';
import { readJsonLine, sendFramed, type FileRequest, type FileResponse } from './protocol';

const log = childLogger('agent');
const IDLE_MS = 60_000;
/** A worker started only to sweep (FileWorkers.sweep) stops this soon when no request came meanwhile. */
const SWEEP_IDLE_MS = 1_000;
/** How long a worker may take to listen, counted again from each report of its sweep. */
const START_TIMEOUT_MS = 10_000;
/** How long a new worker waits for the server's previous one to exit before it kills it. */
const EXIT_WAIT_MS = 5_000;
/** How often the sweep's progress is logged while it lasts. */
const SWEEP_LOG_MS = 5_000;

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
  /** stopped by the agent with no request under way (see FileWorkers.swept) */
  stoppedIdle: boolean;
}

/** What the worker says of its sweep (worker.ts). */
interface SweepMessage {
  type: 'sweeping' | 'swept';
  seen?: number;
  removed?: number;
  bytes?: number;
  failed?: number;
  ms?: number;
  error?: string;
}

/**
 * The compiled agent's source folder (dist/src): this file's when running from dist/, else dist/'s
 * (tests run src/). Code that runs in a process or thread of its own starts from there.
 */
export function compiledSourceDir(): string {
  if (existsSync(path.join(__dirname, 'worker.js'))) return path.resolve(__dirname, '../..');
  const dist = path.resolve(__dirname, '../../../dist/src');
  if (existsSync(path.join(dist, 'agent', 'filesystem', 'worker.js'))) return dist;
  throw new Error('the file worker is not built: run `npm run build`');
}

/** The modules the worker loads, relative to src: nothing else of the agent (no secrets). */
const WORKER_FILES = [
  'agent/errors.js',
  ...['worker', 'jail', 'paths', 'protocol', 'reach', 'footprint', 'archives', 'archive-entries', 'tar-gz'].map((m) => `agent/filesystem/${m}.js`),
  'shared/scopes.js',
  'shared/file-denylist.js',
];
/** The packages the worker loads (with what they depend on). */
const WORKER_PACKAGES = ['tar', 'yauzl', 'tar-stream', 'ignore'];

/** The folder of package `name` as Node finds it from `from` (its node_modules, then its parents'). */
function packageDir(name: string, from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`the file worker's package ${name} is not installed: run \`npm install\``);
  }
}

/** The folders of `names` and of every package they depend on. */
function packageClosure(names: readonly string[]): string[] {
  const dirs = new Set<string>();
  const visit = (name: string, from: string): void => {
    const dir = packageDir(name, from);
    if (dirs.has(dir)) return;
    dirs.add(dir);
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dep, dir);
  };
  for (const name of names) visit(name, __dirname);
  return [...dirs];
}

/** Whether users other than the agent's can reach `file`: every folder on the way searchable, the file readable. */
function reachableByOthers(file: string): boolean {
  if ((statSync(file).mode & 0o004) === 0) return false;
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false;
    if (path.dirname(dir) === dir) return true;
  }
}

/**
 * The packages the worker loads: where they are installed when the servers' users can read them there
 * (the usual case), else copied into `lib/node_modules` as they sit in the project's node_modules
 * (once per set of versions). Returns the folder to give the worker as NODE_PATH, or null.
 */
async function installPackages(lib: string, names: readonly string[], copy: boolean): Promise<string | null> {
  const dirs = packageClosure(names);
  const top = path.dirname(packageDir(names[0]!, __dirname));
  if (!copy && dirs.every((d) => reachableByOthers(path.join(d, 'package.json')))) return top;
  const stamp = dirs.map((d) => `${path.relative(top, d)}@${JSON.parse(readFileSync(path.join(d, 'package.json'), 'utf8')).version}`).join('\n');
  const stampFile = path.join(lib, 'node_modules', '.hostpanel-packages');
  if ((await fsp.readFile(stampFile, 'utf8').catch(() => '')) === stamp) return null;
  for (const dir of dirs) {
    await fsp.cp(dir, path.join(lib, 'node_modules', path.relative(top, dir)), { recursive: true, force: true, filter: (src) => !src.slice(dir.length).includes('/node_modules/') });
  }
  await readableByAll(path.join(lib, 'node_modules'));
  await fsp.writeFile(stampFile, stamp);
  return null;
}

/** Gives everyone read access (and search on folders) below `dir`: the worker runs as each server's user. */
async function readableByAll(dir: string): Promise<void> {
  await fsp.chmod(dir, 0o755);
  for (const d of await fsp.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) await readableByAll(p);
    else if (d.isFile()) await fsp.chmod(p, 0o644);
  }
}

export interface InstalledWorker {
  /** the worker's script */
  script: string;
  /** NODE_PATH for the worker (its packages where they are installed), or null (they are beside it) */
  nodePath: string | null;
}

/**
 * Copies the worker's compiled code into `lib` (0755, files 0644), and its packages when the servers'
 * users cannot read them where they are (or `copyPackages`): the agent's own folder may be one only
 * root can enter, and the worker runs as the server's user.
 */
export async function installWorker(lib: string, opts: { copyPackages?: boolean } = {}): Promise<InstalledWorker> {
  const from = compiledSourceDir();
  for (const dir of [lib, ...new Set(WORKER_FILES.map((f) => path.join(lib, path.dirname(f))))]) {
    await fsp.mkdir(dir, { recursive: true, mode: 0o755 });
    await fsp.chmod(dir, 0o755);
  }
  for (const file of WORKER_FILES) {
    await fsp.copyFile(path.join(from, file), path.join(lib, file));
    await fsp.chmod(path.join(lib, file), 0o644);
  }
  const nodePath = await installPackages(lib, WORKER_PACKAGES, opts.copyPackages ?? false);
  return { script: path.join(lib, 'agent', 'filesystem', 'worker.js'), nodePath };
}

/**
 * A failure the worker did not expect: logged with what the worker said (it names the worker's own
 * descriptors and the system's error), and told to the user without it.
 */
function unexpected(res: FileResponse, target: FileTarget, req: FileRequest): FileResponse {
  if (res.ok || res.code !== 'INTERNAL_ERROR') return res;
  log.error({ serverId: target.id, op: req.op, err: res.message }, 'a file operation failed unexpectedly');
  return { ...res, message: 'The file operation failed on the node. Try again; if it keeps failing, an administrator finds the reason in the node agent\u2019s log.' };
}

export class FileWorkers {
  private readonly workers = new Map<string, Worker>();
  /** Workers being started: requests that come meanwhile wait for the same one. */
  private readonly starting = new Map<string, Promise<Worker>>();
  /**
   * Servers whose directory holds no temporary file but those of writes under way: a worker of theirs
   * swept it when it started (worker.ts) and has not died since in the middle of a request (a worker
   * that dies, unless the agent stopped it idle, may leave one).
   */
  private readonly swept = new Set<string>();
  /** The last worker of each server until it has exited: the next one starts after (one at a time). */
  private readonly exiting = new Map<string, { exited: Promise<void>; child: ChildProcess }>();
  /** closed with the agent: no worker starts any more (a sweep of the boot still going would start one) */
  private closed = false;

  /**
   * `runDir`: a folder of the agent's (0711) that holds one folder per server for its worker's socket;
   * `installed`: the worker (see installWorker).
   */
  constructor(
    private readonly runDir: string,
    private readonly installed: Promise<InstalledWorker>,
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
    if (body) sendFramed(body, socket);
    else socket.end();
    const res = await readJsonLine<FileResponse>(socket, () => new AgentError(500, 'INTERNAL_ERROR', 'The file worker closed the connection without an answer.'));
    return { res: unexpected(res, target, req), body: socket };
  }

  private async worker(target: FileTarget): Promise<Worker> {
    const known = this.workers.get(target.id);
    if (known && known.child.exitCode === null && !known.child.killed) {
      await known.ready;
      return known;
    }
    // one start at a time per server: two would fork two workers on the same socket path
    let starting = this.starting.get(target.id);
    if (!starting) {
      starting = this.start(target).finally(() => this.starting.delete(target.id));
      this.starting.set(target.id, starting);
    }
    return starting;
  }

  /**
   * Resolves when the server's directory holds no temporary file left by an interrupted write: at once
   * when a worker of the server has removed them since the last one died, else once a worker started
   * for it has (it removes them before it listens; a worker started only for that stops soon after).
   * The disk measurements wait for it (usage.ts): what is left is never counted, and never lingers.
   */
  async sweep(target: FileTarget): Promise<void> {
    if (this.swept.has(target.id)) return;
    const w = await this.worker(target);
    if (w.busy === 0 && !w.idle && this.workers.get(target.id) === w) w.idle = setTimeout(() => this.stop(target.id), SWEEP_IDLE_MS).unref();
  }

  private async start(target: FileTarget): Promise<Worker> {
    if (this.closed) throw new AgentError(503, 'NODE_UNAVAILABLE', 'The node agent is stopping.');
    // a worker sweeps as it starts: no other of the server's may be running a write (worker.ts)
    await this.previousGone(target.id);
    const folder = path.join(this.runDir, target.id);
    await fsp.mkdir(folder, { recursive: true, mode: 0o700 });
    if (target.identity) await fsp.chown(folder, target.identity.uid, target.identity.gid);
    const socketPath = path.join(folder, 'files.sock');
    await fsp.rm(socketPath, { force: true });
    const { script, nodePath } = await this.installed;
    if (this.closed) throw new AgentError(503, 'NODE_UNAVAILABLE', 'The node agent is stopping.');
    const child = fork(script, [target.dir, socketPath], {
      ...(target.identity ? { uid: target.identity.uid, gid: target.identity.gid } : {}),
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      execArgv: [],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', ...(nodePath ? { NODE_PATH: nodePath } : {}) },
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const last = { exited, child };
    this.exiting.set(target.id, last);
    void exited.then(() => this.exiting.get(target.id) === last && this.exiting.delete(target.id));
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    let loggedAt = Date.now();
    const ready = new Promise<void>((resolve, reject) => {
      const timeout = () => setTimeout(() => reject(new Error('the file worker did not start in time')), START_TIMEOUT_MS);
      let t = timeout();
      child.on('message', (m: { type?: string; message?: string }) => {
        if (m?.type === 'listening') {
          clearTimeout(t);
          resolve();
        } else if (m?.type === 'sweeping' || m?.type === 'swept') {
          // a big tree takes its time: each report gives the worker its time to listen again
          clearTimeout(t);
          t = timeout();
          const sw = m as SweepMessage;
          if (sw.type === 'swept') this.sweptLog(target, sw);
          else if (Date.now() - loggedAt >= SWEEP_LOG_MS) {
            loggedAt = Date.now();
            log.info({ serverId: target.id, seen: sw.seen, removed: sw.removed }, 'removing the temporary files of interrupted writes from the server\'s directory: still looking');
          }
        } else if (m?.type === 'error') reject(new Error(m.message));
      });
      child.once('exit', (code) => {
        clearTimeout(t);
        reject(new Error(`the file worker exited (${code}): ${stderr.trim().slice(-500)}`));
      });
    });
    const w: Worker = { child, socketPath, ready, idle: null, busy: 0, stoppedIdle: false };
    this.workers.set(target.id, w);
    child.once('exit', () => {
      if (this.workers.get(target.id) === w) this.workers.delete(target.id);
      // one that died with a request under way may have left a temporary file
      if (!w.stoppedIdle) this.swept.delete(target.id);
    });
    try {
      await ready;
    } catch (err) {
      log.error({ serverId: target.id, err: (err as Error).message }, 'file worker failed to start');
      child.kill('SIGKILL');
      throw new AgentError(500, 'INTERNAL_ERROR', 'The file manager of this server could not start.');
    }
    // (it listens only once it has swept)
    if (child.exitCode === null && this.workers.get(target.id) === w) this.swept.add(target.id);
    return w;
  }

  /** Waits until the server's previous worker has exited (killed when it has not within EXIT_WAIT_MS). */
  private async previousGone(serverId: string): Promise<void> {
    const last = this.exiting.get(serverId);
    if (!last) return;
    const { exited, child } = last;
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([exited.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), EXIT_WAIT_MS)))]);
    clearTimeout(timer);
    if (!late) return;
    log.warn({ serverId }, 'the previous file worker of the server did not exit: killing it');
    child.kill('SIGKILL');
    await exited;
  }

  /** Logs what a worker's sweep did, when it did anything or took a while. */
  private sweptLog(target: FileTarget, m: SweepMessage): void {
    const at = { serverId: target.id, removed: m.removed, bytes: m.bytes, failed: m.failed, seen: m.seen, ms: m.ms };
    if (m.error) log.warn({ serverId: target.id, err: m.error }, 'could not remove the temporary files of interrupted writes from the server\'s directory');
    else if (m.failed) log.warn(at, 'removed the temporary files of interrupted writes from the server\'s directory; some could not be removed');
    else if (m.removed || (m.ms ?? 0) >= SWEEP_LOG_MS) log.info(at, 'removed the temporary files of interrupted writes from the server\'s directory');
  }

  /** Stops the worker of a server (its files are about to go, or it has been idle). */
  stop(serverId: string): void {
    const w = this.workers.get(serverId);
    if (!w) return;
    this.workers.delete(serverId);
    if (w.idle) clearTimeout(w.idle);
    w.stoppedIdle = w.busy === 0;
    w.child.kill('SIGTERM');
  }

  close(): void {
    this.closed = true;
    for (const id of [...this.workers.keys()]) this.stop(id);
  }
}
