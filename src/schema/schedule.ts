/** Types of schedules and their runs. Enumerated values are strings (checked by the same zod schemas as REST). */
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { Paginated } from './page.js';

@ObjectType('ScheduleTask', { simpleResolvers: true, description: 'One step of a schedule.' })
export class ScheduleTaskType {
  @Field(() => Int, { description: 'Position in the list, from 1.' })
  sequence!: number;
  @Field({ description: '`command`, `power` or `backup`.' })
  action!: string;
  @Field(() => GraphQLJSONObject, { description: '`command`: `{ command }`; `power`: `{ action }`; `backup`: `{}`.' })
  payload!: Record<string, unknown>;
  @Field(() => Int, { description: 'Seconds waited after the previous task (0..900).' })
  offsetSeconds!: number;
  @Field()
  continueOnFailure!: boolean;
}

@ObjectType('Schedule', { simpleResolvers: true, description: 'A cron schedule of a server and the tasks it runs.' })
export class ScheduleType {
  @Field(() => ID)
  id!: string;
  @Field(() => ID)
  serverId!: string;
  @Field()
  name!: string;
  @Field({ description: 'Five fields: minute hour day-of-month month day-of-week.' })
  cron!: string;
  @Field({ description: 'IANA time zone the expression is read in.' })
  timezone!: string;
  @Field()
  enabled!: boolean;
  @Field()
  onlyWhenOnline!: boolean;
  @Field(() => [ScheduleTaskType])
  tasks!: ScheduleTaskType[];
  @Field(() => Date, { nullable: true })
  lastRunAt!: Date | null;
  @Field(() => Date, { nullable: true, description: 'Null while disabled.' })
  nextRunAt!: Date | null;
  @Field()
  createdAt!: Date;
  @Field()
  updatedAt!: Date;
}

@ObjectType('SchedulePage', { simpleResolvers: true })
export class SchedulePage extends Paginated(ScheduleType) {}

@ObjectType('ScheduleRunTask', { simpleResolvers: true })
export class ScheduleRunTaskType {
  @Field(() => Int)
  sequence!: number;
  @Field({ description: '`pending`, `running`, `completed`, `failed` or `skipped`.' })
  status!: string;
  @Field(() => String, { nullable: true, description: 'Why it failed or was skipped.' })
  error!: string | null;
}

@ObjectType('ScheduleRun', { simpleResolvers: true, description: 'One run of a schedule.' })
export class ScheduleRunType {
  @Field(() => ID)
  id!: string;
  @Field({ description: '`cron` or `manual`.' })
  trigger!: string;
  @Field({ description: '`running`, `completed`, `failed` or `skipped`.' })
  status!: string;
  @Field()
  startedAt!: Date;
  @Field(() => Date, { nullable: true })
  finishedAt!: Date | null;
  @Field(() => [ScheduleRunTaskType])
  tasks!: ScheduleRunTaskType[];
}

@ObjectType('ScheduleRunPage', { simpleResolvers: true })
export class ScheduleRunPage extends Paginated(ScheduleRunType) {}

@InputType('ScheduleTaskInput')
export class ScheduleTaskInput {
  @Field({ description: '`command`, `power` or `backup`.' })
  action!: string;
  @Field(() => GraphQLJSONObject, { nullable: true })
  payload?: Record<string, unknown>;
  @Field(() => Int, { nullable: true, description: 'Default 0.' })
  offsetSeconds?: number;
  @Field({ nullable: true, description: 'Default false.' })
  continueOnFailure?: boolean;
}

@InputType('CreateScheduleInput')
export class CreateScheduleInput {
  @Field()
  name!: string;
  @Field()
  cron!: string;
  @Field({ nullable: true, description: 'Default UTC.' })
  timezone?: string;
  @Field({ nullable: true, description: 'Default true.' })
  enabled?: boolean;
  @Field({ nullable: true, description: 'Default false.' })
  onlyWhenOnline?: boolean;
  @Field(() => [ScheduleTaskInput])
  tasks!: ScheduleTaskInput[];
}

@InputType('UpdateScheduleInput')
export class UpdateScheduleInput {
  @Field({ nullable: true })
  name?: string;
  @Field({ nullable: true })
  cron?: string;
  @Field({ nullable: true })
  timezone?: string;
  @Field({ nullable: true })
  enabled?: boolean;
  @Field({ nullable: true })
  onlyWhenOnline?: boolean;
  @Field(() => [ScheduleTaskInput], { nullable: true, description: 'The whole list (replaces the tasks).' })
  tasks?: ScheduleTaskInput[];
}
