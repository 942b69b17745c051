import { EventEmitter } from 'node:events';
import { promises as fsp } from 'node:fs';
import { KILL_WAIT_MS, type ServerSpec, type ServerStateEvent, type ServerStatus } from '../../shared/node-protocol';
import { childLogger } from '../../logger';
import { AgentError, invalidState } from '../errors';
import { type AgentPaths, serverDir } from '../paths';
import { buildArgv, TemplateError } from '../environment/template';
import { childPath, templateVariablesFor } from '../environment/env';
import { installCommand } from '../environment/install-shell';
import { ProgramNotFoundError, type ExitInfo, type ManagedProcess, type OutputStream } from '../environment/process';
import { processStartTime } from '../environment/proc';
import { serverDiskUsage } from '../filesystem/usage';
import type { ServerIdentity } from '../environment/isolation';
import type { ServerCgroups } from '../environment/cgroup';
import type { ConsoleBuffer } from './console-buffer';
import { ServerConsole } from './console';
import { CrashGuard } from './crash';
import { ServerEnvironment } from './environment';
import { InstallRun, openInstallLog, removeInstallLog } from './install';
import { requestStop } from './power';
import { removeInBackground } from './removal';
import { ResourceMonitor, type ServerStats } from './monitor';
import { nextStatusSeq } from './status-seq';
import { firstMatchWithin, PATTERN_BUDGET_MS, PatternTimeout } from '../../shared/bounded-regex';

const log = childLogger('agent');
const MIB = 1024 * 1024;

export interface ServerRuntimeOptions {
  paths: AgentPaths;
  cgroups: ServerCgroups;
  /** processes (and threads) one server may have: its cgroup's pids.max */
  pidsMax: number;
  stopGraceSeconds: number;
  /** run servers as the agent's own user when the agent cannot give them one (see isolation.ts) */
  allowUnisolated: boolean;
  /** resource poll (memory limit check, cpu %) */
  statsIntervalMs: number;
  /** `stats` push to console clients while running */
  statsPushIntervalMs: number;
  /** disk re-check while running */
  diskCheckIntervalMs: number;
  /** no auto-restart when a crash follows the previous one within this window */
  crashLoopWindowMs: number;
  autoRestartDelayMs: number;
  installTimeoutMs: number;
  maxLineLength: number;
  /** lines a second one server's output may put on its console (CONSOLE_MAX_LINES_PER_SECOND); the rest is dropped */
  consoleMaxLinesPerSecond: number;
  historyLines: number;
  /** Runs before each start, once the start is checked (the agent writes the configuration files). */
  beforeStart?: (server: Server) => Promise<void>;
  /** Runs once a deleted server is gone from the node (the agent removes its backups). */
  afterRemove?: (serverId: string) => Promise<void>;
}

/** What is persisted in state.json for one server. */
export interface PersistedServer {
  spec: ServerSpec;
  installed: boolean;
  /** the server should be running (restored at agent boot) */
  desiredRunning: boolean;
  status: ServerStatus;
  /** the uid (and gid) its processes run as, unique on the node (see isolation.ts) */
  uid?: number;
  pid: number | null;
  pidStart: number | null;
  exitCode: number | null;
  reason: string | null;
  /**
   * Why its process is ending (a stop or kill under way; null when none is): the next boot kills
   * what is left of it and reports it offline for this reason.
   */
  ending?: string | null;
  /** When its process last crashed (epoch ms): the crash-loop rule holds across the agent's restarts. */
  lastCrashAt?: number | null;
}

export interface ServerState {
  id: string;
  status: ServerStatus;
  exitCode: number | null;
  reason: string | null;
  startedAt: string | null;
  stats: ServerStats;
  /** The number of the status reported (see ServerStateEvent.seq): the panel records it only over a lower one. */
  statusSeq: number;
}

/** The install-time warning of a node without private mount namespaces (see sandbox.ts). */
const UNMAPPED_NOTICE =
  "This node cannot map /mnt/server and /home/container to the server's directory (the agent does not run as root, or unshare, " +
  "mount namespaces or setpriv are missing): the install script runs without them, so a script that uses those paths fails. " +
  'Run the node agent as root with util-linux installed.';

