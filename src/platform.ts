/**
 * Starts the whole panel: database (external or embedded), migrations, first admin, HTTP server.
 * Used by `npm start` (src/main.ts) and by the integration tests.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { createApp } from './app.js';
import { createGraphQL } from './graphql/index.js';
import type { Config } from './config.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { applyMigrations, connectDatabase } from './db/orm.js';
import { takeStartupLock } from './db/startup-lock.js';
import { firstUseEverywhere } from './services/node-nonces.js';
import { Disposers } from './shared/disposers.js';
import { compileTrust, useTrust } from './http/client-address.js';
import Redis from 'ioredis';
import { memoryLimiters, RateLimiter, REDIS_LIMIT_TIMEOUT_MS, redisLimiters } from './http/rate-limit.js';
import { closeHttpServer } from './http/shutdown.js';
import { answerClientError, answerLateBody } from './http/client-errors.js';
import { childLogger, logger } from './logger.js';
import { createServices, type Services } from './services/index.js';
import { RequestContext } from '@mikro-orm/core';
import { MasterKey } from './security/master-key.js';
import { seedBuiltinBlueprints } from './services/blueprint-seeder.js';
import type { Express } from 'express';
import { startAgent, type RunningAgent } from './agent/index.js';
import { ensureLocalNode } from './nodes/local-node.js';
import { Node } from './entities/Node.js';
import { LocalBus, type ConsoleBus } from './console/bus.js';
import { RedisBus } from './console/redis-bus.js';
import { isStreamedUpload } from './rest/files.routes.js';
import { limitBodyTime } from './shared/body-time.js';

const log = childLogger('platform');

/** How long a start waits for the rate limiter's Redis connection before going on without it. */
const REDIS_START_WAIT_MS = 5_000;

/** Resolves true once `redis` is ready, or false after `ms`. */
function redisReady(redis: Redis, ms: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(false), ms);
    const onReady = () => done(true);
    function done(ok: boolean) {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(ok);
    }
    redis.once('ready', onReady);
  });
}

export interface Platform {
  config: Config;
  orm: MikroORM;
  services: Services;
  server: http.Server;
  url: string;
  firstAdmin: { email: string; password: string | null; created: boolean };
  /** The Express app (e.g. to list its routes). */
  app: Express;
  /** The local node agent started with the panel (LOCAL_AGENT), if any. */
  agent(): RunningAgent | null;
  close(): Promise<void>;
}

/** How long closing waits for HTTP requests under way to answer. */
const HTTP_CLOSE_GRACE_MS = 5000;

