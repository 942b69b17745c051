/**
 * GraphQL over WebSocket (graphql-ws protocol) at `/graphql` on the panel's HTTP server.
 *
 * Connection auth: `connectionParams.authorization` ("Bearer <secret>"), else the Authorization
 * header or the session cookie of the upgrade request; resolved with `services.auth.authenticate`
 * (the same secrets as REST). No or an invalid credential → the socket is closed with 4401; a cookie
 * from a foreign Origin (cross-site WebSocket hijacking) → 4403.
 *
 * Every operation then runs in its own MikroORM RequestContext and re-authenticates with the same
 * secret (a session signed out or a token revoked meanwhile stops working for new operations), spends
 * from the same rate-limit bucket as over HTTP, and passes the same depth/cost limits. Errors are
 * formatted by the one mapping in src/resolvers/errors.ts.
 *
 * The subscriptions (consoleOutput, serverStatus, serverStats) are declared in
 * src/resolvers/console.resolver.ts; the actor is `context.actor`, authorized as the server's owner or
 * an admin. An operation's context lives as long as the subscription; `onSocketClosed` below is the
 * place to release per-connection resources if any are added.
 */
import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { Duplex } from 'node:stream';
import { RequestContext } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import {
  execute,
  getVariableValues,
  GraphQLError,
  NoSchemaIntrospectionCustomRule,
  parse,
  specifiedRules,
  validate,
  type ExecutionArgs,
  type GraphQLSchema,
} from 'graphql';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { credentialOf } from '../http/auth.js';
import { clientAddress, consumeAll } from '../http/limit-middleware.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { childLogger } from '../logger.js';
import { formatGraphQLError, graphQLErrorOf } from '../resolvers/errors.js';
import type { Actor } from '../services/actor.js';
import type { Services } from '../services/index.js';
import { bucketsForDocument } from './buckets.js';
import { createLoaders, type GraphQLContext } from './context.js';
import { checkLimits } from './limits.js';
import { resolveOperation } from './operation.js';
import { sharedSubscribe } from './shared-subscribe.js';
import { serveGraphQLWs } from './ws-transport.js';

const log = childLogger('graphql-ws');

export const WS_PATH = '/graphql';
/** Close codes: the same 4401 as the node console channel for bad credentials. */
export const WS_UNAUTHORIZED = 4401;
export const WS_FORBIDDEN = 4403;
/** How often an open connection's credential is checked again (see watchCredential). */
export const CREDENTIAL_RECHECK_MS = 5_000;

export interface GraphQLWsDeps {
  schema: GraphQLSchema;
  services: Services;
  limiter: RateLimiter;
  config: Config;
  orm: MikroORM;
  httpServer: HttpServer;
}

interface ConnExtra {
  socket: WebSocket;
  request: IncomingMessage;
  /** The credential secret accepted at connection time. */
  secret?: string;
  actor?: Actor;
}

/** A cookie-authenticated upgrade must come from our own origin (or a trusted one). */
function originAllowed(req: IncomingMessage, config: Config): boolean {
  const origin = req.headers.origin;
  if (!origin) return true; // not a browser page
  if (origin === 'null') return false;
  try {
    return new URL(origin).host === req.headers.host || config.trustedOrigins.includes(origin);
  } catch {
    return false;
  }
}

