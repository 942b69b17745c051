import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { findExecutable } from '../../shared/executables';
import { LineSplitter } from './line-splitter';
import type { ServerIdentity } from './isolation';
import { sandboxArgv, sandboxEnvBytes, sandboxRootEnv, type PrivateTmp } from './sandbox';
import { signalGroup } from './proc';

export type OutputStream = 'stdout' | 'stderr';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** set when the process could not be started at all */
  error?: Error;
}

export interface SpawnOptions {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  maxLineLength?: number;
  /** Run as this user and group (the agent must be root); absent: as the agent itself. */
  identity?: ServerIdentity | null;
  /**
   * Hold the command until `release()`: a shell on the new pid waits on a pipe, then execs the
   * command (same pid). The agent puts the pid into the server's cgroup in between, so that nothing
   * the command starts, however early, runs outside it (children forked before the move used to
   * escape the cpu limit). A command that cannot be found is gated too: its gate's exec fails (127).
   */
  gate?: boolean;
  /**
   * A private /tmp and /dev/shm (see sandbox.ts); only with an identity. Every command runs in it,
   * one that cannot be found too (the sandbox's exec of it fails: 127).
   */
  privateTmp?: PrivateTmp | null;
}

/** The waiting shell of a gated command: `$@` is the command, fd 3 the pipe `release()` writes to. */
const GATE = 'read -r _ <&3; exec 3<&-; exec "$@"';

/**
 * Whether `cmd` names an executable file, as the process would find it: a name on its PATH, or a
 * path, a relative one (`./start.sh`) from `cwd`, the server's directory. It only chooses the words
 * of a failure (ProgramNotFoundError): every command runs gated and sandboxed whatever it says.
 */
function findable(cmd: string, env: Record<string, string>, cwd: string): boolean {
  return findExecutable(cmd.includes('/') ? path.resolve(cwd, cmd) : cmd, env.PATH ?? '') !== null;
}

/** The exit code of a shell's or the sandbox's exec of a command that is not there (sandbox.ts LOADER). */
const EXEC_NOT_FOUND = 127;

/**
 * The program of a command is not on the node: no executable file of that name in the PATH of the
 * server's processes (or, for a path, no executable file there). The `error` of the exit of a
 * process that could not be started for that reason, in place of spawn's own ENOENT or EACCES (the
 * latter when a folder of the PATH is closed to the server's user).
 */
export class ProgramNotFoundError extends Error {
  constructor(
    readonly program: string,
    readonly spawnError: Error,
  ) {
    super(
      program.includes('/')
        ? `${program} is not installed on this node (there is no executable file at that path)`
        : `${program} is not installed on this node (not found in the PATH of the server's processes)`,
    );
    this.name = 'ProgramNotFoundError';
  }
}

/** Bytes written to a process's stdin and not yet read by it, past which commands are refused. */
export const MAX_STDIN_BACKLOG = 256 * 1024;

/**
 * One running process, spawned without a shell as the leader of its own process group
 * (`detached: true`) so that signals and kills reach the whole tree (`kill(-pid)`).
 *
 * Events: `line` (line, stream), `exit` ({ code, signal, error }) — emitted once, after the output is
 * drained. When the leader exits, the rest of its group is SIGKILLed.
 */
export class ManagedProcess extends EventEmitter {
  readonly child: ChildProcess;
  readonly pid: number | null;
  private exited = false;
  private detachedFromAgent = false;
  private gate: Writable | null = null;
  private resolveDone!: (info: ExitInfo) => void;
  /** Resolves after the `exit` event was emitted (its listeners have run). */
  readonly done: Promise<ExitInfo> = new Promise((r) => (this.resolveDone = r));

