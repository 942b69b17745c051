/**
 * Every resolver class of the gateway (the schema is built from this list).
 * After adding one, regenerate schema.graphql (UPDATE_SCHEMA=1 npx jest test/graphql/schema-file.test.ts).
 */
import { AdminResolver } from './admin.resolver.js';
import { AuthResolver } from './auth.resolver.js';
import { BlueprintsResolver } from './blueprints.resolver.js';
import { NodesResolver } from './nodes.resolver.js';
import { PlantsResolver } from './plants.resolver.js';
import { ServersResolver } from './servers.resolver.js';
import { UsersResolver } from './users.resolver.js';
import { PowerResolver } from './power.resolver.js';
import { ConsoleResolver } from './console.resolver.js';
import { AccessResolver } from './access.resolver.js';
import { BackupsResolver } from './backups.resolver.js';
import { FilesResolver } from './files.resolver.js';
import { SchedulesResolver } from './schedules.resolver.js';
import { StartupResolver } from './startup.resolver.js';

export const RESOLVERS = [AuthResolver, UsersResolver, ServersResolver, NodesResolver, BlueprintsResolver, AdminResolver, PlantsResolver, PowerResolver, ConsoleResolver, AccessResolver, FilesResolver, BackupsResolver, SchedulesResolver, StartupResolver] as const;
