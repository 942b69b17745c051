/** Types of shared access (subusers, permission keys) and the activity log. */
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, ObjectType } from 'type-graphql';
import { Paginated } from './page.js';

@ObjectType('Permission', { simpleResolvers: true, description: 'GET /permissions: a key a server owner can grant to a subuser.' })
export class PermissionType {
  @Field()
  key!: string;
  @Field()
  description!: string;
}

@ObjectType('Subuser', { simpleResolvers: true, description: 'An account a server is shared with, with the keys granted.' })
export class SubuserType {
  @Field(() => ID)
  userId!: string;
  @Field()
  email!: string;
  @Field()
  name!: string;
  @Field(() => [String])
  permissions!: string[];
  @Field(() => [String], { description: 'Folders the file permissions are limited to; empty: the whole server.' })
  paths!: string[];
  @Field()
  createdAt!: Date;
  @Field()
  updatedAt!: Date;
}

@ObjectType('SubuserPage', { simpleResolvers: true })
export class SubuserPage extends Paginated(SubuserType) {}

@InputType('CreateSubuserInput')
export class CreateSubuserInput {
  @Field({ description: 'The email of an existing account.' })
  email!: string;
  @Field(() => [String])
  permissions!: string[];
  @Field(() => [String], { nullable: true })
  paths?: string[];
}

@InputType('UpdateSubuserInput')
export class UpdateSubuserInput {
  @Field(() => [String], { nullable: true })
  permissions?: string[];
  @Field(() => [String], { nullable: true })
  paths?: string[];
}

@ObjectType('ActivityActor', { simpleResolvers: true })
export class ActivityActorType {
  @Field(() => ID)
  id!: string;
  @Field({ description: 'Their email at the time of the action.' })
  email!: string;
}

@ObjectType('Activity', { simpleResolvers: true, description: 'An entry of the activity log.' })
export class ActivityType {
  @Field(() => ID)
  id!: string;
  @Field({ description: '`area:action`, e.g. `server:power.start`.' })
  event!: string;
  @Field(() => ID, { nullable: true })
  serverId!: string | null;
  @Field(() => ActivityActorType, { nullable: true })
  actor!: ActivityActorType | null;
  @Field(() => ID, { nullable: true })
  apiTokenId!: string | null;
  @Field(() => String, { nullable: true, description: "The client address; null for a reader who is neither the entry's actor nor an administrator." })
  ip!: string | null;
  @Field(() => GraphQLJSONObject)
  properties!: Record<string, unknown>;
  @Field()
  createdAt!: Date;
}

@ObjectType('ActivityPage', { simpleResolvers: true })
export class ActivityPage extends Paginated(ActivityType) {}

@InputType('ActivityFilter', { description: 'Filters of the activity lists (all optional).' })
export class ActivityFilterInput {
  @Field({ nullable: true, description: 'Event name prefix, e.g. `server:power`.' })
  event?: string;
  @Field(() => ID, { nullable: true })
  serverId?: string;
  @Field(() => ID, { nullable: true })
  actorId?: string;
  @Field({ nullable: true, description: 'ISO-8601: entries at or after this time.' })
  since?: string;
  @Field({ nullable: true, description: 'ISO-8601: entries before this time.' })
  until?: string;
}
