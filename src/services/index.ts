import type { MikroORM } from '@mikro-orm/postgresql';
import type Redis from 'ioredis';
import type { Config } from '../config.js';
import type { MasterKey } from '../security/master-key.js';
import { AgentClient } from '../nodes/agent-client.js';
import { NodeNotices } from '../nodes/node-notices.js';
import { AgentProvisioner } from '../nodes/agent-provisioner.js';
import { AccountsService } from './accounts.service.js';
import { AdminService } from './admin.service.js';
import { AuthService } from './auth.service.js';
import { BlueprintsService } from './blueprints.service.js';
import { LookupService } from './lookup.service.js';
import { NodeAgentService } from './node-agent.service.js';
import { NodesService } from './nodes.service.js';
import { PlantsService } from './plants.service.js';
import { PowerService } from './power.service.js';
import { SigninThrottle } from './signin-throttle.js';
import { ConsoleService } from './console.service.js';
import { LocalBus, type ConsoleBus } from '../console/bus.js';
import { ServersService } from './servers.service.js';
import { UsersService } from './users.service.js';
import { AccessService } from './access.service.js';
import { ActivityService } from './activity.service.js';
import { SftpService } from './sftp.service.js';
import { BackupsService } from './backups.service.js';
import { SubusersService } from './subusers.service.js';
import { FilesService } from './files.service.js';
import { SchedulesService } from './schedules.service.js';
import { StartupService } from './startup.service.js';
import { ScheduleRunner, type RunnerClock } from '../schedules/runner.js';
import { taskPerformer } from '../schedules/tasks.js';

/** The domain layer: REST routes and GraphQL resolvers call these and nothing below them. */
export interface Services {
  auth: AuthService;
  users: UsersService;
  servers: ServersService;
  nodes: NodesService;
  blueprints: BlueprintsService;
  admin: AdminService;
  /** Administrators' changes of other accounts, and the announcements of what they took away. */
  accounts: AccountsService;
  plants: PlantsService;
  power: PowerService;
  nodeAgent: NodeAgentService;
  console: ConsoleService;
  subusers: SubusersService;
  files: FilesService;
  activity: ActivityService;
  schedules: SchedulesService;
  /** A server's user-viewable startup variables and the command they make. */
  startup: StartupService;
  /** Claims and executes due schedule runs (started by the platform). */
  scheduleRunner: ScheduleRunner;
  /** Rows by id in batches (GraphQL relations). */
  lookup: LookupService;
  /** Backups: records and rules here, the data on the nodes. */
  backups: BackupsService;
  /** SFTP logins (asked by node agents), connection details, ending sessions. */
  sftp: SftpService;
  /** Transport to node agents (used by the agent routes to verify signatures). */
  agents: AgentClient;
  /** What an actor holds on a server (the permission policy's input). */
  access: AccessService;
  /**
   * Several gateway instances (REDIS_URL): the per-account sign-in throttle (API and SFTP) counts in
   * `redis`, shared by every instance of the platform (`namespace`), instead of in this process.
   */
  shareThrottles(redis: Redis, namespace: string): void;
}

export function createServices(orm: MikroORM, config: Config, masterKey: MasterKey, bus: ConsoleBus = new LocalBus(), clock: RunnerClock = {}): Services {
  const agents = new AgentClient(orm, masterKey);
  // ServersService gets this: it pushes server specs to (and removes servers from) their node agent.
  const provisioner = new AgentProvisioner(orm, agents);
  const access = new AccessService(orm);
  const activity = new ActivityService(orm, access, bus);
  const rules = { userCommandBlueprints: config.userCommandBlueprints, quota: config.userQuota, backupLimitDefault: config.backupLimitDefault };
  const servers = new ServersService(orm, provisioner, rules, activity, bus);
  // revocations reach a node that cannot be told at once after its next heartbeat
  const notices = new NodeNotices(orm, agents);
  const power = new PowerService(orm, agents, config, servers, activity, notices);
  const consoles = new ConsoleService(orm, power, servers, bus, access);
  const subusers = new SubusersService(orm, access, activity);
  // a subuser who lost rights is re-checked by every live subscription and console socket at once
  subusers.onAccessChanged(({ serverId, userId }) => {
    void consoles.accessChanged(serverId, userId).catch(() => undefined);
    void power.accessChanged(serverId, userId);
  });
  const throttle = new SigninThrottle();
  const auth = new AuthService(orm, config, activity, throttle);
  const users = new UsersService(orm, activity);
  const sftp = new SftpService(orm, auth, access, activity, agents);
  const accounts = new AccountsService(orm, activity, bus, notices);
  // a password change ends the account's other sessions; what they hold open on the nodes closes too
  users.onPasswordChanged((userId) => void accounts.takeBack(userId, 'password'));
  const backups = new BackupsService(orm, access, agents, activity, bus);
  const scheduleRunner = new ScheduleRunner(orm, activity, taskPerformer(power, backups, access, () => orm.em, config.stopGraceSeconds), clock);
  const nodeAgent = new NodeAgentService(orm, activity);
  nodeAgent.onBackupReport((r) => backups.progress(r));
  nodeAgent.onHeartbeat((node, cameBack) => notices.afterHeartbeat(node, cameBack));
  return {
    auth,
    users,
    sftp,
    servers,
    nodes: new NodesService(orm, masterKey, activity, config.localAgent),
    blueprints: new BlueprintsService(orm, activity),
    admin: new AdminService(orm),
    accounts,
    plants: new PlantsService(orm),
    power,
    console: consoles,
    subusers,
    activity,
    schedules: new SchedulesService(orm, access, activity, scheduleRunner),
    startup: new StartupService(orm, servers, rules, activity),
    scheduleRunner,
    files: new FilesService(servers, agents, activity, config),
    nodeAgent,
    backups,
    agents,
    access,
    lookup: new LookupService(orm),
    shareThrottles: (redis, namespace) => throttle.share(redis, namespace),
  };
}
