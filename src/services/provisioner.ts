import type { Server } from '../entities/Server.js';

/**
 * How the servers service reaches the node that hosts a server. The real implementation
 * (src/nodes/agent-provisioner.ts) calls the node agent; `noProvisioner` does nothing (tests of
 * pure records, and panels without agents).
 */
export interface ServerProvisioner {
  /** Tells the node about a new or changed server. Best effort: the agent also pulls its servers at boot. */
  sync(server: Server): Promise<void>;
  /** Kills the server's process and removes its files. Throws AppError NODE_UNAVAILABLE when unreachable. */
  remove(server: Server): Promise<void>;
  /**
   * Gives the node the server's current spec, then has it run the install script again over the
   * server's files. Throws AppError NODE_UNAVAILABLE when unreachable.
   */
  reinstall(server: Server): Promise<void>;
}

export const noProvisioner: ServerProvisioner = {
  sync: async () => undefined,
  remove: async () => undefined,
  reinstall: async () => undefined,
};
