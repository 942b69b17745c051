import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { childLogger } from '../../logger';

const log = childLogger('agent');

export const CFS_PERIOD_US = 100000;

export type CpuLimiterKind = 'cgroup-v1' | 'cgroup-v2' | 'none';

/**
 * CPU limits through cgroups. v1: `/sys/fs/cgroup/cpu/hostpanel/<id>/cpu.cfs_quota_us` = cpu% × 1000 with
 * `cpu.cfs_period_us` = 100000 (100 % = one core). v2: `/sys/fs/cgroup/hostpanel/<id>/cpu.max` = "<quota> 100000".
 * When neither is writable (not root, read-only cgroupfs, …) cpu is not enforced and that is logged once.
 */
export class CpuLimiter {
  private kind: CpuLimiterKind | null = null;
  private warned = false;
  private base = '';

  constructor(private readonly root = '/sys/fs/cgroup', private readonly group = 'hostpanel') {}

  /** Probes once which mechanism works. */
  detect(): CpuLimiterKind {
    if (this.kind) return this.kind;
    this.kind = 'none';
    const v1 = path.join(this.root, 'cpu');
    const v2Controllers = path.join(this.root, 'cgroup.controllers');
    try {
      if (existsSync(path.join(v1, 'cpu.cfs_quota_us'))) {
        const base = path.join(v1, this.group);
        mkdirSync(base, { recursive: true });
        const probe = path.join(base, `.probe-${process.pid}`);
        mkdirSync(probe, { recursive: true });
        try {
          writeFileSync(path.join(probe, 'cpu.cfs_period_us'), String(CFS_PERIOD_US));
          writeFileSync(path.join(probe, 'cpu.cfs_quota_us'), String(CFS_PERIOD_US));
        } finally {
          rmdirSync(probe);
        }
        this.base = base;
        this.kind = 'cgroup-v1';
      } else if (existsSync(v2Controllers) && readFileSync(v2Controllers, 'utf8').split(/\s+/).includes('cpu')) {
        const base = path.join(this.root, this.group);
        mkdirSync(base, { recursive: true });
        writeFileSync(path.join(this.root, 'cgroup.subtree_control'), '+cpu');
        writeFileSync(path.join(base, 'cgroup.subtree_control'), '+cpu');
        this.base = base;
        this.kind = 'cgroup-v2';
      }
    } catch (e) {
      this.kind = 'none';
      log.debug({ err: (e as Error).message }, 'cgroup cpu probe failed');
    }
    if (this.kind === 'none' && !this.warned) {
      this.warned = true;
      log.warn('cpu limits are NOT enforced on this node (no writable cgroup v1 cpu or v2 cpu.max)');
    }
    return this.kind;
  }

  /** Puts a freshly spawned process into the server's cgroup with the given limit. Never throws. */
  apply(serverId: string, pid: number, cpuPercent: number): boolean {
    const kind = this.detect();
    if (kind === 'none' || !(cpuPercent > 0)) return false;
    const dir = path.join(this.base, serverId);
    const quota = Math.max(1000, Math.round(cpuPercent * 1000));
    try {
      mkdirSync(dir, { recursive: true });
      if (kind === 'cgroup-v1') {
        writeFileSync(path.join(dir, 'cpu.cfs_period_us'), String(CFS_PERIOD_US));
        writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(quota));
      } else {
        writeFileSync(path.join(dir, 'cpu.max'), `${quota} ${CFS_PERIOD_US}`);
      }
      writeFileSync(path.join(dir, 'cgroup.procs'), String(pid));
      return true;
    } catch (e) {
      if (!this.warned) {
        this.warned = true;
        log.warn({ err: (e as Error).message }, 'could not apply cpu limit; cpu is not enforced');
      }
      return false;
    }
  }

  /**
   * SIGKILLs every process left in the server's cgroup: what left the process group (`setsid`, a
   * double fork) is still there, and would otherwise outlive stop, kill and delete. Returns how many
   * were signalled.
   */
  killAll(serverId: string): number {
    if (!this.kind || this.kind === 'none') return 0;
    let pids: number[];
    try {
      pids = readFileSync(path.join(this.base, serverId, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
    } catch {
      return 0; // no cgroup for it (never started, or cpu not enforced)
    }
    let n = 0;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        n++;
      } catch {
        /* gone meanwhile */
      }
    }
    return n;
  }

  /** Removes the server's cgroup (only possible once its processes are gone). */
  release(serverId: string): void {
    if (!this.kind || this.kind === 'none') return;
    try {
      rmdirSync(path.join(this.base, serverId));
    } catch {
      /* busy or gone */
    }
  }

  /** Path of a server's cgroup directory (for tests / diagnostics), or null when cpu is not enforced. */
  groupDir(serverId: string): string | null {
    return this.detect() === 'none' ? null : path.join(this.base, serverId);
  }
}

let shared: CpuLimiter | null = null;
export function sharedCpuLimiter(): CpuLimiter {
  return (shared ??= new CpuLimiter());
}

export interface EnforcementInfo {
  memory: string;
  disk: string;
  cpu: string;
  cpuMechanism: CpuLimiterKind;
}

/** What this node enforces, in words (for the README / diagnostics). */
export function enforcedLimits(limiter: CpuLimiter = sharedCpuLimiter()): EnforcementInfo {
  const kind = limiter.detect();
  return {
    memory: 'enforced: the RSS of the whole process tree is polled from /proc about every second; over the limit the server is killed (reason memory_limit)',
    disk: 'enforced: the server directory is measured before every start (start refused over the limit, reason disk_limit) and periodically while running (server stopped, reason disk_limit)',
    cpu:
      kind === 'cgroup-v1'
        ? 'enforced with cgroup v1 cpu.cfs_quota_us (cpu% x 1000 per 100000 us period)'
        : kind === 'cgroup-v2'
          ? 'enforced with cgroup v2 cpu.max (cpu% x 1000 per 100000 us period)'
          : 'not enforced (no writable cgroup cpu controller); usage is still measured and reported',
    cpuMechanism: kind,
  };
}
