/**
 * All configuration, read once from the environment and validated (CONTRACT §8 names).
 * A bad value stops the start with one clear line per problem.
 */
import path from 'node:path';
import { z } from 'zod';

const bool = (def: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
    .optional()
    .transform((v) => (v === undefined ? def : v === 'true' || v === '1' || v === 'yes'));

const int = (def: number, min: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return def;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `must be a whole number from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });

const url = (protocols: string[]) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return undefined;
      try {
        const u = new URL(v);
        if (!protocols.includes(u.protocol)) throw new Error();
        return v;
      } catch {
        ctx.addIssue({ code: 'custom', message: `must be a URL starting with ${protocols.map((p) => p + '//').join(' or ')}` });
        return z.NEVER;
      }
    });

const envSchema = z.object({
  PORT: int(8080, 0, 65535),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATA_DIR: z.string().min(1).default('./.data'),
  DATABASE_URL: url(['postgres:', 'postgresql:']),
  REDIS_URL: url(['redis:', 'rediss:']),
  ADMIN_EMAIL: z.email({ message: 'must be an email address' }).optional(),
  ADMIN_PASSWORD: z.string().min(8, 'must be at least 8 characters').max(128).optional(),
  ALLOW_SIGNUP: bool(true),
  SESSION_TTL_SECONDS: int(604800, 60, 31536000),
  RATE_LIMIT_GENERAL: int(60, 1, 10_000_000),
  RATE_LIMIT_AUTH: int(10, 1, 10_000_000),
  RATE_LIMIT_ADMIN: int(30, 1, 10_000_000),
  CONSOLE_TOKEN_TTL_SECONDS: int(600, 10, 600),
  STOP_GRACE_SECONDS: int(30, 0, 3600),
  AGENT_PORT: int(5000, 0, 65535),
  LOCAL_AGENT: bool(true),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NODE_ENV: z.string().default('development'),
  /** Comma-separated extra origins allowed to make cookie-authenticated writes (CSRF check). */
  TRUSTED_ORIGINS: z.string().default(''),
  /** Public base URL of the panel, used in printed hints. */
  PANEL_URL: url(['http:', 'https:']),
  GRAPHQL_INTROSPECTION: bool(true),
  /** PostgreSQL port used for the embedded database. */
  EMBEDDED_PG_PORT: int(54329, 1024, 65535),
  MASTER_KEY: z.string().optional(),
});

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  adminEmail: string | undefined;
  adminPassword: string | undefined;
  allowSignup: boolean;
  sessionTtlSeconds: number;
  rateLimits: { general: number; auth: number; admin: number };
  consoleTokenTtlSeconds: number;
  stopGraceSeconds: number;
  agentPort: number;
  localAgent: boolean;
  logLevel: string;
  production: boolean;
  trustedOrigins: string[];
  panelUrl: string | undefined;
  graphqlIntrospection: boolean;
  embeddedPgPort: number;
  /** base64 32-byte key sealing node keys at rest; default: DATA_DIR/keys/master.key */
  masterKey: string | undefined;
  /** Unsent bytes a GraphQL WebSocket client may have queued before it is disconnected as too slow (not an env setting). */
  subscriberMaxBufferedBytes: number;
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super('Invalid configuration:\n' + problems.map((p) => '  - ' + p).join('\n'));
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message} (got ${JSON.stringify(env[String(i.path[0])])})`));
  }
  const e = parsed.data;
  const config: Config = {
    port: e.PORT,
    host: e.HOST,
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    adminEmail: e.ADMIN_EMAIL?.toLowerCase(),
    adminPassword: e.ADMIN_PASSWORD,
    allowSignup: e.ALLOW_SIGNUP,
    sessionTtlSeconds: e.SESSION_TTL_SECONDS,
    rateLimits: { general: e.RATE_LIMIT_GENERAL, auth: e.RATE_LIMIT_AUTH, admin: e.RATE_LIMIT_ADMIN },
    consoleTokenTtlSeconds: e.CONSOLE_TOKEN_TTL_SECONDS,
    stopGraceSeconds: e.STOP_GRACE_SECONDS,
    agentPort: e.AGENT_PORT,
    localAgent: e.LOCAL_AGENT,
    logLevel: e.LOG_LEVEL,
    production: e.NODE_ENV === 'production',
    trustedOrigins: e.TRUSTED_ORIGINS.split(',').map((s) => s.trim()).filter(Boolean),
    panelUrl: e.PANEL_URL,
    graphqlIntrospection: e.GRAPHQL_INTROSPECTION,
    embeddedPgPort: e.EMBEDDED_PG_PORT,
    masterKey: e.MASTER_KEY,
    subscriberMaxBufferedBytes: 4 * 1024 * 1024,
  };
  return { ...config, ...overrides };
}
