/**
 * The plant store in GraphQL: `addPlant` (POST /plants) and `plant(id)`. The service reads
 * the plant from the raw JSON text of a REST body (to keep int64 ids exact), so the resolver writes
 * that text from the arguments: the id is already a canonical decimal (Int64 scalar), embedded as a
 * JSON number; name and tag are JSON-encoded. Errors are the service's (BAD_REQUEST for a taken id).
 */
import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../graphql/context.js';
import { Int64Scalar, PlantType } from '../schema/plant.js';

@Resolver(() => PlantType)
export class PlantsResolver {
  @Mutation(() => PlantType, { description: 'POST /plants. A taken id is BAD_REQUEST.' })
  async addPlant(
    @Arg('id', () => Int64Scalar) id: string,
    @Arg('name', () => String) name: string,
    @Ctx() ctx: GraphQLContext,
    @Arg('tag', () => String, { nullable: true }) tag?: string,
  ): Promise<PlantType> {
    const raw = `{"id":${id},"name":${JSON.stringify(name)}${tag === undefined || tag === null ? '' : `,"tag":${JSON.stringify(tag)}`}}`;
    const p = await ctx.services.plants.create(ctx.actor, raw);
    return { id, name: p.name, tag: p.tag ?? null };
  }

  @Query(() => PlantType, { nullable: true, description: 'A plant by id; null when there is none.' })
  async plant(@Arg('id', () => Int64Scalar) id: string, @Ctx() ctx: GraphQLContext): Promise<PlantType | null> {
    const p = await ctx.services.plants.get(ctx.actor, id);
    return p ? { id: p.id, name: p.name, tag: p.tag ?? null } : null;
  }
}
