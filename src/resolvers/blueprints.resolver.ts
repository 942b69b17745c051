/** The GraphQL twin of the REST blueprints resource (every signed-in user may read them). */
import { Arg, Ctx, ID, Int, Query, Resolver } from 'type-graphql';
import type { Blueprint } from '../entities/Blueprint.js';
import type { GraphQLContext } from '../graphql/context.js';
import { BlueprintPage, BlueprintType } from '../schema/blueprint.js';
import { toPage } from '../schema/page.js';
import { parsePagination } from '../validation/pagination.js';

@Resolver(() => BlueprintType)
export class BlueprintsResolver {
  @Query(() => BlueprintPage, { description: 'GET /blueprints.' })
  async blueprints(
    @Ctx() ctx: GraphQLContext,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('limit', () => Int, { nullable: true }) limit?: number,
  ): Promise<BlueprintPage> {
    return toPage(await ctx.services.blueprints.list(ctx.actor, parsePagination({ page, limit }))) as BlueprintPage;
  }

  @Query(() => BlueprintType, { description: 'GET /blueprints/:id.' })
  async blueprint(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<Blueprint> {
    return ctx.services.blueprints.get(ctx.actor, id);
  }
}
