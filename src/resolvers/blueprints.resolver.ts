/** The GraphQL twin of the REST blueprints resource (every signed-in user may read them) and of /admin/blueprints. */
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { Blueprint, BlueprintVariable } from '../entities/Blueprint.js';
import type { GraphQLContext } from '../graphql/context.js';
import { BlueprintPage, BlueprintType, BlueprintVariableType, CreateBlueprintInput, ImportedBlueprintType, UpdateBlueprintInput } from '../schema/blueprint.js';
import { toPage } from '../schema/page.js';
import type { ImportedBlueprint } from '../services/blueprints.service.js';
import { variablesShownTo } from '../services/server-variables.js';
import { parsePagination } from '../validation/pagination.js';
import { given } from './util.js';

const asSent = (input: object) => given(input, { keepNull: true });

/** Top-level fields whose null means something (UpdateBlueprintInput: no install script, no ready pattern, the default shell). */
const MEANINGFUL_NULLS = ['install', 'ready', 'installShell'] as const;

/**
 * An input as REST would get it from JSON: null on a top-level field is "not given" (given()) except
 * where it means something; variables, config files and defaults as plain objects, as they were sent.
 */
function body(input: CreateBlueprintInput | UpdateBlueprintInput): Record<string, unknown> {
  const out = given(input, { keepNull: MEANINGFUL_NULLS });
  if (Array.isArray(input.variables)) out.variables = input.variables.map(asSent);
  if (Array.isArray(input.configFiles)) out.configFiles = input.configFiles.map(asSent);
  if (input.defaults) out.defaults = asSent(input.defaults);
  return out;
}

@Resolver(() => BlueprintType)
export class BlueprintsResolver {
  @Query(() => BlueprintPage, { description: 'GET /blueprints.' })
  async blueprints(
    @Ctx() ctx: GraphQLContext,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('limit', () => Int, { nullable: true }) limit?: number,
  ): Promise<BlueprintPage> {
    return toPage(await ctx.services.blueprints.list(ctx.actor, parsePagination(given({ page, limit })))) as BlueprintPage;
  }

  @Query(() => BlueprintType, { description: 'GET /blueprints/:id.' })
  async blueprint(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<Blueprint> {
    return ctx.services.blueprints.get(ctx.actor, id);
  }

  @Mutation(() => BlueprintType, { description: 'POST /admin/blueprints (administrators only).' })
  createBlueprint(@Arg('input', () => CreateBlueprintInput) input: CreateBlueprintInput, @Ctx() ctx: GraphQLContext): Promise<Blueprint> {
    return ctx.services.blueprints.create(ctx.actor, body(input));
  }

  @Mutation(() => BlueprintType, { description: 'PATCH /admin/blueprints/:id (administrators only; built-in blueprints: INVALID_STATE).' })
  updateBlueprint(@Arg('id', () => ID) id: string, @Arg('input', () => UpdateBlueprintInput) input: UpdateBlueprintInput, @Ctx() ctx: GraphQLContext): Promise<Blueprint> {
    return ctx.services.blueprints.update(ctx.actor, id, body(input));
  }

  @Mutation(() => Boolean, { description: 'DELETE /admin/blueprints/:id (administrators only). INVALID_STATE while servers use it. Always true.' })
  async deleteBlueprint(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    await ctx.services.blueprints.remove(ctx.actor, id);
    return true;
  }

  @Mutation(() => ImportedBlueprintType, { description: 'POST /admin/blueprints/import (administrators only): a Pterodactyl or Pelican egg (PTDL_v1, PTDL_v2, PLCN_v1 to PLCN_v3) as a new blueprint, with warnings for what is not mapped.' })
  importBlueprint(@Arg('egg', () => GraphQLJSONObject) egg: Record<string, unknown>, @Ctx() ctx: GraphQLContext): Promise<ImportedBlueprint> {
    return ctx.services.blueprints.importEgg(ctx.actor, egg);
  }

  @Mutation(() => ImportedBlueprintType, { description: 'POST /admin/blueprints/import with a YAML body (administrators only): the egg as YAML text, as Pelican exports it (at most 1 MiB; VALIDATION_ERROR `fields.egg` with the line when it does not parse).' })
  importBlueprintYaml(@Arg('egg', () => String) egg: string, @Ctx() ctx: GraphQLContext): Promise<ImportedBlueprint> {
    return ctx.services.blueprints.importEggYaml(ctx.actor, egg);
  }

  /** Wherever a blueprint is read (`blueprint`, `blueprints`, a server's `blueprint`): hidden variables for administrators only. */
  @FieldResolver(() => [BlueprintVariableType])
  variables(@Root() blueprint: Pick<Blueprint, 'variables'>, @Ctx() ctx: GraphQLContext): BlueprintVariable[] {
    return variablesShownTo(ctx.actor, blueprint);
  }
}