export async function startPlatform(config: Config): Promise<Platform> {
  logger.level = config.logLevel;
  const disposers = new Disposers((name, err) => log.warn({ err: (err as Error)?.message ?? String(err), resource: name }, 'could not close a resource cleanly'));
  try {
    let embedded: EmbeddedDatabase | null = null;
    if (!config.databaseUrl) {
      log.info('no DATABASE_URL given: starting the embedded PostgreSQL');
      embedded = await startEmbeddedPostgres(config.dataDir, config.embeddedPgPort);
      const db = embedded;
      disposers.add('embedded PostgreSQL', () => db.stop());
    }
    const databaseUrl = config.databaseUrl ?? embedded!.url;
    const orm = await connectDatabase(databaseUrl);
    disposers.add('database pool', () => orm.close(true));
    // migrations, built-in blueprints and the first administrator: one instance at a time (src/db/startup-lock.ts)
    const startupLock = await takeStartupLock(databaseUrl);
    disposers.add('start-up lock', () => startupLock.release());
    await applyMigrations(orm);
    await seedBuiltinBlueprints(orm);
    const masterKey = MasterKey.load(config.dataDir, config.masterKey);
    const bus: ConsoleBus = config.redisUrl ? new RedisBus(config.redisUrl, orm.config.get('dbName') ?? 'default') : new LocalBus();
    disposers.add('console bus', () => bus.close());
    const services = createServices(orm, config, masterKey, bus);
    disposers.add('console hub', () => services.console.hub.close());
    disposers.add('activity log', () => services.activity.flush());
    const firstAdmin = await RequestContext.create(orm.em, () => services.auth.ensureFirstAdmin());
    await startupLock.release();
    let redis: Redis | null = null;
    if (config.redisUrl) {
      // no offline queue and a command timeout: while Redis is away or hangs, the limiter counts in
      // memory at once instead of making requests wait for it (src/http/rate-limit.ts)
      const client = new Redis(config.redisUrl, {
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        commandTimeout: REDIS_LIMIT_TIMEOUT_MS,
        lazyConnect: false,
        disconnectTimeout: 300,
      });
      redis = client;
      disposers.add('Redis (rate limits)', () => client.disconnect());
      client.on('error', (err) => log.warn({ err: err.message }, 'redis error'));
      // until it is connected, requests would be counted in memory, apart from the shared budget
      if (await redisReady(client, REDIS_START_WAIT_MS)) log.info('REDIS_URL set: rate limits are shared through Redis');
      else log.warn({ waitedMs: REDIS_START_WAIT_MS }, 'REDIS_URL set but Redis is not reachable: rate limits are counted on this instance until it is');
    }
    const limiter = new RateLimiter(config.rateLimits, redis ? redisLimiters(redis, orm.config.get('dbName') ?? 'default') : memoryLimiters);
    if (redis) services.shareThrottles(redis, orm.config.get('dbName') ?? 'default');
    const server = http.createServer();
    const trust = compileTrust(config.trustProxy);
    useTrust(server, trust);
    const graphql = await createGraphQL({ services, limiter, config, orm, httpServer: server });
    disposers.add('GraphQL gateway', () => graphql.stop());
    const namespace = orm.config.get('dbName') ?? 'default';
    const app = createApp({ config, orm, services, limiter, graphql: graphql.router, ...(redis ? { sharedNonces: { firstUse: (nodeId: string, nonce: string) => firstUseEverywhere(orm, nodeId, nonce), redis, namespace } } : {}) });
    app.set('trust proxy', trust);
    const handle = (req: http.IncomingMessage, res: http.ServerResponse) => {
      limitBodyTime(req, res, { ms: config.bodyTimeoutMs, streamed: isStreamedUpload(req.method ?? 'GET', req.url ?? '/'), late: answerLateBody });
      app(req, res);
    };
    server.on('request', handle);
    // an Expect other than 100-continue is ignored and the request answered as any other (Node's own
    // answer is a bare 417, outside the API's statuses and error shape)
    server.on('checkExpectation', handle);
    server.on('clientError', answerClientError);
    server.headersTimeout = 20_000;
    // a body's time is limitBodyTime's: Node's requestTimeout would cut off every upload slower than it
    server.requestTimeout = 0;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) =>
        reject(err.code === 'EADDRINUSE' ? new Error(`PORT ${config.port} is already in use on ${config.host}: set PORT to a free port`) : err),
      );
      server.listen(config.port, config.host, () => resolve());
    });
    disposers.add('HTTP server', () => closeHttpServer(server, HTTP_CLOSE_GRACE_MS));
    const addr = server.address() as AddressInfo;
    const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
    const url = `http://${shownHost}:${addr.port}`;
    const sweeper = setInterval(() => void services.nodeAgent.sweepOffline().catch(() => undefined), 10_000);
    sweeper.unref();
    disposers.add('offline sweeper', () => clearInterval(sweeper));
    disposers.add('activity pruning', services.activity.startPruning(config.activityRetentionDays));
    if (config.scheduleTickMs > 0) disposers.add('schedule runner', services.scheduleRunner.start(config.scheduleTickMs));
    const agent = config.localAgent ? await startLocalAgent(orm, masterKey, config, addr.port) : null;
    if (agent) disposers.add('local node agent', () => agent.close());
    return {
      config,
      orm,
      services,
      server,
      url,
      firstAdmin,
      app,
      agent: () => agent,
      close: () => disposers.disposeAll(),
    };
  } catch (err) {
    // a failed start leaves nothing open
    await disposers.disposeAll();
    throw err;
  }
}

/** The local node agent of `npm start`, registered as the node `local`. */
async function startLocalAgent(orm: MikroORM, masterKey: MasterKey, config: Config, panelPort: number): Promise<RunningAgent> {
  const { node, token } = await ensureLocalNode(orm, masterKey, config, config.agentPort);
  const panelHost = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const agent = await startAgent({
    panelUrl: `http://${panelHost}:${panelPort}`,
    nodeId: node.id,
    nodeToken: token,
    port: config.agentPort,
    sftpPort: config.sftpPort,
    host: config.host,
    dataDir: config.dataDir,
    stopGraceSeconds: config.stopGraceSeconds,
    fileEditMaxBytes: config.fileEditMaxBytes,
    wsMaxConnectionsPerUser: config.wsLimits.connectionsPerUser,
    wsMaxAnonymousPerAddress: config.wsLimits.anonymousPerAddress,
    allowUnisolatedServers: config.allowUnisolatedServers,
    serverPidsMax: config.serverPidsMax,
    tuning: { consoleMaxLinesPerSecond: config.consoleMaxLinesPerSecond, bodyTimeoutMs: config.bodyTimeoutMs },
  }).catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'EADDRINUSE'
      ? new Error(`AGENT_PORT ${config.agentPort} is already in use: set AGENT_PORT to a free port, or LOCAL_AGENT=false to run without the local node agent`)
      : err;
  });
  if (agent.port !== node.port) {
    // AGENT_PORT=0 picks a free port: record the real one so console addresses are right.
    await orm.em.fork().nativeUpdate(Node, { id: node.id }, { port: agent.port });
  }
  log.info({ port: agent.port }, 'local node agent is running');
  return agent;
}
