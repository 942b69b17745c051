/** The GraphQL twin of src/rest/startup.routes.ts. */
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../graphql/context.js';
import { ServerStartupType } from '../schema/startup.js';
import type { StartupView } from '../services/startup.service.js';

@Resolver()
export class StartupResolver {
  @Query(() => ServerStartupType, { description: 'GET /servers/:id/startup (startup.read): the user-viewable variables and the startup command.' })
  serverStartup(@Arg('serverId', () => ID) serverId: string, @Ctx() ctx: GraphQLContext): Promise<StartupView> {
    return ctx.services.startup.get(ctx.actor, serverId);
  }

  @Mutation(() => ServerStartupType, { description: 'PUT /servers/:id/startup (startup.update): sets user-editable variables ({ KEY: "value" }), each checked by its rules. Without startup.read the answer holds only the variables sent and the startup template.' })
  updateServerStartup(
    @Arg('serverId', () => ID) serverId: string,
    @Arg('variables', () => GraphQLJSONObject) variables: Record<string, unknown>,
    @Ctx() ctx: GraphQLContext,
  ): Promise<StartupView> {
    return ctx.services.startup.update(ctx.actor, serverId, { variables });
  }
}
