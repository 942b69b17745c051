import type { MikroORM } from '@mikro-orm/postgresql';
import type { Server } from '../entities/Server.js';
import { AppError } from '../errors.js';
import type { ServerProvisioner } from '../services/provisioner.js';
import type { AgentClient } from './agent-client.js';
import { serverSpec } from './spec.js';

/** The real provisioner: pushes server specs to their node's agent and removes them there. */
/** How long a node may take to remove a server (a busy node kills many processes at once). */
const REMOVE_TIMEOUT_MS = 10_000;

export class AgentProvisioner implements ServerProvisioner {
  constructor(
    private readonly orm: MikroORM,
    private readonly agents: AgentClient,
  ) {}

  async sync(server: Server): Promise<void> {
    const em = this.orm.em;
    await em.populate(server, ['node', 'blueprint']);
    await this.agents.call(server.node, 'PUT', `/api/servers/${server.id}`, serverSpec(server));
  }

  async reinstall(server: Server): Promise<void> {
    // the spec first: the blueprint's install script may have changed since the node last got it
    await this.sync(server);
    await this.agents.call(server.node, 'POST', `/api/servers/${server.id}/reinstall`);
  }

  async remove(server: Server): Promise<void> {
    await this.orm.em.populate(server, ['node']);
    try {
      // the node kills the server's processes (and waits for its cgroup to empty) before it answers
      await this.agents.call(server.node, 'DELETE', `/api/servers/${server.id}`, undefined, REMOVE_TIMEOUT_MS);
    } catch (err) {
      // The agent never heard of it (e.g. created while the node was down): nothing to remove there.
      if (!(err instanceof AppError && err.code === 'NOT_FOUND')) throw err;
    }
  }
}
