/**
 * The panel's Express application: helmet, request ids and logs, one MikroORM context per request,
 * `/health`, `/api/v1` (REST) and `/plants`. Adapters only; the logic lives in src/services.
 */
import { RequestContext } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import express, { Router, type Express } from 'express';
import helmet from 'helmet';
import type { Config } from './config.js';
import { authenticate, checkOrigin } from './http/auth.js';
import { jsonBody, yamlText } from './http/body.js';
import { apiErrorHandler, apiNotFound } from './http/errors.js';
import { rateLimit } from './http/limit-middleware.js';
import type { RateLimiter } from './http/rate-limit.js';
import { requestLog } from './http/request-log.js';
import { logger } from './logger.js';
import { docsRoutes, openApiDocument } from './openapi/serve.js';
import { authRoutes } from './rest/auth.routes.js';
import { usersRoutes } from './rest/users.routes.js';
import { webRoutes } from './http/web.js';
import { adminRoutes } from './rest/admin.routes.js';
import { blueprintsRoutes } from './rest/blueprints.routes.js';
import { nodesRoutes } from './rest/nodes.routes.js';
import { plantsRoutes } from './rest/plants.routes.js';
import { serversRoutes } from './rest/servers.routes.js';
import { agentRoutes } from './rest/agent.routes.js';
import type { SharedNonces } from './http/node-auth.js';
import { sharedAccessRoutes } from './rest/shared-access.routes.js';
import { schedulesRoutes } from './rest/schedules.routes.js';
import { fileRoutes, fileWriteRoutes } from './rest/files.routes.js';
import { backupRoutes } from './rest/backups.routes.js';
import { startupRoutes } from './rest/startup.routes.js';
import { powerRoutes } from './rest/power.routes.js';
import type { Services } from './services/index.js';
import { parseQuery } from './http/query.js';

export interface AppDeps {
  config: Config;
  orm: MikroORM;
  services: Services;
  limiter: RateLimiter;
  /** The GraphQL gateway's router (src/graphql), mounted at /graphql. */
  graphql?: Router;
  /** With Redis: node request nonces shared by the gateway instances. */
  sharedNonces?: SharedNonces;
}

export function createApp(deps: AppDeps): Express {
  const { config, orm, services, limiter } = deps;
  const app = express();
  app.disable('x-powered-by');
  // no ETag on API answers: a request with If-None-Match would get a 304, which CONTRACT §1 does not
  // list (the web page's files keep theirs: express.static makes its own)
  app.set('etag', false);
  app.set('query parser', parseQuery);
  app.use(
    helmet({
      contentSecurityPolicy: {
        directives: {
          defaultSrc: ["'self'"],
          connectSrc: ["'self'", 'ws:', 'wss:'],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'", "'unsafe-inline'"],
          imgSrc: ["'self'", 'data:'],
          // helmet's default would make browsers fetch the page's own scripts over https, which a
          // panel served over plain http (on a LAN address) does not speak: the page stayed blank
          upgradeInsecureRequests: null,
        },
      },
    }),
  );
  // answers that carry account data, tokens or console tickets are not kept by browsers or proxies
  app.use(['/api', '/graphql', '/plants'], (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  app.use(requestLog(logger.child({ component: 'http' })));
  app.use((_req, _res, next) => RequestContext.create(orm.em, next));

  app.get('/health', async (_req, res) => {
    let database: 'up' | 'down' = 'up';
    try {
      await orm.em.getConnection().execute('select 1');
    } catch {
      database = 'down';
    }
    res.status(database === 'up' ? 200 : 503).json({ status: database === 'up' ? 'ok' : 'degraded', database });
  });

  const api = Router();
  // The Origin (CSRF) check runs after the rate limiter, so that its 403 carries the X-RateLimit headers too.
  api.use(authenticate(services.auth, config, { checkOrigin: false }));
  api.use(rateLimit(limiter));
  api.use((req, _res, next) => {
    if (req.actor && req.credentialVia === 'cookie') checkOrigin(req, config);
    next();
  });
  // no CORS here: OPTIONS is a method no route has (Express would answer it with a plain-text list)
  api.use((req, res, next) => (req.method === 'OPTIONS' ? apiNotFound(req, res, next) : next()));
  api.use(fileWriteRoutes(services)); // raw bodies, streamed to the node: before the JSON parser
  api.post('/admin/blueprints/import', yamlText()); // eggs in YAML too: read as text before the JSON parser
  api.use(jsonBody());
  api.get('/openapi.json', openApiDocument); // public; general rate-limit bucket
  api.use('/auth', authRoutes(services));
  api.use('/users', usersRoutes(services));
  api.use('/servers', serversRoutes(services));
  api.use('/nodes', nodesRoutes(services));
  api.use('/blueprints', blueprintsRoutes(services));
  api.use('/admin', adminRoutes(services));
  api.use(powerRoutes(services));
  api.use(sharedAccessRoutes(services));
  api.use(schedulesRoutes(services));
  api.use(fileRoutes(services));
  api.use(backupRoutes(services));
  api.use(startupRoutes(services));
  api.use(apiNotFound);
  api.use(apiErrorHandler);
  app.use('/api/v1', api);
  app.use('/api/agent/v1', agentRoutes(services.agents, services.nodeAgent, services.sftp, limiter, deps.sharedNonces));

  app.use('/plants', plantsRoutes(services, limiter));
  app.use('/docs', docsRoutes()); // the API reference page (static; loads /api/v1/openapi.json)

  if (deps.graphql) app.use('/graphql', deps.graphql);

  // the web page (web/dist) at `/`, after every API so that it never shadows one
  app.use(webRoutes());

  app.use(apiNotFound);
  app.use(apiErrorHandler);
  return app;
}
