/**
 * The GraphQL gateway: Apollo Server 5 at POST/GET `/graphql` on the panel's Express app,
 * graphql-ws at `/graphql` on the same HTTP server (src/graphql/ws.ts).
 *
 * Per HTTP request, in order (mirrors /api/v1: authenticate → rate limit → CSRF → body):
 *   1. `authenticate` — the same middleware as REST (bearer or cookie → req.actor); it also refuses a
 *      cookie-authenticated POST from a foreign Origin (CSRF) with FORBIDDEN. Apollo's own CSRF
 *      prevention additionally refuses "simple" GET requests, and GET can never run a mutation.
 *   2. JSON body (BAD_REQUEST over the limit): ≤ graphqlBodyLimit(config) once authenticated (big enough
 *      for a writeFile of FILE_EDIT_MAX_BYTES of text), ≤ 1 MiB without a credential (signIn and the
 *      like need no more); every other JSON route stays at 1 MiB (src/http/body.ts).
 *   3. rate limit — the same RateLimiter and keys as REST; the bucket comes from the parsed document
 *      (src/graphql/buckets.ts). X-RateLimit-* on every operation response; 429 + Retry-After + RATE_LIMITED.
 *   4. Apollo: depth/cost limits (src/graphql/limits.ts), execution, error mapping (src/resolvers/errors.ts).
 * Execution errors answer HTTP 200 with `errors[].extensions.code` (GraphQL convention); request
 * errors (syntax, validation, limits, body) answer 400, rate limiting 429.
 */
import type { Server as HttpServer } from 'node:http';
import { ApolloServer } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
  ApolloServerPluginSchemaReportingDisabled,
  ApolloServerPluginUsageReportingDisabled,
} from '@apollo/server/plugin/disabled';
import { ApolloServerPluginLandingPageLocalDefault } from '@apollo/server/plugin/landingPage/default';
import type { MikroORM } from '@mikro-orm/postgresql';
import express, { Router, type ErrorRequestHandler, type RequestHandler } from 'express';
import type { GraphQLSchema } from 'graphql';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { authenticate } from '../http/auth.js';
import { resolveRequestError } from '../http/errors.js';
import { consumeAll, limitKey, setLimitHeaders } from '../http/limit-middleware.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { formatGraphQLError, graphQLErrorBody } from '../resolvers/errors.js';
import type { Services } from '../services/index.js';
import { chargesForQuery } from './buckets.js';
import { createLoaders, type GraphQLContext } from './context.js';
import { apolloExpress } from './express-adapter.js';
import { introspectionRules } from './introspection.js';
import { jitGateway } from './jit-executor.js';
import { declaredLargeBody, LargeBodyBudget } from './large-bodies.js';
import { limitsPlugin } from './limits.js';
import { buildGraphQLSchema } from './schema.js';
import { attachGraphQLWebSocket } from './ws.js';

export interface GraphQLDeps {
  services: Services;
  limiter: RateLimiter;
  config: Config;
  orm: MikroORM;
  httpServer: HttpServer;
}

export interface GraphQLGateway {
  /** Mount at `/graphql` on the Express app (src/app.ts does). */
  router: Router;
  schema: GraphQLSchema;
  stop(): Promise<void>;
}

/** Requests without a credential (sign-in, sign-up): the 1 MiB of every JSON route. */
export const ANONYMOUS_BODY_LIMIT = 1024 * 1024;

/**
 * The most a GraphQL request (HTTP body or WebSocket message) of a signed-in caller may hold, in bytes:
 * enough for `writeFile` with FILE_EDIT_MAX_BYTES of text, which the editor reads with `fileContents`.
 * The contents travel as a JSON string, and JSON escaping grows text: `"`, `\`, newlines and tabs
 * take two bytes each, so a text of N bytes made of them is at most 2N bytes of JSON. The other
 * control characters (six bytes each as `\u00XX`) are not what edited text holds; such a file is
 * written over REST (PUT /files/contents, raw bytes). The extra 1 MiB is for the query text, the
 * other variables and the envelope. writeFile itself refuses contents over FILE_EDIT_MAX_BYTES
 * (FILE_TOO_LARGE): a request between that and this bound gets that answer, not a 400.
 */
export function graphqlBodyLimit(config: Pick<Config, 'fileEditMaxBytes'>): number {
  return 2 * config.fileEditMaxBytes + ANONYMOUS_BODY_LIMIT;
}

/**
 * The JSON body parser: 1 MiB, as on every JSON route; up to graphqlBodyLimit once `authenticate`
 * has found an actor and the body declares its length, within the budget of large bodies
 * (src/graphql/large-bodies.ts), so that no caller can make the panel buffer more than that at once.
 */
function graphqlJsonBody(config: Config, budget: LargeBodyBudget): RequestHandler {
  const limit = graphqlBodyLimit(config);
  const large = express.json({ limit });
  const small = express.json({ limit: ANONYMOUS_BODY_LIMIT });
  const tooLarge = (err: unknown) => (err as { type?: unknown } | null)?.type === 'entity.too.large';
  return (req, res, next) => {
    if (!req.actor) return small(req, res, next);
    const declared = declaredLargeBody(req, ANONYMOUS_BODY_LIMIT);
    if (declared === null) {
      return small(req, res, (err?: unknown) =>
        next(tooLarge(err) ? AppError.badRequest(`The request body is larger than 1 MiB. A larger one (up to ${limit} bytes, for writeFile) must be sent with its Content-Length and without Content-Encoding.`) : err),
      );
    }
    if (declared > limit) return next(AppError.badRequest(`The request body is larger than ${limit} bytes (twice FILE_EDIT_MAX_BYTES and 1 MiB). Write a larger file with PUT /api/v1/servers/{id}/files/contents.`));
    const release = budget.take(req.actor.user.id, declared);
    if (!release) {
      res.setHeader('Retry-After', '1');
      return sendGraphQLError(res, new AppError('RATE_LIMITED', 'Too many large requests (over 1 MiB) are on their way at once. Try again in 1 second.', { retryAfter: 1 }));
    }
    res.once('close', release);
    large(req, res, next);
  };
}

