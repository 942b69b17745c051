/**
 * GraphQL over WebSocket (graphql-ws protocol) at `/graphql` on the panel's HTTP server.
 *
 * Upgrades: any other path is answered 404 and closed; an address with too many sockets that have
 * not authenticated yet gets 429 (src/graphql/ws-caps.ts, which also caps sockets and live
 * operations per user).
 *
 * Connection auth: `connectionParams.authorization` ("Bearer <secret>"), else the Authorization
 * header or the session cookie of the upgrade request, read and resolved by `authenticateRequest`
 * (the same reader and secrets as REST). No or an invalid credential → the socket is closed with
 * 4401; a cookie connection that fails the one origin rule (`originAllowed`, cross-site WebSocket
 * hijacking) → 4403. A socket that sends no `connection_init` within 10 s is closed by graphql-ws (4408).
 *
 * Message size: at most 1 MiB until `connection_init` is accepted, then `maxMessageBytes` (enough for a
 * writeFile of FILE_EDIT_MAX_BYTES of text). Over it the socket is closed with 1009 (message too big).
 * A message over 1 MiB spends the budget of large HTTP bodies (src/graphql/ws-large-messages.ts).
 *
 * Every operation then runs in its own MikroORM RequestContext and re-authenticates with the same
 * secret (a session signed out or a token revoked meanwhile stops working for new operations), spends
 * from the same rate-limit bucket as over HTTP, and passes the same depth/cost limits. Errors are
 * formatted by the one mapping in src/resolvers/errors.ts.
 *
 * The subscriptions (consoleOutput, serverStatus, serverStats) are declared in
 * src/resolvers/console.resolver.ts; the actor is `context.actor`, authorized as the server's owner or
 * an admin. An operation's context lives as long as the subscription.
 */
