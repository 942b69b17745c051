/**
 * All configuration, read once from the environment and validated.
 * A bad value stops the start with one clear line per problem.
 */
import path from 'node:path';
import { z } from 'zod';
import { compileTrust, type TrustSetting } from './http/client-address.js';

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
  ACTIVITY_RETENTION_DAYS: int(90, 1, 36500),
  BACKUP_LIMIT_DEFAULT: int(5, 0, 1000),
  /** Which reverse proxies to believe about the client's address (X-Forwarded-For): unset trusts none. */
  TRUST_PROXY: z
    .string()
    .optional()
    .transform((v, ctx): TrustSetting => {
      const s = (v ?? '').trim().toLowerCase();
      if (s === '' || s === 'false') return false;
      if (s === 'true') return true;
      if (/^\d+$/.test(s)) return Number(s);
      const list = s.split(',').map((x) => x.trim()).filter(Boolean);
      try {
        compileTrust(list);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be true, false, a number of proxies, or comma-separated addresses or CIDR ranges (10.0.0.0/8)' });
        return z.NEVER;
      }
      return list;
    }),
  FILE_EDIT_MAX_BYTES: int(4 * 1024 * 1024, 1024, 256 * 1024 * 1024),
  FILE_UPLOAD_MAX_BYTES: int(1024 * 1024 * 1024, 1024, Number.MAX_SAFE_INTEGER),
  AGENT_PORT: int(5000, 0, 65535),
  SFTP_PORT: int(2022, 0, 65535),
  LOCAL_AGENT: bool(true),
  /** Let the local agent run servers as its own user when it cannot give them one of their own (not root). */
  ALLOW_UNISOLATED_SERVERS: bool(false),
  /** Processes (and threads) one server of the local agent may have (its cgroup's pids.max). */
  SERVER_PIDS_MAX: int(512, 16, 4194304),
  /** Lines a second one server's output may put on its console (the local agent's); the rest is dropped and counted. */
  CONSOLE_MAX_LINES_PER_SECOND: int(2000, 1, 1_000_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NODE_ENV: z.string().default('development'),
  /** Comma-separated extra origins allowed to make cookie-authenticated writes (CSRF check). */
  TRUSTED_ORIGINS: z.string().default(''),
  /** Public base URL of the panel, used in printed hints. */
  PANEL_URL: url(['http:', 'https:']),
  /** Introspection and the Sandbox landing page; unset: off when NODE_ENV=production, on otherwise. */
  GRAPHQL_INTROSPECTION: z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
    .optional()
    .transform((v) => (v === undefined ? undefined : v === 'true' || v === '1' || v === 'yes')),
  WS_MAX_CONNECTIONS_PER_USER: int(20, 1, 100_000),
  WS_MAX_SUBSCRIPTIONS_PER_USER: int(100, 1, 1_000_000),
  WS_MAX_ANONYMOUS_PER_ADDRESS: int(10, 1, 100_000),
  /** PostgreSQL port used for the embedded database. */
  // 5432 is a system PostgreSQL's port: the embedded one beside it would fail to start, or meet it
  EMBEDDED_PG_PORT: int(54329, 1024, 65535).refine((port) => port !== 5432, 'must not be 5432, the port of a system PostgreSQL: leave it unset (54329) or pick another'),
  MASTER_KEY: z.string().optional(),
  /** Who may create servers from blueprints that run a command the user chooses (the "Shell command" one). */
  USER_COMMAND_BLUEPRINTS: z.enum(['everyone', 'admins'], { message: 'must be everyone or admins' }).default('everyone'),
  /** Per-user limits over all of a user's servers (0 = no limit; administrators are exempt). */
  USER_MAX_SERVERS: int(10, 0, 1_000_000),
  USER_MAX_MEMORY: int(16384, 0, 2_147_483_647),
  USER_MAX_CPU: int(800, 0, 2_147_483_647),
  USER_MAX_DISK: int(102400, 0, 2_147_483_647),
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
  /** Reverse proxies believed about the client's address (see src/http/client-address.ts). */
  trustProxy: TrustSetting;
  /** The most a file opened in the editor may hold. */
  fileEditMaxBytes: number;
  /** The most one uploaded or written file may hold. */
  fileUploadMaxBytes: number;
  /** Activity-log entries older than this are pruned (hourly, in batches). */
  activityRetentionDays: number;
  /** backups a new server may keep */
  backupLimitDefault: number;
  agentPort: number;
  /** the local agent's SFTP port (0: any free port) */
  sftpPort: number;
  localAgent: boolean;
  allowUnisolatedServers: boolean;
  serverPidsMax: number;
  /** the local agent's console budget per server (lines a second) */
  consoleMaxLinesPerSecond: number;
  logLevel: string;
  production: boolean;
  trustedOrigins: string[];
  panelUrl: string | undefined;
  graphqlIntrospection: boolean;
  /** Caps on the panel's GraphQL WebSocket: open sockets and live operations per user, sockets per address before they authenticate. */
  wsLimits: { connectionsPerUser: number; subscriptionsPerUser: number; anonymousPerAddress: number };
  embeddedPgPort: number;
  /** base64 32-byte key sealing node keys at rest; default: DATA_DIR/keys/master.key */
  masterKey: string | undefined;
  /** `admins`: only administrators create servers from blueprints that run a user-chosen command. */
  userCommandBlueprints: 'everyone' | 'admins';
  /** Per-user totals over the user's servers (memory and disk in MiB, cpu in percent of one core); 0 = no limit. */
  userQuota: UserQuota;
  /** Unsent bytes a GraphQL WebSocket client may have queued before it is disconnected as too slow (not an env setting). */
  subscriberMaxBufferedBytes: number;
  /** What all GraphQL sockets may hold unsent together (each its share, at most subscriberMaxBufferedBytes). */
  subscriberSendBudgetBytes: number;
  /** How often the schedule runner claims due runs, in ms; 0: never on its own (tests tick it; not an env setting). */
  scheduleTickMs: number;
  /** How long a request's body may take to arrive; an upload may take longer but not stall this long (not an env setting). */
  bodyTimeoutMs: number;
}