/** Requests refused before Apollo runs (body, CSRF, rate limit) get GraphQL's own error rendering. */
function sendGraphQLError(res: express.Response, err: AppError): void {
  res.status(err.status).json(graphQLErrorBody(err));
}

const graphqlErrorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  const app = resolveRequestError(err, res);
  if (res.headersSent) return res.end();
  sendGraphQLError(res, app);
};

/** The operation of a request: POST body or GET query string; null when there is none (landing page). */
function operationOf(req: express.Request): { query: unknown; operationName: unknown } | null {
  if (req.method === 'POST') {
    const b = req.body as Record<string, unknown> | undefined;
    return b && typeof b === 'object' && !Array.isArray(b) ? { query: b.query, operationName: b.operationName } : { query: undefined, operationName: undefined };
  }
  if (req.method === 'GET') {
    const q = req.query as Record<string, unknown>;
    return q.query !== undefined ? { query: q.query, operationName: q.operationName } : null;
  }
  return null;
}

function rateLimitGraphQL(limiter: RateLimiter): RequestHandler {
  return async (req, res, next) => {
    try {
      const op = operationOf(req);
      if (!op) return next();
      const r = await consumeAll(limiter, chargesForQuery(op.query, op.operationName), (keyedBy) => limitKey(req, keyedBy));
      setLimitHeaders(res, r);
      if (!r.allowed) {
        return sendGraphQLError(res, new AppError('RATE_LIMITED', `Too many requests. Try again in ${r.retryAfter} seconds.`, { retryAfter: r.retryAfter }));
      }
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** Apollo's landing page (Sandbox) loads from Apollo's CDN: relax the CSP for that one HTML page only. */
const landingPageCsp: RequestHandler = (req, res, next) => {
  if (req.method === 'GET' && String(req.headers.accept ?? '').includes('text/html')) {
    const cdn = 'https://*.apollographql.com';
    res.setHeader(
      'Content-Security-Policy',
      [
        "default-src 'self'",
        `script-src 'self' 'unsafe-inline' ${cdn}`,
        `style-src 'self' 'unsafe-inline' ${cdn} https://fonts.googleapis.com`,
        `font-src 'self' https://fonts.gstatic.com ${cdn}`,
        `img-src 'self' data: ${cdn}`,
        `frame-src 'self' ${cdn}`,
        `connect-src 'self' ws: wss: ${cdn}`,
        `manifest-src 'self' ${cdn}`,
      ].join('; '),
    );
  }
  next();
};

export async function createGraphQL(deps: GraphQLDeps): Promise<GraphQLGateway> {
  const { services, limiter, config, orm, httpServer } = deps;
  const schema = await buildGraphQLSchema();

  const apollo = new ApolloServer<GraphQLContext>({
    // the schema, executed by graphql-jit (src/graphql/jit-executor.ts)
    gateway: jitGateway(schema),
    // introspection is refused by our own rule (its message names the setting), Apollo's is not used
    introspection: true,
    validationRules: introspectionRules(config.graphqlIntrospection),
    includeStacktraceInErrorResponses: false,
    formatError: formatGraphQLError,
    csrfPrevention: true,
    // Automatic persisted queries are off: a request carrying only a hash has no query text to choose
    // its rate-limit bucket by, so a persisted signIn was charged to the general bucket (60, not 10)
    persistedQueries: false,
    parseOptions: { maxTokens: 20_000 },
    plugins: [
      // no HTTP cache hints are used: skip the per-field cache-control bookkeeping
      ApolloServerPluginCacheControlDisabled(),
      // self-hosted: nothing is reported to Apollo's cloud even when APOLLO_KEY happens to be set, and
      // no federation trace is computed (the inline trace plugin's hooks ran on every request)
      ApolloServerPluginInlineTraceDisabled(),
      ApolloServerPluginUsageReportingDisabled(),
      ApolloServerPluginSchemaReportingDisabled(),
      limitsPlugin(schema),
      config.graphqlIntrospection ? ApolloServerPluginLandingPageLocalDefault({ embed: true, footer: false }) : ApolloServerPluginLandingPageDisabled(),
    ],
  });
  await apollo.start();

  // one budget of large bodies and messages for both transports of this instance
  const largeBodies = new LargeBodyBudget();
  const ws = attachGraphQLWebSocket({ schema, services, limiter, config, orm, httpServer, maxMessageBytes: graphqlBodyLimit(config), largeBodies });

  const router = Router();
  router.use(authenticate(services.auth, config));
  router.use(graphqlJsonBody(config, largeBodies));
  router.use(rateLimitGraphQL(limiter));
  if (config.graphqlIntrospection) router.use(landingPageCsp);
  router.use(
    apolloExpress(apollo, async (req, res): Promise<GraphQLContext> => ({
      actor: req.actor ?? null,
      services,
      req,
      res,
      loaders: createLoaders(services),
    })),
  );
  router.use(graphqlErrorHandler);

  let stopping: Promise<void> | null = null;
  return {
    router,
    schema,
    stop: () =>
      (stopping ??= (async () => {
        await ws.close();
        await apollo.stop();
      })()),
  };
}
