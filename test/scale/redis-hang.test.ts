/**
 * A Redis that hangs (connected, but answering nothing: a network partition, a stopped server) under
 * a gateway instance, made by a TCP proxy that stops forwarding: requests must still be answered,
 * counted in memory meanwhile, REST and GraphQL alike. Needs REDIS_URL; without it the test is
 * skipped (and says so).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import { SIGNIN_FAILURES } from '../../src/services/signin-throttle.js';
import { HoldingProxy } from '../support/redis-proxy.js';
import { redisOnly } from '../support/redis-only.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

const { redisUrl: REDIS_URL, describeRedis } = redisOnly('test/scale/redis-hang.test.ts', 'to make hang');

/** A request that must be answered: a hang fails the test (after 10 s) instead of waiting forever. */
async function answered(p: TestPlatform, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; remaining: string | null }> {
  const res = await fetch(p.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(10_000),
  });
  await res.text();
  return { status: res.status, remaining: res.headers.get('x-ratelimit-remaining') };
}

/** The count Redis holds under the one key matching `pattern` (0 when there is none). */
async function redisCount(pattern: string): Promise<number> {
  const direct = new Redis(REDIS_URL, { lazyConnect: true });
  try {
    await direct.connect();
    const keys = await direct.keys(pattern);
    expect(keys.length).toBeLessThanOrEqual(1);
    return keys.length ? Number(await direct.get(keys[0]!)) : 0;
  } finally {
    direct.disconnect();
  }
}

describeRedis('a Redis that hangs under the rate limiter', () => {
  const target = new URL(REDIS_URL);
  const proxy = new HoldingProxy({ host: target.hostname, port: Number(target.port || 6379) });
  let p: TestPlatform;
  let token: string;

  beforeAll(async () => {
    await proxy.open();
    const viaProxy = new URL(REDIS_URL);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    p = await startTestPlatform({ rateLimits: { general: 6, auth: 100, admin: 100 } }, { REDIS_URL: viaProxy.toString() });
    token = (await p.newUser()).token;
  }, 60_000);
  afterAll(async () => {
    proxy.release();
    await p?.stop();
    await proxy.close();
  }, 60_000);

  test('requests are answered and still limited (in memory) while Redis hangs; shared counting resumes after', async () => {
    // connected: the budget is counted in Redis
    const first = await answered(p, 'GET', '/api/v1/users/me', token);
    expect(first).toEqual({ status: 200, remaining: '5' });

    proxy.hold();
    const during: number[] = [];
    for (let i = 0; i < 8; i++) during.push((await answered(p, 'GET', '/api/v1/users/me', token)).status);
    // a GraphQL operation spending from two buckets is answered too
    const graphql = await answered(p, 'POST', '/graphql', token, { query: '{ me { id } session { user { id } } }' });
    expect([200, 429]).toContain(graphql.status);
    // in memory the window starts afresh: 6 allowed, then 429 (the limit holds during the outage)
    expect(during).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);

    proxy.release();
  }, 60_000);

  // the sign-in throttle falls back on its own: the hang above (other buckets) left it counting in Redis
  test('a Redis that hangs in the middle of a guessing run gives the account no more sign-in tries than the throttle allows', async () => {
    const u = await p.newUser('guessed');
    const signin = (password: string) => p.request('POST', '/api/v1/auth/signin', { body: { email: u.email, password } });
    const before = 4;
    for (let i = 0; i < before; i++) expect((await signin(`wrong-${i}`)).status).toBe(401);
    expect(await redisCount(`hostpanel:${p.dbName}:signin-failures*`)).toBe(before);

    proxy.hold();
    try {
      const during: number[] = [];
      for (let i = 0; i < SIGNIN_FAILURES; i++) during.push((await signin(`wrong-during-${i}`)).status);
      expect(during.filter((s) => s === 401)).toHaveLength(SIGNIN_FAILURES - before);
      expect(during.filter((s) => s === 429)).toHaveLength(before);
      expect((await signin(u.password)).status).toBe(429);
    } finally {
      proxy.release();
    }
  }, 60_000);

  test("an instance that loses Redis keeps counting from all the instances' failures, not only its own", async () => {
    // a second instance on the same database, its Redis reached directly (it never hangs)
    const masterKey = readFileSync(path.join(p.config.dataDir, 'keys', 'master.key'), 'utf8').trim();
    const other = await startTestPlatform({}, { REDIS_URL, MASTER_KEY: masterKey }, { database: p.dbName });
    try {
      const signinAs = (at: TestPlatform, email: string, password: string) => at.request('POST', '/api/v1/auth/signin', { body: { email, password } });
      const counted = (email: string) => redisCount(`hostpanel:${p.dbName}:signin-failures:${email}`);
      // after the hang above, this instance leaves Redis aside for a few seconds: wait until its sign-in failures are counted there again
      const probe = await p.newUser('probe');
      await until(async () => (await signinAs(p, probe.email, 'wrong'), (await counted(probe.email)) > 0) || null, 20_000, 'sign-in failures counted in Redis again', 1000);
      const u = await p.newUser('guessed-twice');
      const signinAt = (at: TestPlatform, password: string) => signinAs(at, u.email, password);
      const elsewhere = 6;
      for (let i = 0; i < elsewhere; i++) expect((await signinAt(other, `wrong-there-${i}`)).status).toBe(401);
      // one failure here while Redis answers: its count, the instances' sum, becomes this instance's own
      expect((await signinAt(p, 'wrong-here')).status).toBe(401);
      expect(await counted(u.email)).toBe(elsewhere + 1);

      proxy.hold();
      try {
        const during: number[] = [];
        for (let i = 0; i < SIGNIN_FAILURES; i++) during.push((await signinAt(p, `wrong-during-${i}`)).status);
        expect(during.filter((s) => s === 401)).toHaveLength(SIGNIN_FAILURES - elsewhere - 1);
      } finally {
        proxy.release();
      }
    } finally {
      await other.stop();
    }
  }, 60_000);
});
