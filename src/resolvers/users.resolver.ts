/** The GraphQL twin of src/rest/users.routes.ts: me, updateMe, API tokens. */
import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../graphql/context.js';
import { ApiTokenPage, CreateApiTokenInput, CreatedApiToken } from '../schema/auth.js';
import { toPage } from '../schema/page.js';
import { UpdateMeInput, UserType } from '../schema/user.js';
import { parsePagination } from '../validation/pagination.js';
import { given } from './util.js';

@Resolver()
export class UsersResolver {
  @Query(() => UserType, { description: 'GET /users/me.' })
  me(@Ctx() ctx: GraphQLContext): UserType {
    return ctx.services.users.me(ctx.actor);
  }

  @Mutation(() => UserType, { description: 'PATCH /users/me.' })
  async updateMe(@Arg('input', () => UpdateMeInput) input: UpdateMeInput, @Ctx() ctx: GraphQLContext): Promise<UserType> {
    return ctx.services.users.updateMe(ctx.actor, given(input));
  }

  @Query(() => ApiTokenPage, { description: 'GET /users/me/api-tokens (active tokens only).' })
  async apiTokens(
    @Ctx() ctx: GraphQLContext,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('limit', () => Int, { nullable: true }) limit?: number,
  ): Promise<ApiTokenPage> {
    ctx.services.users.me(ctx.actor); // 401 before 422 for anonymous callers, as in REST
    return toPage(await ctx.services.users.listApiTokens(ctx.actor, parsePagination(given({ page, limit }))));
  }

  @Mutation(() => CreatedApiToken, { description: 'POST /users/me/api-tokens. The secret (`token`) is returned this once.' })
  async createApiToken(@Arg('input', () => CreateApiTokenInput) input: CreateApiTokenInput, @Ctx() ctx: GraphQLContext): Promise<CreatedApiToken> {
    const { token, secret } = await ctx.services.users.createApiToken(ctx.actor, given(input));
    const { id, name, prefix, createdAt, expiresAt, lastUsedAt } = token;
    return { id, name, prefix, createdAt, expiresAt, lastUsedAt, token: secret };
  }

  @Mutation(() => Boolean, { description: 'DELETE /users/me/api-tokens/:id. The token stops working at once. Always true.' })
  async revokeApiToken(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    await ctx.services.users.revokeApiToken(ctx.actor, id);
    return true;
  }
}
