/**
 * The GraphQL twin of the REST servers resource. Relations (owner, node, blueprint) are resolved
 * through the per-request DataLoaders: a page brings the relations it selects with its own query
 * and primes the loaders; anywhere else they cost one batched query per relation, not one per server.
 */
import type { GraphQLResolveInfo } from 'graphql';
import { Arg, Ctx, FieldResolver, ID, Info, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import type { Server } from '../entities/Server.js';
import { AppError } from '../errors.js';
import type { GraphQLContext, RecordLoader } from '../graphql/context.js';
import { ownerShown, shownVariables, type BlueprintRecord, type NodeRecord, type ServerRecord, type UserRecord } from '../services/records.js';
import { selectedFields } from '../graphql/selection.js';
import { BlueprintType } from '../schema/blueprint.js';
import { ServerStatus } from '../schema/enums.js';
import { NodeType } from '../schema/node.js';
import { toPage } from '../schema/page.js';
import { CreateServerInput, ServerPage, ServerType, UpdateServerInput } from '../schema/server.js';
import { UserType } from '../schema/user.js';
import { given } from './util.js';
import { parseServerListQuery } from '../validation/servers.js';

/** A relation through its per-request loader (one batched query per type and tick). */
function related<T extends { id: string }>(id: string, loader: RecordLoader<T>, what: string): T | Promise<T> {
  return (
    loader.peek(id) ??
    loader.load(id).then((found) => {
      if (!found) throw AppError.notFound(what); // deleted meanwhile
      return found;
    })
  );
}

@Resolver(() => ServerType)
export class ServersResolver {
  @Query(() => ServerPage, { description: 'GET /servers: your servers (administrators: all), oldest first.' })
  async servers(
    @Ctx() ctx: GraphQLContext,
    @Info() info: GraphQLResolveInfo,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('limit', () => Int, { nullable: true }) limit?: number,
    @Arg('status', () => ServerStatus, { nullable: true }) status?: string,
    @Arg('nodeId', () => ID, { nullable: true }) nodeId?: string,
  ): Promise<ServerPage> {
    // the relations the operation selects come with the page (same query) and answer the item
    // fields synchronously from the loaders
    const wanted = selectedFields(info, ['items']);
    const list = await ctx.services.servers.list(ctx.actor, parseServerListQuery(given({ page, limit, status, nodeId })), { owner: wanted.has('owner'), node: wanted.has('node'), blueprint: wanted.has('blueprint') });
    ctx.loaders.user.remember(list.included.users);
    ctx.loaders.node.remember(list.included.nodes);
    ctx.loaders.blueprint.remember(list.included.blueprints);
    return toPage(list) as ServerPage;
  }

  @Query(() => ServerType, { description: 'GET /servers/:id. Another user\'s server is NOT_FOUND.' })
  async server(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<Server> {
    return ctx.services.servers.get(ctx.actor, id);
  }

  @Mutation(() => ServerType, { description: 'POST /servers.' })
  async createServer(@Arg('input', () => CreateServerInput) input: CreateServerInput, @Ctx() ctx: GraphQLContext): Promise<Server> {
    return ctx.services.servers.create(ctx.actor, given(input));
  }

  @Mutation(() => ServerType, { description: 'PATCH /servers/:id.' })
  async updateServer(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateServerInput) input: UpdateServerInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<Server> {
    return ctx.services.servers.update(ctx.actor, id, given(input));
  }

  @Mutation(() => Boolean, {
    description:
      'DELETE /servers/:id: the node kills the process and removes its files (NODE_UNAVAILABLE when it cannot be reached). ' +
      '`force: true` (administrators only) drops the record even then. Always true.',
  })
  async deleteServer(
    @Arg('id', () => ID) id: string,
    @Ctx() ctx: GraphQLContext,
    @Arg('force', () => Boolean, { nullable: true }) force?: boolean,
  ): Promise<boolean> {
    await ctx.services.servers.remove(ctx.actor, id, { force: force ?? false });
    return true;
  }

  @Mutation(() => ServerType, {
    description:
      "POST /servers/:id/reinstall (the owner and administrators): runs the blueprint's install script again over the server's files, which stay. " +
      'The server must be offline or install_failed (INVALID_STATE otherwise); it is installing, then offline or install_failed.',
  })
  async reinstallServer(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<Server> {
    return ctx.services.servers.reinstall(ctx.actor, id);
  }

  @FieldResolver(() => GraphQLJSONObject, { description: 'Values of the blueprint variables (strings); for everyone but administrators, without the variables the blueprint hides from users; {} for a subuser without startup.read.' })
  variables(@Root() server: ServerRecord): Record<string, string> {
    return shownVariables(server);
  }

  @FieldResolver(() => [String], { description: 'The folders your file keys are limited to on this server (a subuser\u2019s `paths`); empty: the whole server. Open the first to browse its files.' })
  paths(@Root() server: ServerRecord & { paths?: string[] }, @Ctx() ctx: GraphQLContext): string[] | Promise<string[]> {
    return server.paths ?? ctx.services.servers.scopes(ctx.actor, server.id);
  }

  @FieldResolver(() => UserType, {
    nullable: true,
    description: "The server's owner, for its owner, administrators and subusers holding user.read (who see the server's users); null for other subusers (ownerId is always there).",
  })
  owner(@Root() server: ServerRecord, @Ctx() ctx: GraphQLContext): UserRecord | Promise<UserRecord> | null {
    return ownerShown(server) ? related(server.ownerId, ctx.loaders.user, 'User') : null;
  }

  @FieldResolver(() => NodeType, { description: 'The node hosting the server (visible to whoever may see the server).' })
  node(@Root() server: ServerRecord, @Ctx() ctx: GraphQLContext): NodeRecord | Promise<NodeRecord> {
    return related(server.nodeId, ctx.loaders.node, 'Node');
  }

  @FieldResolver(() => BlueprintType)
  blueprint(@Root() server: ServerRecord, @Ctx() ctx: GraphQLContext): BlueprintRecord | Promise<BlueprintRecord> {
    return related(server.blueprintId, ctx.loaders.blueprint, 'Blueprint');
  }
}
