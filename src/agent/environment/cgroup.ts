import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { childLogger } from '../../logger';

const log = childLogger('agent');

export const CFS_PERIOD_US = 100000;
const MIB = 1024 * 1024;

export type CgroupKind = 'cgroup-v1' | 'cgroup-v2' | 'none';
/** The controllers a server's cgroup limits with (v1: one hierarchy each; freezer only stops a kill race). */
export type Controller = 'cpu' | 'memory' | 'pids' | 'freezer';
const CONTROLLERS: Controller[] = ['cpu', 'memory', 'pids', 'freezer'];

/** What a server's cgroup holds it to. */
export interface CgroupLimits {
  /** percent of one core; 0 = unlimited */
  cpu: number;
  /** MiB; 0 = unlimited */
  memory: number;
  /** processes and threads; 0 = unlimited */
  pids: number;
}

/** Memory a server's cgroup holds (its processes, tmpfs pages, active page cache) and how often the kernel killed in it for memory. */
export interface CgroupMemory {
  bytes: number;
  oomKills: number;
}

/** Blocks the thread for `ms` (the kill loop is synchronous: its callers must not yield meanwhile). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function readOr(file: string, fallback: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

/** A `key value` line of a cgroup stat file (memory.stat, memory.events, memory.oom_control). */
function statValue(text: string, key: string): number {
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/**
 * One cgroup per server, below `hostpanel/`: v1 `/sys/fs/cgroup/<controller>/hostpanel/<id>` for cpu
 * (`cpu.cfs_quota_us`), memory (`memory.limit_in_bytes`, and `memory.memsw.limit_in_bytes` when swap is
 * accounted), pids (`pids.max`) and freezer; v2 `/sys/fs/cgroup/hostpanel/<id>` with `cpu.max`,
 * `memory.max`, `pids.max`. Controllers that cannot be written (not root, read-only cgroupfs, …) are
 * left out, and that is logged once.
 */
export class ServerCgroups {
  private kind: CgroupKind | null = null;
  private readonly bases = new Map<Controller, string>();
  private warned = false;

  constructor(private readonly root = '/sys/fs/cgroup', private readonly group = 'hostpanel') {}

  /** Probes once which mechanism and controllers work. */
  detect(): CgroupKind {
    if (this.kind) return this.kind;
    this.kind = 'none';
    try {
      if (existsSync(path.join(this.root, 'cpu', 'cpu.cfs_quota_us'))) this.detectV1();
      else if (existsSync(path.join(this.root, 'cgroup.controllers'))) this.detectV2();
    } catch (e) {
      log.debug({ err: (e as Error).message }, 'cgroup probe failed');
    }
    if (this.bases.size) this.kind = existsSync(path.join(this.root, 'cgroup.controllers')) ? 'cgroup-v2' : 'cgroup-v1';
    const missing = CONTROLLERS.filter((c) => c !== 'freezer' && !this.bases.has(c));
    if (missing.length) log.warn({ missing }, `not enforced on this node (no writable cgroup controller): ${missing.join(', ')} limits`);
    return this.kind;
  }

  private detectV1(): void {
    for (const c of CONTROLLERS) {
      const base = path.join(this.root, c, this.group);
      try {
        if (!existsSync(path.join(this.root, c, 'cgroup.procs'))) continue;
        mkdirSync(base, { recursive: true });
        const probe = path.join(base, `.probe-${process.pid}`);
        mkdirSync(probe, { recursive: true });
        try {
          const file = { cpu: 'cpu.cfs_period_us', memory: 'memory.limit_in_bytes', pids: 'pids.max', freezer: 'freezer.state' }[c];
          const value = { cpu: String(CFS_PERIOD_US), memory: String(1024 * MIB), pids: 'max', freezer: 'THAWED' }[c];
          writeFileSync(path.join(probe, file), value);
        } finally {
          rmdirSync(probe);
        }
        this.bases.set(c, base);
      } catch (e) {
        log.debug({ controller: c, err: (e as Error).message }, 'cgroup v1 controller not usable');
      }
    }
  }

  private detectV2(): void {
    const available = readFileSync(path.join(this.root, 'cgroup.controllers'), 'utf8').split(/\s+/);
    const base = path.join(this.root, this.group);
    mkdirSync(base, { recursive: true });
    for (const c of ['cpu', 'memory', 'pids'] as const) {
      if (!available.includes(c)) continue;
      try {
        writeFileSync(path.join(this.root, 'cgroup.subtree_control'), `+${c}`);
        writeFileSync(path.join(base, 'cgroup.subtree_control'), `+${c}`);
        this.bases.set(c, base);
      } catch (e) {
        log.debug({ controller: c, err: (e as Error).message }, 'cgroup v2 controller not usable');
      }
    }
    if (existsSync(path.join(base, 'cgroup.freeze'))) this.bases.set('freezer', base);
  }

  /** Whether a controller limits servers on this node. */
  has(c: Controller): boolean {
    this.detect();
    return this.bases.has(c);
  }

  /** Directory of a server's cgroup for a controller, or null when that controller is not used. */
  groupDir(serverId: string, c: Controller = 'cpu'): string | null {
    this.detect();
    const base = this.bases.get(c);
    return base ? path.join(base, serverId) : null;
  }

  /** Distinct directories of a server's cgroup (one per controller on v1, one on v2). */
  private dirs(serverId: string): string[] {
    return [...new Set([...this.bases.values()].map((b) => path.join(b, serverId)))];
  }

  /**
   * Puts a freshly spawned process into the server's cgroup with the given limits. Never throws:
   * what cannot be applied is logged once.
   */
  apply(serverId: string, pid: number, limits: CgroupLimits): boolean {
    if (this.detect() === 'none') return false;
    try {
      for (const dir of this.dirs(serverId)) mkdirSync(dir, { recursive: true });
      this.writeLimits(serverId, limits);
      for (const dir of this.dirs(serverId)) writeFileSync(path.join(dir, 'cgroup.procs'), String(pid));
      return true;
    } catch (e) {
      if (!this.warned) {
        this.warned = true;
        log.warn({ err: (e as Error).message }, 'could not apply cgroup limits; they are not enforced');
      }
      return false;
    }
  }

  private writeLimits(serverId: string, limits: CgroupLimits): void {
    const v2 = this.kind === 'cgroup-v2';
    const cpu = this.groupDir(serverId, 'cpu');
    if (cpu) {
      const quota = limits.cpu > 0 ? String(Math.max(1000, Math.round(limits.cpu * 1000))) : v2 ? 'max' : '-1';
      if (v2) writeFileSync(path.join(cpu, 'cpu.max'), `${quota} ${CFS_PERIOD_US}`);
      else {
        writeFileSync(path.join(cpu, 'cpu.cfs_period_us'), String(CFS_PERIOD_US));
        writeFileSync(path.join(cpu, 'cpu.cfs_quota_us'), quota);
      }
    }
    const memory = this.groupDir(serverId, 'memory');
    if (memory) {
      const bytes = limits.memory > 0 ? String(limits.memory * MIB) : v2 ? 'max' : '-1';
      if (v2) writeFileSync(path.join(memory, 'memory.max'), bytes);
      else {
        // memory + swap: raising needs memsw first, lowering needs the plain limit first
        const memsw = path.join(memory, 'memory.memsw.limit_in_bytes');
        const trySwap = (): void => {
          if (existsSync(memsw)) {
            try {
              writeFileSync(memsw, bytes);
            } catch {
              /* below the current memory limit: written again after it */
            }
          }
        };
        trySwap();
        writeFileSync(path.join(memory, 'memory.limit_in_bytes'), bytes);
        trySwap();
      }
    }
    const pids = this.groupDir(serverId, 'pids');
    if (pids) writeFileSync(path.join(pids, 'pids.max'), limits.pids > 0 ? String(limits.pids) : 'max');
  }

  /** What the server's memory cgroup holds, or null without one. Page cache not in active use is left out. */
  memory(serverId: string): CgroupMemory | null {
    const dir = this.groupDir(serverId, 'memory');
    if (!dir) return null;
    const v2 = this.kind === 'cgroup-v2';
    const usage = readOr(path.join(dir, v2 ? 'memory.current' : 'memory.usage_in_bytes'), '');
    if (!usage) return null;
    const stat = readOr(path.join(dir, 'memory.stat'), '');
    const inactive = statValue(stat, v2 ? 'inactive_file' : 'total_inactive_file');
    const events = readOr(path.join(dir, v2 ? 'memory.events' : 'memory.oom_control'), '');
    return { bytes: Math.max(0, Number(usage.trim()) - inactive), oomKills: statValue(events, 'oom_kill') };
  }

  /** Pids in the server's cgroup (empty without one). */
  procs(serverId: string): number[] {
    const dir = this.groupDir(serverId, 'pids') ?? this.dirs(serverId)[0];
    if (!dir) return [];
    return readOr(path.join(dir, 'cgroup.procs'), '').split('\n').filter(Boolean).map(Number);
  }

  /**
   * SIGKILLs every process in the server's cgroup, until it is empty: what left the process group
   * (`setsid`, a double fork) is still there, and would otherwise outlive stop, kill and delete. v2
   * writes `cgroup.kill`; v1 freezes the cgroup first (no fork between reading the pids and killing
   * them), kills, thaws, and reads again (at most 2 s). Returns how many processes it signalled
   * (v2: how many there were).
   */
  killAll(serverId: string): number {
    if (this.detect() === 'none') return 0;
    const dir = this.dirs(serverId)[0]!;
    if (!existsSync(dir)) return 0;
    const first = this.procs(serverId);
    if (this.kind === 'cgroup-v2' && existsSync(path.join(dir, 'cgroup.kill'))) {
      try {
        writeFileSync(path.join(dir, 'cgroup.kill'), '1');
      } catch {
        /* fall back to signalling one by one */
      }
    }
    let signalled = 0;
    const deadline = Date.now() + 2000;
    for (let pids = first; pids.length && Date.now() < deadline; pids = this.procs(serverId)) {
      const thaw = this.freeze(serverId);
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
          signalled++;
        } catch {
          /* gone meanwhile */
        }
      }
      thaw();
      sleepSync(5);
    }
    const left = this.procs(serverId).length;
    if (left) log.warn({ serverId, left }, 'processes of the server are still in its cgroup after being killed');
    return Math.max(signalled, first.length);
  }

  /** Freezes the server's cgroup (v1 freezer); returns the thaw. Bounded: gives up after 200 ms. */
  private freeze(serverId: string): () => void {
    const dir = this.groupDir(serverId, 'freezer');
    if (!dir || this.kind !== 'cgroup-v1') return () => undefined;
    const state = path.join(dir, 'freezer.state');
    try {
      writeFileSync(state, 'FROZEN');
      const deadline = Date.now() + 200;
      while (readOr(state, 'FROZEN').trim() !== 'FROZEN' && Date.now() < deadline) sleepSync(1);
    } catch {
      return () => undefined;
    }
    return () => {
      try {
        writeFileSync(state, 'THAWED');
      } catch {
        /* gone */
      }
    };
  }

  /** Whether the server's cgroup holds no process (true without one). */
  empty(serverId: string): boolean {
    return this.procs(serverId).length === 0;
  }

  /** Removes the server's cgroup (only possible once its processes are gone). */
  release(serverId: string): void {
    if (this.detect() === 'none') return;
    for (const dir of this.dirs(serverId)) {
      try {
        rmdirSync(dir);
      } catch {
        /* busy or gone */
      }
    }
  }
}

