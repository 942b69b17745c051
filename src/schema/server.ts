import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { ServerStatus } from './enums.js';
import { Paginated } from './page.js';

@ObjectType('Server', { simpleResolvers: true, description: 'A game or app server. memory and disk in MiB, cpu in percent of one core.' })
export class ServerType {
  @Field(() => ID)
  id!: string;

  @Field()
  name!: string;

  @Field()
  description!: string;

  @Field(() => ID)
  ownerId!: string;

  @Field(() => ID)
  nodeId!: string;

  @Field(() => ID)
  blueprintId!: string;

  // owner, node, blueprint: field resolvers through the request's loaders (src/resolvers/servers.resolver.ts).

  @Field(() => Int)
  memory!: number;

  @Field(() => Int)
  cpu!: number;

  @Field(() => Int)
  disk!: number;

  @Field(() => Int, { description: 'How many backups the server may keep (0: none).' })
  backupLimit!: number;

  @Field(() => ServerStatus)
  status!: string;

  @Field(() => GraphQLJSONObject, { description: 'Values of the blueprint variables (strings).' })
  variables!: Record<string, string>;

  @Field()
  autoRestart!: boolean;

  @Field(() => Int, { nullable: true, description: 'Exit code of the last crash.' })
  lastExitCode!: number | null;

  @Field(() => Date, { nullable: true })
  lastCrashAt!: Date | null;

  @Field(() => String, { nullable: true, description: 'Why the process last ended: stopped, killed, crashed, memory_limit, …' })
  lastStopReason!: string | null;

  @Field(() => Int)
  crashCount!: number;

  @Field(() => [String], { description: 'The permission keys you hold on this server: ["*"] (every key) for its owner and administrators, the granted keys for a subuser.' })
  permissions!: string[];

  @Field()
  createdAt!: Date;

  @Field()
  updatedAt!: Date;
}

@ObjectType('ServerPage', { simpleResolvers: true })
export class ServerPage extends Paginated(ServerType) {}

@InputType('CreateServerInput')
export class CreateServerInput {
  @Field()
  name!: string;

  @Field({ nullable: true })
  description?: string;

  @Field(() => ID)
  nodeId!: string;

  @Field(() => ID)
  blueprintId!: string;

  @Field(() => Int, { nullable: true, description: 'MiB, ≥ 64; default: the blueprint\'s.' })
  memory?: number;

  @Field(() => Int, { nullable: true, description: 'Percent of one core, 1..cores×100; default: the blueprint\'s.' })
  cpu?: number;

  @Field(() => Int, { nullable: true, description: 'MiB, ≥ 128; default: the blueprint\'s.' })
  disk?: number;

  @Field(() => Int, { nullable: true, description: 'Backups the server may keep, 0..1000; default BACKUP_LIMIT_DEFAULT. Above it, administrators only (VALIDATION_ERROR, fields.backupLimit).' })
  backupLimit?: number;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Blueprint variable values (strings), checked against the blueprint\'s rules.' })
  variables?: Record<string, string>;

  @Field({ nullable: true })
  autoRestart?: boolean;

  @Field(() => ID, { nullable: true, description: 'Administrators only: create the server for another user.' })
  ownerId?: string;
}

@InputType('UpdateServerInput', { description: 'Changes take effect at the next start. The node, blueprint and owner cannot change.' })
export class UpdateServerInput {
  @Field({ nullable: true })
  name?: string;

  @Field({ nullable: true })
  description?: string;

  @Field(() => Int, { nullable: true })
  memory?: number;

  @Field(() => Int, { nullable: true })
  cpu?: number;

  @Field(() => Int, { nullable: true })
  disk?: number;

  @Field(() => Int, { nullable: true, description: 'At most the server\'s limit now or BACKUP_LIMIT_DEFAULT, whichever is larger, unless an administrator sets it (VALIDATION_ERROR, fields.backupLimit).' })
  backupLimit?: number;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Merged into the current values.' })
  variables?: Record<string, string>;

  @Field({ nullable: true })
  autoRestart?: boolean;
}