import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { Duplex } from 'node:stream';
import { RequestContext } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import {
  execute,
  GraphQLError,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import { WebSocketServer, type WebSocket } from 'ws';
import { parseOperationText } from './parse-text.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { authenticateRequest, originAllowed } from '../http/auth.js';
import { answerOnSocket } from '../http/client-errors.js';
import { clientAddress, consumeAll } from '../http/limit-middleware.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { childLogger } from '../logger.js';
import { formatGraphQLError, graphQLErrorOf } from '../resolvers/errors.js';
import type { Actor } from '../services/actor.js';
import type { Services } from '../services/index.js';
import { chargesForDocument } from './buckets.js';
import { createLoaders, type GraphQLContext } from './context.js';
import { introspectionRules } from './introspection.js';
import type { LargeBodyBudget } from './large-bodies.js';
import { checkLimits } from './limits.js';
import { resolveOperation } from './operation.js';
import { sharedSubscribe, type DirectContext } from './shared-subscribe.js';
import { SendBudget } from '../shared/send-budget.js';
import { setMaxMessageBytes } from '../shared/ws-internals.js';
import { SocketCaps, WS_TOO_MANY } from './ws-caps.js';
import { CredentialWatch, WS_FORBIDDEN, WS_UNAUTHORIZED } from './ws-credentials.js';
import { coerceVariables } from './variables.js';
import { budgetLargeMessages } from './ws-large-messages.js';
import { sendOrDrop, serveGraphQLWs } from './ws-transport.js';

const log = childLogger('graphql-ws');

export const WS_PATH = '/graphql';
export { CREDENTIAL_RECHECK_MS, WS_FORBIDDEN, WS_UNAUTHORIZED } from './ws-credentials.js';
/** The most a socket may send in one message before its `connection_init` is accepted (as an anonymous HTTP body). */
export const ANONYMOUS_MESSAGE_BYTES = 1024 * 1024;

export interface GraphQLWsDeps {
  schema: GraphQLSchema;
  services: Services;
  limiter: RateLimiter;
  config: Config;
  orm: MikroORM;
  httpServer: HttpServer;
  /**
   * The most an authenticated socket may send in one message (src/graphql/index.ts graphqlBodyLimit:
   * a writeFile of FILE_EDIT_MAX_BYTES of text); default ANONYMOUS_MESSAGE_BYTES. A message over it
   * closes the socket with 1009 (message too big): ws reads the length first and has no way to answer
   * an operation it has not read, so every other operation on that socket ends too.
   */
  maxMessageBytes?: number;
  /** The budget of large bodies that large messages spend too (src/graphql/ws-large-messages.ts). */
  largeBodies?: LargeBodyBudget;
}

/**
 * ws takes one maxPayload for the whole server, fixed when the socket is upgraded, i.e. before we know
 * who is on it: sockets start at ANONYMOUS_MESSAGE_BYTES and an accepted one gets the larger bound here,
 * on its receiver (src/shared/ws-internals.ts).
 */
function allowMessagesUpTo(socket: WebSocket, bytes: number): void {
  if (!setMaxMessageBytes(socket, bytes)) log.warn('could not raise a GraphQL socket\'s message limit: ws internals changed');
}

interface ConnExtra {
  socket: WebSocket;
  request: IncomingMessage;
  /** The credential secret accepted at connection time. */
  secret?: string;
  actor?: Actor;
}

export function attachGraphQLWebSocket(deps: GraphQLWsDeps): { close(): Promise<void> } {
  const { schema, services, limiter, config, orm, httpServer } = deps;
  const wss = new WebSocketServer({ noServer: true, maxPayload: ANONYMOUS_MESSAGE_BYTES });
  const maxMessageBytes = Math.max(deps.maxMessageBytes ?? ANONYMOUS_MESSAGE_BYTES, ANONYMOUS_MESSAGE_BYTES);
  const rules = [...specifiedRules, ...introspectionRules(config.graphqlIntrospection)];

  const caps = new SocketCaps(config.wsLimits);
  const budget = new SendBudget(config.subscriberMaxBufferedBytes, config.subscriberSendBudgetBytes);
  /** Frees a socket's anonymous slot (when it authenticates or closes), by its upgrade request. */
  const anonymousSlots = new WeakMap<IncomingMessage, () => void>();

  const stopUpgrades = admitUpgrades(httpServer, wss, caps, anonymousSlots);

  const authenticate = (secret: string) => RequestContext.create(orm.em, () => services.auth.authenticate(secret));

  // every accepted socket is closed once its credential no longer holds (src/graphql/ws-credentials.ts)
  const credentials = new CredentialWatch(authenticate, (listener) => services.accounts.watch(listener));

  /** Runs one operation: fresh ORM context, re-authentication, rate limit, then graphql execute/subscribe. */
  const run = (kind: 'execute' | 'subscribe') => async (args: ExecutionArgs) =>
    RequestContext.create(orm.em, async () => {
      const ctx = args.contextValue as GraphQLContext & { __secret?: string; __actedAsAdmin?: () => void };
      const actor = ctx.__secret ? await services.auth.authenticate(ctx.__secret) : null;
      if (!actor) return { errors: [graphQLErrorOf(AppError.unauthorized('Your credentials are no longer valid. Reconnect with a valid token.'))] };
      if (actor.user.role === 'admin') ctx.__actedAsAdmin?.();
      const ip = clientAddress(ctx.req as IncomingMessage & { ip?: string });
      ctx.actor = { ...actor, ip };
      const r = await consumeAll(limiter, chargesForDocument(args.document, args.operationName), (keyedBy) => (keyedBy === 'user' ? `user:${actor.user.id}` : `ip:${ip}`));
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
        const found = await RequestContext.create(orm.em, () => authenticateRequest(services.auth, req, { authorization: ctx.connectionParams?.authorization }));
        if (found.via === 'cookie' && !originAllowed(req, config)) {
          ctx.extra.socket.close(WS_FORBIDDEN, 'Forbidden: cross-site connection refused');
          return false;
        }
        const actor = found.actor;
        if (!actor || !found.secret) {
          ctx.extra.socket.close(WS_UNAUTHORIZED, 'Unauthorized');
          return false;
        }
        if (!caps.admitUser(actor.user.id, ctx.extra.socket, () => Object.keys(ctx.subscriptions).length)) {
          ctx.extra.socket.close(WS_TOO_MANY, `Too many connections: at most ${caps.limits.connectionsPerUser} per account`);
          return false;
        }
        anonymousSlots.get(req)?.();
        (ctx.extra as ConnExtra).secret = found.secret;
        (ctx.extra as ConnExtra).actor = actor;
        credentials.watch(ctx.extra.socket, found.secret, actor);
        allowMessagesUpTo(ctx.extra.socket, maxMessageBytes);
        if (deps.largeBodies && maxMessageBytes > ANONYMOUS_MESSAGE_BYTES) {
          budgetLargeMessages(ctx.extra.socket, actor.user.id, deps.largeBodies, ANONYMOUS_MESSAGE_BYTES, maxMessageBytes);
        }
        return true;
      },
      onSubscribe: (ctx, id, payload) => {
        const userId = (ctx.extra as ConnExtra).actor?.user.id;
        if (userId && caps.overOperations(userId)) {
          const limit = caps.limits.subscriptionsPerUser;
          return [graphQLErrorOf(new AppError('RATE_LIMITED', `Too many live operations: at most ${limit} per account. Stop a subscription, then retry.`, { limit }))];
        }
        const checked = checkOperation(schema, rules, payload);
        if (!('document' in checked)) return [...checked];
        const { document, variables } = checked;
        const socket = ctx.extra.socket;
        const prefix = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
        const secret = (ctx.extra as ConnExtra).secret;
        const contextValue: GraphQLContext & DirectContext & { __secret?: string; __actedAsAdmin?: () => void } = {
          actor: (ctx.extra as ConnExtra).actor ?? null,
          services,
          req: ctx.extra.request as IncomingMessage,
          res: null,
          loaders: createLoaders(services),
          __secret: secret,
          __actedAsAdmin: () => secret && credentials.actedAsAdmin(socket, secret),
          // a subscription's events are written here, each payload serialised once for all its subscribers
          __direct: (payload) => sendOrDrop(socket, prefix + payload + '}', budget),
        };
        return {
          schema,
          document,
          variableValues: variables,
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
    { budget },
  );

  wss.on('error', (err) => log.warn({ err }, 'graphql-ws server error'));

  return {
    async close() {
      stopUpgrades();
      await credentials.close();
      for (const client of wss.clients) client.close(1001, 'Server shutting down');
      await disposable.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/**
 * Upgrades to WS_PATH, for an address under its cap of sockets that have not authenticated yet (the
 * slot is freed by `anonymousSlots`' entry when the socket authenticates, or when it closes); the
 * panel has no other WebSocket endpoint: an upgrade to any other path is answered 404 and closed.
 * Returns the listener's removal.
 */
function admitUpgrades(httpServer: HttpServer, wss: WebSocketServer, caps: SocketCaps, anonymousSlots: WeakMap<IncomingMessage, () => void>): () => void {
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    let pathname: string | null;
    try {
      pathname = new URL(req.url ?? '/', 'http://x').pathname;
    } catch {
      pathname = null;
    }
    if (pathname !== WS_PATH) return answerOnSocket(socket, AppError.notFound(`WebSocket endpoint ${pathname ?? ''}`));
    const address = clientAddress(req);
    if (!caps.admitAnonymous(address)) {
      return answerOnSocket(
        socket,
        new AppError('RATE_LIMITED', `Too many unauthenticated WebSocket connections from this address (at most ${caps.limits.anonymousPerAddress}). Authenticate or close the others, then retry.`),
      );
    }
    const release = caps.anonymousRelease(address);
    socket.once('close', release);
    wss.handleUpgrade(req, socket, head, (ws) => {
      anonymousSlots.set(req, release);
      wss.emit('connection', ws, req);
    });
  };
  httpServer.on('upgrade', onUpgrade);
  return () => httpServer.off('upgrade', onUpgrade);
}

/**
 * An operation's text checked as over HTTP: parsed, validated, one operation chosen, within the depth
 * and cost limits, its variables coerced (so bad ones get the same VALIDATION_ERROR as Apollo gives).
 * The errors to answer with, or the document and its variables.
 */
function checkOperation(
  schema: GraphQLSchema,
  rules: ValidationRule[],
  payload: { query: string; operationName?: string | null; variables?: Record<string, unknown> | null },
): readonly GraphQLError[] | { document: DocumentNode; variables: Record<string, unknown> | undefined } {
  let document: DocumentNode;
  try {
    document = parseOperationText(payload.query);
  } catch (err) {
    return [err instanceof GraphQLError ? err : new GraphQLError('Invalid query.', { extensions: { code: 'GRAPHQL_PARSE_FAILED' } })];
  }
  const errors = validate(schema, document, rules);
  if (errors.length) return errors.map((e) => new GraphQLError(e.message, { nodes: e.nodes, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
  const operation = resolveOperation(document, payload.operationName);
  if (operation instanceof GraphQLError) return [operation];
  const tooMuch = checkLimits(schema, document, payload.variables ?? undefined, payload.operationName);
  if (tooMuch) return [tooMuch];
  const coerced = coerceVariables(schema, operation.variableDefinitions ?? [], payload.variables ?? {});
  if ('errors' in coerced) return coerced.errors;
  return { document, variables: payload.variables ?? undefined };
}