export function attachGraphQLWebSocket(deps: GraphQLWsDeps): { close(): Promise<void> } {
  const { schema, services, limiter, config, orm, httpServer } = deps;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  const rules = config.graphqlIntrospection ? specifiedRules : [...specifiedRules, NoSchemaIntrospectionCustomRule];

  // Only upgrades to /graphql are ours; other paths are left to other listeners.
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    let pathname: string;
    try {
      pathname = new URL(req.url ?? '/', 'http://x').pathname;
    } catch {
      return;
    }
    if (pathname !== WS_PATH) return;
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  };
  httpServer.on('upgrade', onUpgrade);

  const authenticate = (secret: string) => RequestContext.create(orm.em, () => services.auth.authenticate(secret));

  /**
   * A connection lives as long as its credential: signing out, revoking the API token, a password
   * change that ends the session, or its expiry closes it with 4401 within CREDENTIAL_RECHECK_MS,
   * on whichever gateway instance holds it (the check reads the database). A failed check (database
   * unreachable) keeps the connection and tries again next time.
   */
  const watchCredential = (socket: WebSocket, secret: string) => {
    const timer = setInterval(() => {
      if (socket.readyState !== socket.OPEN) return;
      authenticate(secret).then(
        (still) => {
          if (!still && socket.readyState === socket.OPEN) socket.close(WS_UNAUTHORIZED, 'Your credentials are no longer valid');
        },
        (err: unknown) => log.warn({ err }, 'could not re-check a GraphQL connection\'s credential; trying again later'),
      );
    }, CREDENTIAL_RECHECK_MS);
    timer.unref();
    socket.once('close', () => clearInterval(timer));
  };

  /** Runs one operation: fresh ORM context, re-authentication, rate limit, then graphql execute/subscribe. */
  const run = (kind: 'execute' | 'subscribe') => async (args: ExecutionArgs) =>
    RequestContext.create(orm.em, async () => {
      const ctx = args.contextValue as GraphQLContext & { __secret?: string };
      const actor = ctx.__secret ? await services.auth.authenticate(ctx.__secret) : null;
      if (!actor) return { errors: [graphQLErrorOf(AppError.unauthorized('Your credentials are no longer valid. Reconnect with a valid token.'))] };
      ctx.actor = actor;
      const r = await consumeAll(limiter, bucketsForDocument(args.document, args.operationName), (bucket) =>
        bucket !== 'auth' ? `user:${actor.user.id}` : `ip:${clientAddress(ctx.req as IncomingMessage & { ip?: string })}`,
      );
      if (!r.allowed) {
        return {
          errors: [graphQLErrorOf(new AppError('RATE_LIMITED', `Too many requests. Try again in ${r.retryAfter} seconds.`, { retryAfter: r.retryAfter }))],
        };
      }
      return kind === 'execute' ? execute(args) : sharedSubscribe(args);
    });

  const disposable = serveGraphQLWs<Record<string, unknown> | undefined, ConnExtra>(
    {
      schema,
      connectionInitWaitTimeout: 10_000,
      onConnect: async (ctx) => {
        const req = ctx.extra.request;
        const cred = credentialOf(req, ctx.connectionParams?.authorization);
        if (!cred || !cred.secret) {
          ctx.extra.socket.close(WS_UNAUTHORIZED, 'Unauthorized');
          return false;
        }
        if (cred.via === 'cookie' && !originAllowed(req, config)) {
          ctx.extra.socket.close(WS_FORBIDDEN, 'Forbidden: cross-site connection refused');
          return false;
        }
        const actor = await authenticate(cred.secret);
        if (!actor) {
          ctx.extra.socket.close(WS_UNAUTHORIZED, 'Unauthorized');
          return false;
        }
        (ctx.extra as ConnExtra).secret = cred.secret;
        (ctx.extra as ConnExtra).actor = actor;
        watchCredential(ctx.extra.socket, cred.secret);
        return true;
      },
      onSubscribe: (ctx, _id, payload) => {
        let document;
        try {
          document = parse(payload.query, { maxTokens: 20_000 });
        } catch (err) {
          return [err instanceof GraphQLError ? new GraphQLError(err.message, { ...err, extensions: { code: 'GRAPHQL_PARSE_FAILED' } }) : new GraphQLError('Invalid query.')];
        }
        const errors = validate(schema, document, rules);
        if (errors.length) return errors.map((e) => new GraphQLError(e.message, { nodes: e.nodes, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
        const operation = resolveOperation(document, payload.operationName);
        if (operation instanceof GraphQLError) return [operation];
        const tooMuch = checkLimits(schema, document, payload.variables ?? undefined, payload.operationName);
        if (tooMuch) return [tooMuch];
        // variables are coerced here, as Apollo does over HTTP, so that bad ones get the same VALIDATION_ERROR
        const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], payload.variables ?? {}, { maxErrors: 50 });
        if (coerced.errors) return coerced.errors.map((e) => new GraphQLError(e.message, { nodes: e.nodes, extensions: { code: 'BAD_USER_INPUT' } }));
        const contextValue: GraphQLContext & { __secret?: string } = {
          actor: (ctx.extra as ConnExtra).actor ?? null,
          services,
          req: ctx.extra.request as IncomingMessage,
          res: null,
          loaders: createLoaders(orm, services),
          __secret: (ctx.extra as ConnExtra).secret,
        };
        return {
          schema,
          document,
          variableValues: payload.variables ?? undefined,
          operationName: payload.operationName ?? undefined,
          contextValue,
        };
      },
      execute: run('execute'),
      subscribe: run('subscribe'),
      onNext: (_ctx, _id, _payload, _args, result) => {
        if (!result.errors?.length) return;
        return { ...result, errors: result.errors.map((e) => formatGraphQLError(e.toJSON(), e)) };
      },
      onError: (_ctx, _id, _payload, errors) => errors.map((e) => formatGraphQLError(e.toJSON(), e)),
    },
    wss,
    { maxBufferedBytes: config.subscriberMaxBufferedBytes },
  );

  wss.on('error', (err) => log.warn({ err }, 'graphql-ws server error'));

  return {
    async close() {
      httpServer.off('upgrade', onUpgrade);
      for (const client of wss.clients) client.close(1001, 'Server shutting down');
      await disposable.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
