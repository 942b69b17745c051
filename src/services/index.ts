import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import type { MasterKey } from '../security/master-key.js';
import { AgentClient } from '../nodes/agent-client.js';
import { AgentProvisioner } from '../nodes/agent-provisioner.js';
import { AdminService } from './admin.service.js';
import { AuthService } from './auth.service.js';
import { BlueprintsService } from './blueprints.service.js';
import { NodeAgentService } from './node-agent.service.js';
import { NodesService } from './nodes.service.js';
import { PlantsService } from './plants.service.js';
import { PowerService } from './power.service.js';
import { ServerEvents } from './server-events.js';
import { ConsoleService } from './console.service.js';
import { LocalBus, type ConsoleBus } from '../console/bus.js';
import { ServersService } from './servers.service.js';
import { UsersService } from './users.service.js';

/** The domain layer: REST routes and GraphQL resolvers call these and nothing below them. */
export interface Services {
  auth: AuthService;
  users: UsersService;
  servers: ServersService;
  nodes: NodesService;
  blueprints: BlueprintsService;
  admin: AdminService;
  plants: PlantsService;
  power: PowerService;
  nodeAgent: NodeAgentService;
  events: ServerEvents;
  console: ConsoleService;
  /** Transport to node agents (used by the agent routes to verify signatures). */
  agents: AgentClient;
}

export function createServices(orm: MikroORM, config: Config, masterKey: MasterKey, bus: ConsoleBus = new LocalBus()): Services {
  const events = new ServerEvents();
  const agents = new AgentClient(orm, masterKey);
  // ServersService gets this: it pushes server specs to (and removes servers from) their node agent.
  const provisioner = new AgentProvisioner(orm, agents);
  const servers = new ServersService(orm, provisioner);
  const power = new PowerService(orm, agents, config, events, servers);
  return {
    auth: new AuthService(orm, config),
    users: new UsersService(orm),
    servers,
    nodes: new NodesService(orm, masterKey),
    blueprints: new BlueprintsService(orm),
    admin: new AdminService(orm),
    plants: new PlantsService(orm),
    power,
    console: new ConsoleService(orm, power, bus),
    nodeAgent: new NodeAgentService(orm, events, provisioner),
    events,
    agents,
  };
}
