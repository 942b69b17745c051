import os from 'node:os';
import { statfs } from 'node:fs/promises';
import type { NodeStats } from '../shared/node-protocol';

const MIB = 1024 * 1024;

function cpuTimes(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const c of os.cpus()) {
    const t = c.times;
    idle += t.idle;
    total += t.user + t.nice + t.sys + t.idle + t.irq;
  }
  return { idle, total };
}

/** Node-wide figures for GET /api/system and the heartbeat. */
export class SystemStats {
  private last = cpuTimes();
  private lastAt = Date.now();
  private usage = 0;
  private readonly bootAt = Date.now();

  constructor(private readonly dataDir: string) {}

  private cpuUsage(): number {
    if (Date.now() - this.lastAt >= 250) {
      const now = cpuTimes();
      const dTotal = now.total - this.last.total;
      const dIdle = now.idle - this.last.idle;
      if (dTotal > 0) this.usage = Math.max(0, Math.min(100, ((dTotal - dIdle) / dTotal) * 100));
      this.last = now;
      this.lastAt = Date.now();
    }
    return Math.round(this.usage * 10) / 10;
  }

  async collect(servers: { total: number; running: number }): Promise<NodeStats> {
    let disk: NodeStats['disk'] = { total: null, used: null };
    try {
      const s = await statfs(this.dataDir);
      disk = { total: Math.round((s.blocks * s.bsize) / MIB), used: Math.round(((s.blocks - s.bfree) * s.bsize) / MIB) };
    } catch {
      /* data dir not there */
    }
    const total = os.totalmem();
    return {
      online: true,
      cpu: { cores: os.cpus().length || null, usage: this.cpuUsage(), load: os.loadavg().map((n) => Math.round(n * 100) / 100) },
      memory: { total: Math.round(total / MIB), used: Math.round((total - os.freemem()) / MIB) },
      disk,
      servers,
      uptime: Math.floor((Date.now() - this.bootAt) / 1000),
    };
  }
}
