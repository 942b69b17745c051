/**
 * Starts a real panel (HTTP server + its own fresh PostgreSQL database) for one test file, and a
 * small fetch-based client. Nothing is mocked: requests go over TCP to the running server.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { loadConfig, type Config } from '../../src/config.js';
import { startPlatform, type Platform } from '../../src/platform.js';

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** One request and its response, kept when the platform records (`opts.record`; test/openapi). */
export interface RecordedExchange {
  method: string;
  /** as requested, with the query string */
  path: string;
  status: number;
  headers: Record<string, string>;
  body: unknown;
  text: string;
}

export interface RequestOptions {
  token?: string | undefined;
  body?: unknown;
  /** A raw body string sent as is (for malformed JSON tests). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  cookie?: string;
}

export interface TestPlatform extends Platform {
  dbName: string;
  request<T = any>(method: string, path: string, opts?: RequestOptions): Promise<Reply<T>>;
  /** Every exchange of request() when started with `opts.record` (else always empty). */
  recorded: RecordedExchange[];
  /** Signs up a fresh user and returns its session token and user. */
  newUser(name?: string): Promise<{ token: string; user: any; email: string; password: string }>;
  /** Signs in as the first administrator. */
  admin(): Promise<{ token: string; user: any }>;
  stop(): Promise<void>;
}

async function adminQuery(sql: string): Promise<void> {
  const c = new Client({ connectionString: process.env.TEST_PG_ADMIN_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

export const ADMIN_EMAIL = 'root@example.com';
export const ADMIN_PASSWORD = 'admin-password-123';

/**
 * `opts.database`: join the database of another test platform (a second gateway instance) instead
 * of creating a fresh one; it is then not dropped by this instance's stop().
 */
export async function startTestPlatform(
  overrides: Partial<Config> = {},
  env: Record<string, string> = {},
  opts: { database?: string; record?: boolean } = {},
): Promise<TestPlatform> {
  const recorded: RecordedExchange[] = [];
  const record = opts.record === true;
  const dbName = opts.database ?? 't_' + randomBytes(6).toString('hex');
  if (!opts.database) await adminQuery(`create database ${dbName}`);
  const u = new URL(process.env.TEST_PG_ADMIN_URL!);
  u.pathname = '/' + dbName;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hostpanel-test-data-'));
  const config = loadConfig(
    {
      ADMIN_EMAIL,
      ADMIN_PASSWORD,
      LOG_LEVEL: 'silent',
      // the whole suite runs against Redis too when the environment provides it
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
      ...env,
    },
    {
      port: 0,
      host: '127.0.0.1',
      dataDir,
      databaseUrl: u.toString(),
      localAgent: false,
      // a free port for each test platform's SFTP server (test files run in parallel)
      sftpPort: 0,
      rateLimits: { general: 100000, auth: 100000, admin: 100000 },
      // tests open many sockets of one account at once; test/graphql/ws-caps.test.ts tests the real caps
      wsLimits: { connectionsPerUser: 100000, subscriptionsPerUser: 100000, anonymousPerAddress: 100000 },
      // many tests make more servers as one user than the default quota allows (test/api/quotas.test.ts sets its own)
      userQuota: { servers: 0, memory: 0, cpu: 0, disk: 0 },
      ...overrides,
    },
  );
  const platform = await startPlatform(config);
  const base = platform.url;

  async function request<T = any>(method: string, p: string, opts: RequestOptions = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.cookie) headers.cookie = opts.cookie;
    let body: string | Buffer | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(base + p, { method, headers, body, redirect: 'manual' });
    const text = await res.text();
    let parsed: any = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (record) recorded.push({ method, path: p, status: res.status, headers: Object.fromEntries(res.headers), body: parsed, text });
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  let n = 0;
  async function newUser(name = 'User') {
    const email = `user${++n}.${randomBytes(3).toString('hex')}@example.com`;
    const password = 'password-' + randomBytes(4).toString('hex');
    const r = await request('POST', '/api/v1/auth/signup', { body: { email, password, name } });
    if (r.status !== 201) throw new Error(`signup failed: ${r.status} ${r.text}`);
    return { token: r.body.data.token as string, user: r.body.data.user, email, password };
  }

  async function admin() {
    const r = await request('POST', '/api/v1/auth/signin', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    if (r.status !== 200) throw new Error(`admin signin failed: ${r.status} ${r.text}`);
    return { token: r.body.data.token as string, user: r.body.data.user };
  }

  return Object.assign(platform, {
    dbName,
    request,
    recorded,
    newUser,
    admin,
    stop: async () => {
      await platform.close();
      if (!opts.database) await adminQuery(`drop database if exists ${dbName} with (force)`);
      rmSync(dataDir, { recursive: true, force: true });
    },
  });
}

/** Asserts a REST error: the status and exactly `{ error: { code, message, details } }`. */
export function expectError(r: { status: number; body: any }, status: number, code: string): void {
  expect(r.status).toBe(status);
  expect(r.body).toEqual({ error: { code, message: expect.any(String), details: expect.any(Object) } });
}
