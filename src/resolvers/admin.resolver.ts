/** The GraphQL twin of /admin/users and /admin/stats (administrators only; the `admin` bucket). */
import { Arg, Ctx, Int, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../graphql/context.js';
import { PlatformStatsType } from '../schema/admin.js';
import { toPage } from '../schema/page.js';
import { UserPage } from '../schema/user.js';
import type { PlatformStats } from '../services/admin.service.js';
import { parseAdminUsersQuery } from '../validation/admin.js';
import { given } from './util.js';

@Resolver()
export class AdminResolver {
  @Query(() => UserPage, { description: 'GET /admin/users: every account, oldest first; `search` matches email or name (case-insensitive).' })
  async adminUsers(
    @Ctx() ctx: GraphQLContext,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('limit', () => Int, { nullable: true }) limit?: number,
    @Arg('search', () => String, { nullable: true }) search?: string,
  ): Promise<UserPage> {
    return toPage(await ctx.services.admin.users(ctx.actor, parseAdminUsersQuery(given({ page, limit, search })))) as UserPage;
  }

  @Query(() => PlatformStatsType, { description: 'GET /admin/stats.' })
  async adminStats(@Ctx() ctx: GraphQLContext): Promise<PlatformStats> {
    return ctx.services.admin.stats(ctx.actor);
  }
}