export interface UserQuota {
  servers: number;
  memory: number;
  cpu: number;
  disk: number;
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
    activityRetentionDays: e.ACTIVITY_RETENTION_DAYS,
    backupLimitDefault: e.BACKUP_LIMIT_DEFAULT,
    trustProxy: e.TRUST_PROXY,
    fileEditMaxBytes: e.FILE_EDIT_MAX_BYTES,
    fileUploadMaxBytes: e.FILE_UPLOAD_MAX_BYTES,
    agentPort: e.AGENT_PORT,
    sftpPort: e.SFTP_PORT,
    localAgent: e.LOCAL_AGENT,
    allowUnisolatedServers: e.ALLOW_UNISOLATED_SERVERS,
    serverPidsMax: e.SERVER_PIDS_MAX,
    consoleMaxLinesPerSecond: e.CONSOLE_MAX_LINES_PER_SECOND,
    logLevel: e.LOG_LEVEL,
    production: e.NODE_ENV === 'production',
    trustedOrigins: e.TRUSTED_ORIGINS.split(',').map((s) => s.trim()).filter(Boolean),
    panelUrl: e.PANEL_URL,
    graphqlIntrospection: e.GRAPHQL_INTROSPECTION ?? e.NODE_ENV !== 'production',
    wsLimits: {
      connectionsPerUser: e.WS_MAX_CONNECTIONS_PER_USER,
      subscriptionsPerUser: e.WS_MAX_SUBSCRIPTIONS_PER_USER,
      anonymousPerAddress: e.WS_MAX_ANONYMOUS_PER_ADDRESS,
    },
    embeddedPgPort: e.EMBEDDED_PG_PORT,
    masterKey: e.MASTER_KEY,
    userCommandBlueprints: e.USER_COMMAND_BLUEPRINTS,
    userQuota: { servers: e.USER_MAX_SERVERS, memory: e.USER_MAX_MEMORY, cpu: e.USER_MAX_CPU, disk: e.USER_MAX_DISK },
    subscriberMaxBufferedBytes: 4 * 1024 * 1024,
    subscriberSendBudgetBytes: 128 * 1024 * 1024,
    scheduleTickMs: 5_000,
    bodyTimeoutMs: 60_000,
  };
  return { ...config, ...overrides };
}
