/** The GraphQL twin of /admin/users, /admin/users/:id and /admin/stats (administrators only; the `admin` bucket). */
import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../graphql/context.js';
import { PlatformStatsType } from '../schema/admin.js';
import { toPage } from '../schema/page.js';
import { UpdateUserInput, UserPage, UserType } from '../schema/user.js';
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

  @Query(() => UserType, { description: 'GET /admin/users/:id.' })
  adminUser(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<UserType> {
    return ctx.services.accounts.get(ctx.actor, id);
  }

  @Mutation(() => UserType, { description: 'PATCH /admin/users/:id: name, email, password or role of an account.' })
  updateUser(@Arg('id', () => ID) id: string, @Arg('input', () => UpdateUserInput) input: UpdateUserInput, @Ctx() ctx: GraphQLContext): Promise<UserType> {
    return ctx.services.accounts.update(ctx.actor, id, given(input));
  }

  @Mutation(() => Boolean, { description: 'DELETE /admin/users/:id: INVALID_STATE for your own account, an account that owns servers, or the last administrator. Always true.' })
  async deleteUser(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    await ctx.services.accounts.remove(ctx.actor, id);
    return true;
  }

  @Query(() => PlatformStatsType, { description: 'GET /admin/stats.' })
  async adminStats(@Ctx() ctx: GraphQLContext): Promise<PlatformStats> {
    return ctx.services.admin.stats(ctx.actor);
  }
}
