/** Types of the console, power and live-statistics operations. */
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { ServerStatus } from './enums.js';

@ObjectType({ simpleResolvers: true, description: 'GET /servers/:id/console-token: a short-lived token for the node console channel.' })
export class ConsoleTokenType {
  @Field({ description: 'JWT bound to this server and user, verifiable by its node only (≤ 10 minutes).' })
  token!: string;
  @Field({ description: 'The node console address, e.g. wss://node.example.com:5000/console.' })
  socket!: string;
  @Field()
  expiresAt!: Date;
}

@ObjectType({ simpleResolvers: true })
export class CpuStats {
  @Field(() => Int, { nullable: true })
  cores!: number | null;
  @Field(() => Float, { nullable: true, description: 'Usage in percent of the whole machine.' })
  usage!: number | null;
  @Field(() => [Float], { nullable: true, description: 'Load averages over 1, 5 and 15 minutes.' })
  load!: number[] | null;
}

@ObjectType({ simpleResolvers: true, description: 'Total and used, in MiB.' })
export class Capacity {
  @Field(() => Int, { nullable: true })
  total!: number | null;
  @Field(() => Int, { nullable: true })
  used!: number | null;
}

@ObjectType({ simpleResolvers: true })
export class NodeServerCounts {
  @Field(() => Int, { nullable: true })
  total!: number | null;
  @Field(() => Int, { nullable: true })
  running!: number | null;
}

@ObjectType({ simpleResolvers: true, description: 'GET /nodes/:id/stats: live figures from the node agent; online false with nulls when unreachable.' })
export class NodeStatsType {
  @Field()
  online!: boolean;
  @Field(() => CpuStats)
  cpu!: CpuStats;
  @Field(() => Capacity)
  memory!: Capacity;
  @Field(() => Capacity)
  disk!: Capacity;
  @Field(() => NodeServerCounts)
  servers!: NodeServerCounts;
  @Field(() => Float, { nullable: true, description: 'Seconds since the agent started.' })
  uptime!: number | null;
}

@ObjectType({ simpleResolvers: true, description: 'One line of a server console (history first, then live).' })
export class ConsoleLine {
  @Field(() => ID)
  serverId!: string;
  @Field()
  line!: string;
  @Field({ description: 'stdout, stderr, system (agent notices) or install (install script output).' })
  stream!: string;
  @Field({ description: 'ISO-8601 time the node saw the line.' })
  ts!: string;
  @Field(() => Int, {
    nullable: true,
    description: "The node's number of the line: one more for each line of the server, from 1 when its node agent starts. Tells identical lines of one millisecond apart.",
  })
  seq!: number | null;
}

@ObjectType({ simpleResolvers: true, description: 'Lines of a server console as they came during up to 50 ms, and the lines dropped meanwhile.' })
export class ConsoleBatch {
  @Field(() => ID)
  serverId!: string;
  @Field(() => [ConsoleLine], { description: 'In the order the node numbered them; install script lines have stream `install`.' })
  lines!: ConsoleLine[];
  @Field(() => Int, {
    description: 'Lines the node dropped since the previous batch: output over CONSOLE_MAX_LINES_PER_SECOND is not relayed, only counted.',
  })
  skipped!: number;
}

@ObjectType({ simpleResolvers: true })
export class ServerStatusEvent {
  @Field(() => ID)
  serverId!: string;
  @Field(() => ServerStatus)
  status!: string;
}

@ObjectType({ simpleResolvers: true, description: 'Resource use of a running server, about every 2 s.' })
export class ServerStatsEvent {
  @Field(() => ID)
  serverId!: string;
  @Field(() => Float, { description: 'CPU in percent of one core.' })
  cpu!: number;
  @Field(() => Float, { description: 'Memory in MiB.' })
  memory!: number;
  @Field(() => Float, { description: 'Disk in MiB.' })
  disk!: number;
  @Field(() => Float, { description: 'Seconds since start.' })
  uptime!: number;
}

export { GraphQLJSONObject };
