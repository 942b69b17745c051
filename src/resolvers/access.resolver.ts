/** The GraphQL twin of src/rest/shared-access.routes.ts: permission keys, subusers, the activity log. */
import { Arg, Ctx, ID, Int, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { GraphQLContext } from '../graphql/context.js';
import { PERMISSION_CATALOGUE } from '../permissions/keys.js';
import { ActivityFilterInput, ActivityPage, ActivityType, CreateSubuserInput, PermissionType, SubuserPage, SubuserType, UpdateSubuserInput } from '../schema/access.js';
import { toPage } from '../schema/page.js';
import type { ActivityEntry } from '../services/activity.service.js';
import { parsePagination } from '../validation/pagination.js';
import { given } from './util.js';
import { parseActivityQuery } from '../validation/activity.js';

const listQuery = (filter: ActivityFilterInput | undefined, page?: number, limit?: number) => ({ ...given(filter), ...given({ page, limit }) });

@Resolver()
export class AccessResolver {
  @Query(() => [PermissionType], { description: 'GET /permissions.' })
  permissions(@Ctx() ctx: GraphQLContext): PermissionType[] {
    ctx.services.users.me(ctx.actor);
    return PERMISSION_CATALOGUE.map((p) => ({ ...p }));
  }

  @Query(() => SubuserPage, { description: 'GET /servers/:id/subusers (user.read).' })
  async subusers(
    @Arg('serverId', () => ID) serverId: string,
    @Ctx() ctx: GraphQLContext,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('limit', () => Int, { nullable: true }) limit?: number,
  ): Promise<SubuserPage> {
    return toPage(await ctx.services.subusers.list(ctx.actor, serverId, parsePagination(given({ page, limit }))));
  }

  @Mutation(() => SubuserType, { description: 'POST /servers/:id/subusers (user.create).' })
  createSubuser(@Arg('serverId', () => ID) serverId: string, @Arg('input', () => CreateSubuserInput) input: CreateSubuserInput, @Ctx() ctx: GraphQLContext) {
    return ctx.services.subusers.create(ctx.actor, serverId, given(input));
  }

  @Mutation(() => SubuserType, { description: 'PATCH /servers/:id/subusers/:userId (user.update).' })
  updateSubuser(
    @Arg('serverId', () => ID) serverId: string,
    @Arg('userId', () => ID) userId: string,
    @Arg('input', () => UpdateSubuserInput) input: UpdateSubuserInput,
    @Ctx() ctx: GraphQLContext,
  ) {
    return ctx.services.subusers.update(ctx.actor, serverId, userId, given(input));
  }

  @Mutation(() => Boolean, { description: 'DELETE /servers/:id/subusers/:userId (user.delete). Always true.' })
  async deleteSubuser(@Arg('serverId', () => ID) serverId: string, @Arg('userId', () => ID) userId: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    await ctx.services.subusers.remove(ctx.actor, serverId, userId);
    return true;
  }

  @Query(() => ActivityPage, { description: 'GET /servers/:id/activity (activity.read), newest first.' })
  async serverActivity(
    @Arg('serverId', () => ID) serverId: string,
    @Ctx() ctx: GraphQLContext,
    @Arg('filter', () => ActivityFilterInput, { nullable: true }) filter?: ActivityFilterInput,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('limit', () => Int, { nullable: true }) limit?: number,
  ): Promise<ActivityPage> {
    return toPage(await ctx.services.activity.forServer(ctx.actor, serverId, parseActivityQuery(listQuery(filter, page, limit)))) as ActivityPage;
  }

  @Query(() => ActivityPage, { description: 'GET /users/me/activity: what you did, newest first.' })
  async myActivity(
    @Ctx() ctx: GraphQLContext,
    @Arg('filter', () => ActivityFilterInput, { nullable: true }) filter?: ActivityFilterInput,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('limit', () => Int, { nullable: true }) limit?: number,
  ): Promise<ActivityPage> {
    return toPage(await ctx.services.activity.mine(ctx.actor, parseActivityQuery(listQuery(filter, page, limit)))) as ActivityPage;
  }

  @Query(() => ActivityPage, { description: 'GET /admin/activity (administrators), newest first.' })
  async adminActivity(
    @Ctx() ctx: GraphQLContext,
    @Arg('filter', () => ActivityFilterInput, { nullable: true }) filter?: ActivityFilterInput,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('limit', () => Int, { nullable: true }) limit?: number,
  ): Promise<ActivityPage> {
    return toPage(await ctx.services.activity.all(ctx.actor, parseActivityQuery(listQuery(filter, page, limit)))) as ActivityPage;
  }

  @Subscription(() => ActivityType, {
    name: 'serverActivity',
    description: 'New activity entries of a server as they are recorded (activity.read).',
    subscribe: (async ({ args, context }: { args: { serverId: string }; context: GraphQLContext }) =>
      context.services.activity.subscribe(context.actor, args.serverId)) as any,
  })
  serverActivityAdded(@Arg('serverId', () => ID) _serverId: string, @Root() entry: ActivityEntry): ActivityEntry {
    return entry;
  }
}
