import { Field, Int, ObjectType } from 'type-graphql';

@ObjectType('ServerStatusCounts', { simpleResolvers: true, description: 'Number of servers in each status.' })
export class ServerStatusCounts {
  @Field(() => Int) installing!: number;
  @Field(() => Int) install_failed!: number;
  @Field(() => Int) offline!: number;
  @Field(() => Int) starting!: number;
  @Field(() => Int) running!: number;
  @Field(() => Int) stopping!: number;
  @Field(() => Int) restoring!: number;
}

@ObjectType('ServerCounts', { simpleResolvers: true })
export class ServerCounts {
  @Field(() => Int) total!: number;
  @Field(() => ServerStatusCounts) byStatus!: ServerStatusCounts;
}

@ObjectType('NodeCounts', { simpleResolvers: true })
export class NodeCounts {
  @Field(() => Int) total!: number;
  @Field(() => Int) online!: number;
}

@ObjectType('CapacityUsage', { simpleResolvers: true, description: 'MiB allocated to servers vs the total of all nodes.' })
export class CapacityUsage {
  @Field(() => Int) allocated!: number;
  @Field(() => Int) total!: number;
}

@ObjectType('PlatformStats', { simpleResolvers: true, description: 'GET /admin/stats.' })
export class PlatformStatsType {
  @Field(() => Int) users!: number;
  @Field(() => ServerCounts) servers!: ServerCounts;
  @Field(() => NodeCounts) nodes!: NodeCounts;
  @Field(() => Int) blueprints!: number;
  @Field(() => CapacityUsage) memory!: CapacityUsage;
  @Field(() => CapacityUsage) disk!: CapacityUsage;
}