let shared: ServerCgroups | null = null;
export function sharedCgroups(): ServerCgroups {
  return (shared ??= new ServerCgroups());
}

export interface EnforcementInfo {
  memory: string;
  disk: string;
  cpu: string;
  pids: string;
  cpuMechanism: CgroupKind;
}

/** What this node enforces, in words (for the README / diagnostics). */
export function enforcedLimits(cgroups: ServerCgroups = sharedCgroups()): EnforcementInfo {
  const kind = cgroups.detect();
  const v = kind === 'cgroup-v2' ? 'v2' : 'v1';
  return {
    memory: cgroups.has('memory')
      ? `enforced with cgroup ${v} (${v === 'v2' ? 'memory.max' : 'memory.limit_in_bytes'}): the whole cgroup, including processes that left the process tree and the private /tmp and /dev/shm; a kill for memory in it ends the server (reason memory_limit)`
      : 'enforced by polling: the RSS of the process tree from /proc about every second; over the limit the server is killed (reason memory_limit)',
    disk: 'enforced: allocated blocks of the server directory (every file, directory and link at least 4 KiB) measured before every start (start refused over the limit, reason disk_limit) and periodically while running (server stopped, reason disk_limit)',
    cpu: cgroups.has('cpu')
      ? `enforced with cgroup ${v} ${v === 'v2' ? 'cpu.max' : 'cpu.cfs_quota_us'} (cpu% x 1000 per 100000 us period)`
      : 'not enforced (no writable cgroup cpu controller); usage is still measured and reported',
    pids: cgroups.has('pids') ? `enforced with cgroup ${v} pids.max` : 'not enforced (no writable cgroup pids controller)',
    cpuMechanism: cgroups.has('cpu') ? kind : 'none',
  };
}
