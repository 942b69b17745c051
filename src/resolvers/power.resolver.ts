/** Power actions, console tokens and node statistics: the operations that reach a node agent. */
import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { Server } from '../entities/Server.js';
import type { GraphQLContext } from '../graphql/context.js';
import { ConsoleTokenType, NodeStatsType } from '../schema/console.js';
import { ServerType } from '../schema/server.js';
import type { ConsoleTicket } from '../services/power.service.js';
import type { NodeStats } from '../shared/node-protocol.js';

@Resolver()
export class PowerResolver {
  @Mutation(() => ServerType, { description: 'POST /servers/:id/start: offline → starting → running (no-op when starting/running).' })
  startServer(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<Server> {
    return ctx.services.power.power(ctx.actor, id, 'start');
  }

  @Mutation(() => ServerType, { description: 'POST /servers/:id/stop: stop command, then kill after the grace period.' })
  stopServer(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<Server> {
    return ctx.services.power.power(ctx.actor, id, 'stop');
  }

  @Mutation(() => ServerType, { description: 'POST /servers/:id/restart: stop (if needed), then start.' })
  restartServer(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<Server> {
    return ctx.services.power.power(ctx.actor, id, 'restart');
  }

  @Mutation(() => ServerType, { description: 'POST /servers/:id/kill: the process is killed at once.' })
  killServer(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<Server> {
    return ctx.services.power.power(ctx.actor, id, 'kill');
  }

  @Query(() => ConsoleTokenType, { description: 'GET /servers/:id/console-token.' })
  consoleToken(@Arg('serverId', () => ID) serverId: string, @Ctx() ctx: GraphQLContext): Promise<ConsoleTicket> {
    return ctx.services.power.consoleToken(ctx.actor, serverId);
  }

  @Query(() => NodeStatsType, { description: 'GET /nodes/:id/stats (administrators only).' })
  nodeStats(@Arg('nodeId', () => ID) nodeId: string, @Ctx() ctx: GraphQLContext): Promise<NodeStats> {
    return ctx.services.power.nodeStats(ctx.actor, nodeId);
  }
}
