/**
 * A Redis that hangs (connected, but answering nothing: a network partition, a stopped server) under
 * a gateway instance, made by a TCP proxy that stops forwarding: requests must still be answered,
 * counted in memory meanwhile, REST and GraphQL alike. Needs REDIS_URL; without it the test is
 * skipped (and says so).
 */
import Redis from 'ioredis';
import { SIGNIN_FAILURES } from '../../src/services/signin-throttle.js';
import { HoldingProxy } from '../support/redis-proxy.js';
import { redisOnly } from '../support/redis-only.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

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
    const direct = new Redis(REDIS_URL, { lazyConnect: true });
    try {
      await direct.connect();
      const keys = await direct.keys(`hostpanel:${p.dbName}:signin-failures*`);
      expect(keys).toHaveLength(1);
      expect(Number(await direct.get(keys[0]!))).toBe(before);
    } finally {
      direct.disconnect();
    }

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
});