  constructor(opts: SpawnOptions) {
    super();
    const found = findable(opts.argv[0]!, opts.env, opts.cwd);
    const gated = opts.gate === true;
    // the sandbox starts as the agent (root) and switches to the identity itself, after its mounts
    const sandboxed = !!opts.identity && !!opts.privateTmp;
    const [cmd, ...args] = sandboxed
      ? sandboxArgv(opts.argv, opts.identity!, opts.privateTmp!, gated)
      : gated
        ? ['/bin/sh', '-c', GATE, 'hostpanel-gate', ...opts.argv]
        : opts.argv;
    const envBytes = sandboxed ? sandboxEnvBytes(opts.env) : null;
    this.child = spawn(cmd!, args, {
      cwd: opts.cwd,
      env: sandboxed ? sandboxRootEnv() : opts.env,
      // libuv also drops the agent's supplementary groups when it switches user
      ...(opts.identity && !sandboxed ? { uid: opts.identity.uid, gid: opts.identity.gid } : {}),
      shell: false,
      detached: true,
      // fd 3: the gate; fd 4: the sandbox's copy of the environment
      stdio: sandboxed ? ['pipe', 'pipe', 'pipe', gated ? 'pipe' : 'ignore', 'pipe'] : gated ? ['pipe', 'pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
    this.gate = gated ? (this.child.stdio[3] as Writable) : null;
    this.gate?.on('error', () => undefined);
    if (sandboxed) {
      const envPipe = this.child.stdio[4] as Writable | null;
      envPipe?.on('error', () => undefined);
      envPipe?.end(envBytes);
    }
    this.pid = this.child.pid ?? null;
    const maxLen = opts.maxLineLength ?? 4096;
    const out = new LineSplitter((l) => this.emit('line', l, 'stdout'), maxLen);
    const err = new LineSplitter((l) => this.emit('line', l, 'stderr'), maxLen);
    this.child.stdout!.on('data', (c: Buffer) => out.push(c));
    this.child.stderr!.on('data', (c: Buffer) => err.push(c));
    this.child.stdin!.on('error', () => {
      /* EPIPE when the process is gone */
    });
    let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let closeTimer: NodeJS.Timeout | null = null;
    const finish = (error?: Error): void => {
      if (this.exited) return;
      this.exited = true;
      if (closeTimer) clearTimeout(closeTimer);
      out.end();
      err.end();
      const info: ExitInfo = { code: exitInfo?.code ?? null, signal: exitInfo?.signal ?? null, error };
      this.emit('exit', info);
      this.resolveDone(info);
    };
    this.child.on('error', (e) => {
      // spawn failure (ENOENT, EACCES): no exit event follows when there is no pid
      if (this.pid === null || !exitInfo) {
        exitInfo = { code: null, signal: null };
        finish(found ? e : new ProgramNotFoundError(opts.argv[0]!, e));
      }
    });
    // a command that could not be found, which the gate's or the sandbox's exec failed to run
    let notFound: ProgramNotFoundError | undefined;
    this.child.on('exit', (code, signal) => {
      exitInfo = { code, signal };
      if (!found && code === EXEC_NOT_FOUND) notFound = new ProgramNotFoundError(opts.argv[0]!, new Error(`exit code ${code}`));
      if (this.pid !== null && !this.detachedFromAgent) signalGroup(this.pid, 'SIGKILL');
      // wait for stdio to drain ('close'), but not forever
      closeTimer = setTimeout(() => finish(notFound), 1000);
    });
    this.child.on('close', () => {
      if (exitInfo) finish(notFound);
    });
  }

  get running(): boolean {
    return !this.exited;
  }

  /** Lets a gated command run (see SpawnOptions.gate); no-op otherwise. */
  release(): void {
    this.gate?.end('\n');
    this.gate = null;
  }

  /**
   * Writes one line to stdin: 'closed' when stdin is gone, 'full' when the process has not read the
   * last MAX_STDIN_BACKLOG bytes written to it (commands sent to a server that does not read its
   * input would otherwise pile up in the agent's memory without bound).
   */
  write(line: string): 'ok' | 'closed' | 'full' {
    const stdin = this.child.stdin;
    if (!stdin || stdin.destroyed || !stdin.writable) return 'closed';
    if (stdin.writableLength > MAX_STDIN_BACKLOG) return 'full';
    stdin.write(line.endsWith('\n') ? line : line + '\n');
    return 'ok';
  }

  closeStdin(): void {
    this.child.stdin?.end();
  }

  /** Signal to the whole process group. */
  signal(sig: NodeJS.Signals): boolean {
    if (this.pid === null || this.exited) return false;
    return signalGroup(this.pid, sig);
  }

  kill(): boolean {
    return this.signal('SIGKILL');
  }

  /**
   * The agent stops watching this process but leaves it running (agent shutdown without stopping
   * servers). The next agent run finds and kills it from state.json.
   */
  abandon(): void {
    this.detachedFromAgent = true;
    this.exited = true;
    this.removeAllListeners();
    this.child.removeAllListeners('exit');
    this.child.removeAllListeners('close');
    this.child.stdout?.removeAllListeners('data');
    this.child.stderr?.removeAllListeners('data');
    this.child.on('error', () => {});
    this.child.unref();
    for (const s of [this.child.stdin, this.child.stdout, this.child.stderr]) (s as unknown as { unref?: () => void } | null)?.unref?.();
  }
}