/**
 * Why a server whose install failed is not started, and what to do: a reinstall runs the same script
 * again, so it helps only once what failed is fixed (a missing download, the blueprint's script).
 */
const INSTALL_FAILED_NEXT = "reinstall the server once what the script needs is there, or ask an administrator to fix or clear the blueprint's install script first";
const INSTALL_FAILED_MESSAGE = `The install script failed (its output is in the console): ${INSTALL_FAILED_NEXT}.`;

const ANSI_RE = /\x1b\[[0-9;?]*[A-Za-z]/g;

function compileReady(ready: string | null): RegExp | null {
  if (!ready) return null;
  try {
    return new RegExp(ready);
  } catch {
    return null;
  }
}

/**
 * One server: its process, state machine, console history and resource limits.
 *
 * Events: `state` (ServerStateEvent, every status change, for the panel), `status` (status),
 * `console` (ConsoleLine, also install lines with kind 'install'), `skipped` (SkipReport: lines dropped
 * over the output budget since the previous one), `stats` (ServerStats), `persist`.
 */
export class Server extends EventEmitter {
  spec: ServerSpec;
  status: ServerStatus = 'offline';
  /** The number of the current status (status-seq.ts), given with every change and announce. */
  statusSeq: number = nextStatusSeq();
  exitCode: number | null = null;
  reason: string | null = null;
  startedAt: Date | null = null;
  installed = false;
  desiredRunning = false;
  pid: number | null = null;
  pidStart: number | null = null;

  private readonly console: ServerConsole;
  readonly dir: string;
  /** Where its processes run (user, cgroup, private /tmp). */
  private readonly env: ServerEnvironment;
  /** Its own uid on the node, allocated by the manager. */
  readonly uid: number;
  /**
   * Readies the server's directory for its file worker: refused like a start when the server cannot
   * run as a user of its own (unless the node allows that), and the directory made the server's own.
   */
  async prepareFiles(): Promise<void> {
    const refusal = this.env.refusal();
    if (refusal) throw refusal;
    await this.env.own();
  }

  /** The user its processes and its file worker run as (null: unisolated, as the agent). */
  get identity(): ServerIdentity | null {
    return this.env.identity;
  }
  private readyRe: RegExp | null;
  /** Lines of a starting server not yet tested against readyRe. */
  private readyLines: string[] = [];
  private proc: ManagedProcess | null = null;
  private installRun: InstallRun | null = null;
  private expectedExit: string | null = null;
  /** The last stop is not reported yet: this boot ended the process a stop or kill was ending (see restore). */
  private unreportedStop = false;
  private restartPending = false;
  private startPromise: Promise<void> | null = null;
  private startToken = 0;
  private stopTimer: NodeJS.Timeout | null = null;
  private readonly crashes: CrashGuard;
  private readonly monitor: ResourceMonitor;
  private closing = false;
  deleted = false;

  constructor(
    spec: ServerSpec,
    private readonly opts: ServerRuntimeOptions,
    uid: number,
  ) {
    super();
    this.setMaxListeners(0);
    this.spec = spec;
    this.dir = serverDir(opts.paths, spec.id);
    this.uid = uid;
    this.env = new ServerEnvironment(spec.id, this.dir, uid, opts);
    this.readyRe = compileReady(spec.ready);
    this.console = new ServerConsole(
      opts.historyLines,
      opts.consoleMaxLinesPerSecond,
      (entry) => this.emit('console', entry),
      (report) => this.emit('skipped', report),
      () => this.listenerCount('console'),
    );
    this.crashes = new CrashGuard(opts.crashLoopWindowMs, opts.autoRestartDelayMs);
    this.monitor = new ResourceMonitor(this.dir, opts, {
      onStats: (s) => this.emit('stats', s),
      onMemoryExceeded: (mib) => this.limitKill('memory_limit', `Server is using ${mib} MiB of memory, over its limit of ${this.limits.memory} MiB; killing it`),
      onDiskExceeded: (mib) => {
        this.systemLine(`Server is using ${mib} MiB of disk, over its limit of ${this.limits.disk} MiB; stopping it`);
        void this.stop('disk_limit');
      },
      limits: () => this.limits,
      cgroupMemory: () => this.opts.cgroups.memory(this.spec.id),
    });
  }

  get id(): string {
    return this.spec.id;
  }

  /** Restores fields from state.json (used at agent boot). */
  restore(p: PersistedServer): void {
    this.installed = p.installed;
    this.desiredRunning = p.desiredRunning;
    this.exitCode = p.exitCode;
    this.reason = p.reason;
    this.status = p.installed ? (p.status === 'install_failed' ? 'install_failed' : 'offline') : 'offline';
    this.crashes.remember(p.lastCrashAt ?? null);
    if (p.pid && p.ending) {
      // the agent died while the process was being stopped or killed: the boot has ended it
      this.reason = p.ending;
      this.exitCode = null;
      this.unreportedStop = true;
    }
  }

  persisted(): PersistedServer {
    return {
      spec: this.spec,
      installed: this.installed,
      desiredRunning: this.desiredRunning,
      status: this.status,
      uid: this.uid,
      pid: this.pid,
      pidStart: this.pidStart,
      exitCode: this.exitCode,
      reason: this.reason,
      ending: this.proc ? this.expectedExit : null,
      lastCrashAt: this.crashes.lastCrash,
    };
  }

  /**
   * The memory and disk limits (MiB) the running process started with: a changed spec takes effect at
   * the next start, so lowering the memory of a running server does not kill it.
   */
  private startedLimits: { memory: number; disk: number } | null = null;

  private get limits(): { memory: number; disk: number } {
    return this.startedLimits ?? { memory: this.spec.memory, disk: this.spec.disk };
  }

  /** The panel's revision of the spec in use (see ServerSpec.revision). */
  get revision(): number {
    return this.spec.revision ?? 0;
  }

  /** New spec; takes effect at the next start (or install). */
  updateSpec(spec: ServerSpec): void {
    this.spec = spec;
    this.readyRe = compileReady(spec.ready);
    this.emit('persist');
  }

  state(): ServerState {
    return {
      id: this.spec.id,
      status: this.status,
      exitCode: this.exitCode,
      reason: this.reason,
      startedAt: this.startedAt ? this.startedAt.toISOString() : null,
      stats: this.monitor.snapshot(this.startedAt),
      statusSeq: this.statusSeq,
    };
  }

  stats(): ServerStats {
    return this.monitor.snapshot(this.startedAt);
  }

  get hasProcess(): boolean {
    return this.proc !== null;
  }

  // ------------------------------------------------------------------------------------------
  // console

  /** The console history (the last lines, install output included). */
  get buffer(): ConsoleBuffer {
    return this.console.buffer;
  }

  systemLine(text: string): void {
    this.console.system(text);
  }

  private onOutput(line: string, stream: OutputStream): void {
    this.console.push(line, stream, 'console');
    if (this.status === 'starting' && this.readyRe) this.watchReady(line);
  }

  /**
   * Queues a line of a starting server for the ready pattern: the lines of one turn are tested
   * together, for a bounded time (the pattern is the blueprint's, the text the server's).
   */
  private watchReady(line: string): void {
    if (this.readyLines.push(line.replace(ANSI_RE, '')) === 1) setImmediate(() => this.checkReady());
  }

  private checkReady(): void {
    const lines = this.readyLines;
    this.readyLines = [];
    if (this.status !== 'starting' || !this.readyRe) return;
    try {
      if (firstMatchWithin(this.readyRe, lines) < 0) return;
    } catch (err) {
      if (!(err instanceof PatternTimeout)) throw err;
      this.console.system(`The blueprint's ready pattern took longer than ${PATTERN_BUDGET_MS} ms on the server's output, so the server is taken as running; ask an administrator to simplify the pattern.`);
    }
    this.setStatus('running');
  }

  /** Writes a command to stdin. Only while running. */
  sendCommand(command: string): void {
    if (this.status !== 'running' || !this.proc) throw invalidState('Server is not running');
    const written = this.proc.write(command);
    if (written === 'closed') throw invalidState('Server does not accept input');
    if (written === 'full') throw invalidState('Server is not reading its input: the command was not sent');
  }

  // ------------------------------------------------------------------------------------------
  // state

  private setStatus(status: ServerStatus, extra: { exitCode?: number | null; reason?: string | null } = {}): void {
    const changed = status !== this.status;
    this.status = status;
    this.statusSeq = nextStatusSeq();
    if ('exitCode' in extra) this.exitCode = extra.exitCode ?? null;
    if ('reason' in extra) this.reason = extra.reason ?? null;
    const event: ServerStateEvent = { serverId: this.spec.id, status, at: new Date().toISOString(), seq: this.statusSeq };
    if ('exitCode' in extra) event.exitCode = extra.exitCode ?? null;
    if (extra.reason) event.reason = extra.reason;
    if (changed) this.systemLine(`Server marked as ${status}...`);
    this.emit('state', event);
    if (changed) this.emit('status', status);
    this.emit('persist');
  }

  /**
   * Reports the current status once more (agent boot), with `reason`, or with how its process ended
   * when this boot ended it (see restore). A stop reported before is not reported again: the panel
   * would count a crash twice.
   */
  announce(reason?: string): void {
    this.statusSeq = nextStatusSeq();
    const event: ServerStateEvent = { serverId: this.spec.id, status: this.status, at: new Date().toISOString(), seq: this.statusSeq };
    if (reason) event.reason = reason;
    else if (this.unreportedStop) {
      if (this.reason) event.reason = this.reason;
      event.exitCode = this.exitCode;
    }
    this.unreportedStop = false;
    this.emit('state', event);
  }

  // ------------------------------------------------------------------------------------------
  // power

  /** Holds the server offline while a backup is put back (start is refused meanwhile). */
  beginRestore(): void {
    if (this.status !== 'offline' && this.status !== 'install_failed') throw invalidState('Stop the server before restoring a backup.');
    this.cancelAutoRestart();
    this.setStatus('restoring');
  }

  endRestore(): void {
    if (this.status === 'restoring') this.setStatus('offline');
  }

  async start(): Promise<void> {
    if (this.deleted) throw new AgentError(404, 'NOT_FOUND', 'Server not found');
    if (this.status === 'restoring') throw invalidState('A backup is being restored; start the server once it is done.');
    if (this.status === 'installing') throw invalidState('Server is being installed');
    if (this.status === 'install_failed') throw invalidState(INSTALL_FAILED_MESSAGE);
    if (this.status === 'starting' || this.status === 'running') return;
    if (this.status === 'stopping') throw invalidState('Server is stopping; use restart to start it again');
    this.refuseUnisolated('starting');
    if (this.startPromise) return this.startPromise;
    this.startPromise = this.doStart().finally(() => (this.startPromise = null));
    return this.startPromise;
  }

  /**
   * Throws (and says so in the console) when the server would run with the agent's own privileges.
   * A refused install reports the server offline with reason `not_isolated` (the panel shows why it
   * is not installed).
   */
  private refuseUnisolated(what: 'starting' | 'installing'): void {
    const refusal = this.env.refusal();
    if (!refusal) return;
    this.systemLine(`Not ${what}: ${refusal.message}`);
    if (what === 'installing') this.setStatus('offline', { exitCode: null, reason: 'not_isolated' });
    throw refusal;
  }

  private async doStart(): Promise<void> {
    const token = ++this.startToken;
    this.crashes.cancel(); // this start is the restart
    await fsp.mkdir(this.dir, { recursive: true });
    await this.env.own();
    const bytes = await serverDiskUsage(this.dir);
    this.monitor.setDisk(bytes);
    if (token !== this.startToken || this.status !== 'offline' || this.deleted || this.closing) return;
    const usedMib = Math.ceil(bytes / MIB);
    if (bytes > this.spec.disk * MIB) {
      this.systemLine(`Not starting: the server uses ${usedMib} MiB of disk, over its limit of ${this.spec.disk} MiB`);
      this.desiredRunning = false;
      this.setStatus('offline', { exitCode: null, reason: 'disk_limit' });
      throw new AgentError(422, 'DISK_LIMIT', `Server uses ${usedMib} MiB of disk, over its limit of ${this.spec.disk} MiB`, {
        used: usedMib,
        limit: this.spec.disk,
      });
    }
    let argv: string[];
    try {
      argv = buildArgv(this.spec.startup, templateVariablesFor(this.spec, this.dir, this.opts.paths.assets));
    } catch (e) {
      if (e instanceof TemplateError) {
        this.systemLine(`Not starting: ${e.message}`);
        throw new AgentError(422, 'INVALID_STARTUP', e.message);
      }
      throw e;
    }
    if (this.opts.beforeStart) {
      await this.opts.beforeStart(this);
      if (token !== this.startToken || this.status !== 'offline' || this.deleted || this.closing) return;
    }
    this.desiredRunning = true;
    this.expectedExit = null;
    this.restartPending = false;
    this.startedLimits = { memory: this.spec.memory, disk: this.spec.disk };
    this.startedAt = new Date();
    this.setStatus('starting', { exitCode: null, reason: null });
    let proc: ManagedProcess;
    try {
      proc = this.env.spawn(this.spec, argv);
    } catch (err) {
      // the kernel refused it (E2BIG: the command line and environment are over its limit, …)
      const message = `The process could not be started (${(err as Error).message}); shorten the server's variables or the startup command`;
      this.systemLine(`Not starting: ${message}`);
      this.desiredRunning = false;
      this.setStatus('offline', { exitCode: null, reason: null });
      throw new AgentError(422, 'INVALID_STARTUP', message);
    }
    this.proc = proc;
    proc.on('line', (l: string, s: OutputStream) => this.onOutput(l, s));
    proc.on('exit', (info: ExitInfo) => this.onExit(proc, info));
    log.info({ serverId: this.spec.id, pid: proc.pid ?? null, argv0: argv[0] }, 'server process started');
    if (proc.pid) {
      this.pid = proc.pid;
      this.pidStart = processStartTime(proc.pid);
      this.monitor.start(proc.pid);
    }
    this.emit('persist');
    if (!this.readyRe && (this.status as ServerStatus) === 'starting') this.setStatus('running');
  }

  private onExit(proc: ManagedProcess, info: ExitInfo): void {
    if (proc !== this.proc) return;
    this.proc = null;
    this.pid = null;
    this.pidStart = null;
    this.monitor.stop();
    if (this.stopTimer) clearTimeout(this.stopTimer);
    this.stopTimer = null;
    if (!this.expectedExit && this.env.oomKills()) {
      this.systemLine(`Server ran out of memory: over its limit of ${this.limits.memory} MiB, a process of it was killed`);
      this.expectedExit = 'memory_limit';
    }
    this.env.empty();
    // a program missing from the node is no crash: nothing to restart, nothing to count
    const missing = info.error instanceof ProgramNotFoundError ? info.error : null;
    const reason = missing ? 'program_missing' : (this.expectedExit ?? 'crashed');
    this.expectedExit = null;
    this.startedAt = null;
    this.startedLimits = null;
    const how = info.code !== null ? `exit code ${info.code}` : info.signal ? `signal ${info.signal}` : 'no exit code';
    if (missing) {
      this.desiredRunning = false;
      this.restartPending = false;
      this.systemLine(`Process could not be started: ${missing.message}: install it there, or change the server's startup command`);
    } else if (info.error) this.systemLine(`Process could not be started: ${info.error.message}`);
    else if (reason === 'crashed') this.systemLine(`Server process exited unexpectedly (${how})`);
    else this.systemLine(`Server process ended (${how})`);
    const crashed = reason === 'crashed' && !this.restartPending;
    const afterCrash = crashed && !this.closing && !this.deleted ? this.crashVerdict() : null;
    // a server restarted after its crash is still meant to run, in state.json too: an agent killed
    // while the restart waits starts it at its next boot
    if (crashed) this.desiredRunning = afterCrash === 'restart';
    this.setStatus('offline', { exitCode: info.code, reason });
    if (this.closing || this.deleted) return;
    if (this.restartPending) {
      this.restartPending = false;
      this.start().catch((e: Error) => this.systemLine(`Restart failed: ${e.message}`));
      return;
    }
    if (afterCrash === 'loop') {
      this.systemLine(`Server crashed again within ${Math.round(this.opts.crashLoopWindowMs / 1000)} s of the previous crash; not restarting automatically`);
    } else if (afterCrash === 'restart') {
      this.systemLine('Restarting the server after the crash...');
      this.crashes.schedule(() => {
        if (this.status !== 'offline') return;
        this.start().catch((e: Error) => {
          this.systemLine(`Automatic restart failed: ${e.message}`);
          this.desiredRunning = false; // nor is it tried again at the next boot
          this.emit('persist');
        });
      });
    }
  }

  /** Records a crash: restarted ('restart'), left offline ('loop': a crash loop), or neither (no autoRestart). */
  private crashVerdict(): 'restart' | 'loop' | null {
    const verdict = this.crashes.crashed();
    return this.spec.autoRestart ? verdict : null;
  }

  /** Cancels an automatic restart still waiting: the server is then no longer meant to run. */
  private cancelAutoRestart(): void {
    if (!this.crashes.cancel()) return;
    this.desiredRunning = false;
    this.emit('persist');
  }

  /** Graceful stop: stop command / signal, SIGKILL after the grace period. No-op unless starting/running. */
  async stop(reason = 'stopped'): Promise<void> {
    this.cancelAutoRestart();
    if (reason !== 'disk_limit') this.restartPending = false; // an explicit stop wins over a pending restart
    if (reason === 'stopped' && this.desiredRunning) {
      this.desiredRunning = false;
      this.emit('persist'); // written also when nothing runs yet: a start measuring the disk (a restart after a crash)
    }
    if (this.startPromise && this.status === 'offline') {
      this.startToken++; // cancels a start still measuring the disk
      this.restartPending = false;
    }
    if ((this.status !== 'starting' && this.status !== 'running') || !this.proc) return;
    const proc = this.proc;
    if (reason !== 'agent_restart') this.desiredRunning = false;
    this.expectedExit = reason;
    this.setStatus('stopping');
    requestStop(proc, this.spec.stop);
    const grace = this.opts.stopGraceSeconds;
    this.stopTimer = setTimeout(() => {
      this.stopTimer = null;
      if (this.proc === proc) {
        this.systemLine(`Server did not stop within ${grace} s; killing it`);
        proc.kill();
      }
    }, grace * 1000);
  }

  /** stop(reason); resolves once the process is gone (SIGKILL at the end of the grace period). */
  private async stopAndWait(reason: string): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    await this.stop(reason);
    const bound = (this.opts.stopGraceSeconds + 5) * 1000;
    await Promise.race([proc.done, new Promise((r) => setTimeout(r, bound).unref())]);
  }

  /** SIGKILL at once; resolves when the process is gone (status offline). */
  async kill(reason = 'killed'): Promise<void> {
    this.cancelAutoRestart();
    this.startToken++;
    this.restartPending = false;
    this.desiredRunning = false;
    if (this.installRun) await this.killInstall();
    const proc = this.proc;
    if (!proc) return;
    this.expectedExit = reason;
    proc.kill();
    await Promise.race([proc.done, new Promise((r) => setTimeout(r, KILL_WAIT_MS).unref())]);
  }

  private limitKill(reason: string, message: string): void {
    const proc = this.proc;
    if (!proc) return;
    this.systemLine(message);
    this.expectedExit = reason;
    this.restartPending = false;
    this.desiredRunning = false;
    proc.kill();
  }

  /** stop (if needed) then start; from any state except installing / install_failed. */
  async restart(): Promise<void> {
    if (this.status === 'installing') throw invalidState('Server is being installed');
    if (this.status === 'install_failed') throw invalidState(INSTALL_FAILED_MESSAGE);
    if (this.status === 'offline') return this.start();
    if (this.status === 'starting' || this.status === 'running') await this.stop();
    // set after stop(), which clears a pending restart
    this.restartPending = true;
    this.desiredRunning = true;
    // and written: stop() saved `desiredRunning: false`, and an agent killed before the start would
    // leave the server offline at its next boot
    this.emit('persist');
  }

  async power(action: string): Promise<void> {
    switch (action) {
      case 'start':
        return this.start();
      case 'stop':
        return this.stop();
      case 'restart':
        return this.restart();
      case 'kill':
        return this.kill();
      default:
        throw new AgentError(422, 'VALIDATION_ERROR', `Unknown power action: ${action}`, { fields: { action: 'must be start, stop, restart or kill' } });
    }
  }

  // ------------------------------------------------------------------------------------------
  // install

  /** Runs the install script (if any). Resolves once the install is under way (status installing). */
  async install(): Promise<void> {
    this.refuseUnisolated('installing');
    if (this.proc) await this.kill('killed');
    if (this.installRun) await this.killInstall();
    this.cancelAutoRestart();
    await fsp.mkdir(this.dir, { recursive: true });
    if (this.deleted) return;
    if (!this.spec.install || !this.spec.install.trim()) {
      this.installed = true;
      this.setStatus('offline', { exitCode: null, reason: null });
      return;
    }
    this.installed = false;
    this.desiredRunning = false;
    const log = await openInstallLog(this.opts.paths.installLogs, this.spec.id);
    // a delete during these steps ends the install here: nothing is spawned for a removed server
    const gone = async (): Promise<void> => {
      log.destroy();
      await removeInstallLog(this.opts.paths.installLogs, this.spec.id);
    };
    if (this.deleted) return gone();
    this.setStatus('installing', { exitCode: null, reason: null });
    try {
      await this.env.own();
    } catch (err) {
      if (this.deleted) return gone();
      throw err;
    }
    if (this.deleted) return gone();
    const command = installCommand(this.spec.install, this.spec.installShell, childPath());
    if (command.notice) this.console.system(command.notice, 'install');
    if (!this.env.sandboxed) this.console.system(UNMAPPED_NOTICE, 'install');
    let proc: ManagedProcess;
    try {
      proc = this.env.spawn(this.spec, command.argv);
    } catch (err) {
      // the kernel refused it (E2BIG: the script is over its limit for one argument, …)
      log.end();
      this.console.system(`Installation failed (the script could not be started: ${(err as Error).message}); shorten the install script`, 'install');
      this.setStatus('install_failed', { exitCode: null, reason: 'install_failed' });
      return;
    }
    const run: InstallRun = new InstallRun(proc, log, this.opts.installTimeoutMs, {
      line: (l, stream) => this.console.push(l, stream, 'install'),
      notice: (text) => this.console.system(text, 'install'),
      exit: (info) => this.onInstallExit(run, info),
    });
    this.installRun = run;
  }

  private onInstallExit(run: InstallRun, info: ExitInfo): void {
    if (this.installRun !== run) return;
    this.installRun = null;
    this.env.empty();
    if (this.deleted || this.closing) return;
    if (info.code === 0) {
      this.console.system('Installation completed', 'install');
      this.installed = true;
      this.setStatus('offline', { exitCode: 0, reason: null });
    } else {
      const how = info.error ? info.error.message : info.code !== null ? `exit code ${info.code}` : `signal ${info.signal}`;
      this.console.system(`Installation failed (${how}): ${INSTALL_FAILED_NEXT}`, 'install');
      this.setStatus('install_failed', { exitCode: info.code, reason: 'install_failed' });
    }
  }

  private async killInstall(): Promise<void> {
    await this.installRun?.kill();
  }

  // ------------------------------------------------------------------------------------------
  // lifecycle

  /**
   * Kills everything and removes the files. `graceful`: the server gets its stop command first and is
   * killed only if it has not stopped within the grace period.
   */
  async destroy(graceful = false): Promise<void> {
    this.cancelAutoRestart();
    this.deleted = true; // nothing starts it again from here on
    if (graceful) await this.stopAndWait('deleted');
    await this.kill('killed');
    this.monitor.stop();
    // nothing of the server runs any more when its files are removed
    this.env.empty();
    await removeInBackground(this.dir);
    await removeInstallLog(this.opts.paths.installLogs, this.spec.id);
    this.emit('deleted');
    this.removeAllListeners();
  }

  /**
   * Agent shutdown. With `stopServers`, running servers are stopped gracefully (reason agent_restart,
   * they will be started again at the next boot); otherwise the process is left running and the next
   * agent run kills and restarts it.
   */
  async shutdown(stopServers: boolean): Promise<void> {
    this.crashes.cancel(); // a restart waiting after a crash happens at the next boot (desiredRunning)
    this.closing = true;
    this.startToken++;
    if (this.installRun) await this.killInstall();
    if (stopServers) {
      const proc = this.proc;
      if (proc) {
        this.restartPending = false;
        if (this.status === 'starting' || this.status === 'running') await this.stop('agent_restart');
        await proc.done;
      }
    } else {
      if (this.proc) {
        this.monitor.stop();
        if (this.stopTimer) clearTimeout(this.stopTimer);
        this.proc.abandon();
        this.proc = null;
      }
    }
    this.monitor.stop();
  }
}

export { log as serverLog };
