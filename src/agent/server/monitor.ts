import type { CgroupMemory } from '../environment/cgroup';
import { treeUsage } from '../environment/proc';
import { serverDiskUsage } from '../filesystem/usage';

const MIB = 1024 * 1024;

export interface ServerStats {
  /** percent of one core (100 = one full core) */
  cpu: number;
  /** MiB */
  memory: number;
  /** MiB */
  disk: number;
  /** seconds since the process was started (0 when not running) */
  uptime: number;
}

export interface MonitorHooks {
  onStats(stats: ServerStats): void;
  onMemoryExceeded(usedMib: number): void;
  onDiskExceeded(usedMib: number): void;
  limits(): { memory: number; disk: number };
  /** what the server's memory cgroup holds, or null without one */
  cgroupMemory(): CgroupMemory | null;
}

export interface MonitorOptions {
  statsIntervalMs: number;
  statsPushIntervalMs: number;
  diskCheckIntervalMs: number;
}

const round1 = (n: number): number => Math.round(n * 10) / 10;

/**
 * Polls a running server: cpu time from /proc and memory (its cgroup's, else the RSS of its process
 * tree) every `statsIntervalMs` (killing over the memory limit), the server directory size every `diskCheckIntervalMs`, and pushes
 * a stats snapshot every `statsPushIntervalMs`.
 */
export class ResourceMonitor {
  private pid: number | null = null;
  private timers: NodeJS.Timeout[] = [];
  private cpu = 0;
  private memoryBytes = 0;
  private diskBytes = 0;
  private startedAt: Date | null = null;
  private lastCpu: { seconds: number; at: number } | null = null;
  private polling = false;
  private diskPolling = false;
  private limitHit = false;

  constructor(
    private readonly dir: string,
    private readonly opts: MonitorOptions,
    private readonly hooks: MonitorHooks,
  ) {}

  setDisk(bytes: number): void {
    this.diskBytes = bytes;
  }

  start(pid: number): void {
    this.stop();
    this.pid = pid;
    this.startedAt = new Date();
    this.lastCpu = null;
    this.limitHit = false;
    this.timers.push(setInterval(() => void this.poll(), this.opts.statsIntervalMs));
    this.timers.push(setInterval(() => void this.pollDisk(), this.opts.diskCheckIntervalMs));
    // nothing is pushed before the first poll has measured the process: not yet measured is not 0
    this.timers.push(setInterval(() => this.pushStats(), this.opts.statsPushIntervalMs));
    void this.poll();
  }

  private pushStats(): void {
    if (this.lastCpu) this.hooks.onStats(this.snapshot(this.startedAt));
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.pid = null;
    this.cpu = 0;
    this.memoryBytes = 0;
    this.startedAt = null;
  }

  snapshot(startedAt: Date | null): ServerStats {
    return {
      cpu: round1(this.cpu),
      memory: round1(this.memoryBytes / MIB),
      disk: round1(this.diskBytes / MIB),
      uptime: startedAt && this.pid !== null ? Math.floor((Date.now() - startedAt.getTime()) / 1000) : 0,
    };
  }

  private async poll(): Promise<void> {
    if (this.polling || this.pid === null) return;
    this.polling = true;
    const pid = this.pid;
    try {
      const usage = await treeUsage(pid);
      if (this.pid !== pid) return;
      const now = Date.now();
      if (this.lastCpu && now > this.lastCpu.at) {
        this.cpu = Math.max(0, ((usage.cpuSeconds - this.lastCpu.seconds) / ((now - this.lastCpu.at) / 1000)) * 100);
      }
      this.lastCpu = { seconds: usage.cpuSeconds, at: now };
      // the cgroup holds what left the process tree and the private /tmp too; the kernel keeps it
      // under the limit by killing a process in it, which ends the server as well
      const cgroup = this.hooks.cgroupMemory();
      this.memoryBytes = cgroup ? cgroup.bytes : usage.rssBytes;
      const limit = this.hooks.limits().memory;
      const over = limit > 0 && (this.memoryBytes > limit * MIB || (cgroup?.oomKills ?? 0) > 0);
      if (!this.limitHit && over) {
        this.limitHit = true;
        this.hooks.onMemoryExceeded(Math.round(this.memoryBytes / MIB));
      }
    } finally {
      this.polling = false;
    }
  }

  private async pollDisk(): Promise<void> {
    if (this.diskPolling || this.pid === null) return;
    this.diskPolling = true;
    try {
      this.diskBytes = await serverDiskUsage(this.dir);
      const limit = this.hooks.limits().disk;
      if (this.pid !== null && limit > 0 && this.diskBytes > limit * MIB) this.hooks.onDiskExceeded(Math.round(this.diskBytes / MIB));
    } finally {
      this.diskPolling = false;
    }
  }
}
