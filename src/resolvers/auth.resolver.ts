/** The GraphQL twin of src/rest/auth.routes.ts: signUp, signIn, signOut, session. */
import { clientAddress } from '../http/limit-middleware.js';
import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { SESSION_COOKIE, sessionCookieOptions } from '../http/auth.js';
import type { GraphQLContext } from '../graphql/context.js';
import { AuthPayload, SessionInfo, SignInInput, SignUpInput } from '../schema/auth.js';
import type { SignedIn } from '../services/auth.service.js';
import { given, httpRequest } from './util.js';

function signedIn(ctx: GraphQLContext, s: SignedIn): AuthPayload {
  const req = httpRequest(ctx);
  if (req && ctx.res) ctx.res.cookie(SESSION_COOKIE, s.token, sessionCookieOptions(req, s.session.expiresAt));
  return { user: s.user, token: s.token, expiresAt: s.session.expiresAt };
}

@Resolver()
export class AuthResolver {
  @Mutation(() => AuthPayload, { description: 'POST /auth/signup. Sets the session cookie and returns the session token.' })
  async signUp(@Arg('input', () => SignUpInput) input: SignUpInput, @Ctx() ctx: GraphQLContext): Promise<AuthPayload> {
    return signedIn(ctx, await ctx.services.auth.signup(given(input), { ip: clientAddress(ctx.req) }));
  }

  @Mutation(() => AuthPayload, { description: 'POST /auth/signin. Sets the session cookie and returns the session token.' })
  async signIn(@Arg('input', () => SignInInput) input: SignInInput, @Ctx() ctx: GraphQLContext): Promise<AuthPayload> {
    return signedIn(ctx, await ctx.services.auth.signin(given(input), { ip: clientAddress(ctx.req) }));
  }

  @Mutation(() => Boolean, { description: 'POST /auth/signout: ends the credential it is sent with at once (a session is signed out, an API token revoked) and clears the cookie. Always true.' })
  async signOut(@Ctx() ctx: GraphQLContext): Promise<boolean> {
    await ctx.services.auth.signout(ctx.actor);
    ctx.res?.clearCookie(SESSION_COOKIE, { path: '/' });
    return true;
  }

  @Query(() => SessionInfo, { description: 'GET /auth/session.' })
  session(@Ctx() ctx: GraphQLContext): SessionInfo {
    return ctx.services.auth.session(ctx.actor) as SessionInfo;
  }
}
