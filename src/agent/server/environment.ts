import type { ServerSpec } from '../../shared/node-protocol';
import { childLogger } from '../../logger';
import type { AgentError } from '../errors';
import type { AgentPaths } from '../paths';
import type { ServerCgroups } from '../environment/cgroup';
import { childEnv } from '../environment/env';
import { identityFor, isolationRefusal, ownDirectory, type ServerIdentity } from '../environment/isolation';
import { ManagedProcess } from '../environment/process';
import { privateTmpAvailable } from '../environment/sandbox';

const log = childLogger('agent');

export interface EnvironmentOptions {
  paths: AgentPaths;
  cgroups: ServerCgroups;
  pidsMax: number;
  allowUnisolated: boolean;
  maxLineLength: number;
}

/**
 * Where a server's processes run: as its own user (see environment/isolation.ts), in its cgroup
 * with its limits, with a private /tmp and /dev/shm where the node allows them.
 */
export class ServerEnvironment {
  /** Who its processes run as; null: as the agent itself. */
  readonly identity: ServerIdentity | null;

  constructor(
    private readonly serverId: string,
    readonly dir: string,
    uid: number,
    private readonly opts: EnvironmentOptions,
  ) {
    this.identity = identityFor(uid);
  }

  /** The refusal to run a process of the server when it would have the agent's privileges, or null. */
  refusal(): AgentError | null {
    return isolationRefusal(this.identity, this.opts.allowUnisolated);
  }

  /** Makes the server's directory its own (see ownDirectory). */
  own(): Promise<void> {
    return ownDirectory(this.dir, this.identity);
  }

  /**
   * Its processes run in a private mount namespace (private /tmp, the server's directory at
   * /mnt/server and /home/container): the node allows it and the server has a user of its own.
   */
  get sandboxed(): boolean {
    return !!this.identity && privateTmpAvailable();
  }

  /** Spawns a process of the server (startup or install) with the limits of `spec`. */
  spawn(spec: ServerSpec, argv: string[]): ManagedProcess {
    const cgroups = this.opts.cgroups;
    const proc = new ManagedProcess({
      argv,
      cwd: this.dir,
      env: childEnv(spec, this.dir),
      maxLineLength: this.opts.maxLineLength,
      identity: this.identity,
      gate: cgroups.detect() !== 'none',
      privateTmp: this.sandboxed ? { sizeMib: privateTmpSizeMib(spec.memory), agentRoot: this.opts.paths.root, serverDir: this.dir } : null,
    });
    if (proc.pid) {
      cgroups.apply(this.serverId, proc.pid, { cpu: spec.cpu, memory: spec.memory, pids: this.opts.pidsMax });
      proc.release(); // in its cgroup now: the command may run
    }
    return proc;
  }

  /** Kills whatever is left in the server's cgroup (`setsid`, double forks) and removes the cgroup. */
  empty(): void {
    const strays = this.opts.cgroups.killAll(this.serverId);
    if (strays) log.info({ serverId: this.serverId, strays }, "killed processes left in the server's cgroup");
    this.opts.cgroups.release(this.serverId);
  }

  /** How many times the kernel killed a process of the server for memory since its cgroup was made. */
  oomKills(): number {
    return this.opts.cgroups.memory(this.serverId)?.oomKills ?? 0;
  }
}

/**
 * Each private tmpfs holds at most half the server's memory (512 MiB without a limit): a full /tmp
 * leaves the processes room to run instead of the kernel's OOM killer ending the server.
 */
export function privateTmpSizeMib(memoryMib: number): number {
  return memoryMib > 0 ? Math.max(1, Math.floor(memoryMib / 2)) : 512;
}
