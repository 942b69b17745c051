/**
 * Starts the whole panel: database (external or embedded), migrations, first admin, HTTP server.
 * Used by `npm start` (src/main.ts) and by the integration tests.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { createApp } from './app.js';
import type { Config } from './config.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { openDatabase } from './db/orm.js';
import { RateLimiter } from './http/rate-limit.js';
import { childLogger, logger } from './logger.js';
import { createServices, type Services } from './services/index.js';
import { RequestContext } from '@mikro-orm/core';
import { MasterKey } from './security/master-key.js';

const log = childLogger('platform');

export interface Platform {
  config: Config;
  orm: MikroORM;
  services: Services;
  server: http.Server;
  url: string;
  firstAdmin: { email: string; password: string | null; created: boolean };
  close(): Promise<void>;
}

export async function startPlatform(config: Config): Promise<Platform> {
  logger.level = config.logLevel;
  let embedded: EmbeddedDatabase | null = null;
  let orm: MikroORM | null = null;
  try {
    if (!config.databaseUrl) {
      log.info('no DATABASE_URL given: starting the embedded PostgreSQL');
      embedded = await startEmbeddedPostgres(config.dataDir, config.embeddedPgPort);
    }
    orm = await openDatabase(config.databaseUrl ?? embedded!.url);
    const services = createServices(orm, config, MasterKey.load(config.dataDir));
    const firstAdmin = await RequestContext.create(orm.em, () => services.auth.ensureFirstAdmin());
    const limiter = new RateLimiter(config.rateLimits);
    const app = createApp({ config, orm, services, limiter });
    const server = http.createServer(app);
    server.headersTimeout = 20_000;
    server.requestTimeout = 60_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
    const addr = server.address() as AddressInfo;
    const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
    const url = `http://${shownHost}:${addr.port}`;
    const ormRef = orm;
    let closing: Promise<void> | null = null;
    return {
      config,
      orm,
      services,
      server,
      url,
      firstAdmin,
      close: () =>
        (closing ??= (async () => {
          server.closeAllConnections();
          await new Promise<void>((resolve) => server.close(() => resolve()));
          await ormRef.close(true);
          await embedded?.stop();
        })()),
    };
  } catch (err) {
    await orm?.close(true).catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    throw err;
  }
}
