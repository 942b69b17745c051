/**
 * Two gateway instances sharing one database and one Redis count failures together: the per-account
 * sign-in throttle (API and SFTP password checks) and the failed node signatures of an address are
 * kept in Redis (src/services/signin-throttle.ts), so N instances do not give N times the tries.
 * Needs REDIS_URL; without it these tests are skipped (and say so).
 */
import { randomBytes } from 'node:crypto';
import { deriveNodeKey, signRequest } from '../../src/shared/node-protocol.js';
import { SIGNIN_FAILURES } from '../../src/services/signin-throttle.js';
import { NODE_AUTH_FAILURES_PER_MINUTE } from '../../src/http/node-auth.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { redisOnly } from '../support/redis-only.js';

const { redisUrl: REDIS_URL, describeRedis } = redisOnly('test/scale/throttles-across.test.ts', 'to share failure counts between two gateway instances');

describeRedis('two gateway instances count failures together', () => {
  let a: TestPlatform;
  let b: TestPlatform;

  beforeAll(async () => {
    const masterKey = randomBytes(32).toString('base64');
    a = await startTestPlatform({}, { REDIS_URL, MASTER_KEY: masterKey });
    b = await startTestPlatform({}, { REDIS_URL, MASTER_KEY: masterKey }, { database: a.dbName });
  }, 60_000);
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  }, 60_000);

  const signin = (p: TestPlatform, email: string, password: string) => p.request('POST', '/api/v1/auth/signin', { body: { email, password } });

  test('10 failed sign-ins to an account on A: the next try on B is refused (429), even with the right password', async () => {
    const u = await a.newUser('throttled');
    for (let i = 0; i < SIGNIN_FAILURES; i++) expect((await signin(a, u.email, `wrong-${i}`)).status).toBe(401);
    const wrong = await signin(b, u.email, 'wrong-on-b');
    expect(wrong.status).toBe(429);
    expect(wrong.body.error.code).toBe('RATE_LIMITED');
    expect(Number(wrong.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await signin(b, u.email, u.password)).status).toBe(429);
    expect((await signin(a, u.email, u.password)).status).toBe(429);
  });

  test('a successful sign-in on B clears the failures counted on A', async () => {
    const u = await a.newUser('cleared');
    for (let i = 0; i < SIGNIN_FAILURES - 1; i++) expect((await signin(a, u.email, `wrong-${i}`)).status).toBe(401);
    expect((await signin(b, u.email, u.password)).status).toBe(200);
    for (let i = 0; i < SIGNIN_FAILURES; i++) expect((await signin(a, u.email, `again-${i}`)).status).toBe(401);
    expect((await signin(b, u.email, 'wrong-on-b')).status).toBe(429);
  });

  test('SFTP password checks on A and API sign-ins on B use up the same tries', async () => {
    const admin = await a.admin();
    const created = await a.request('POST', '/api/v1/nodes', { token: admin.token, body: { name: 'sftp-node', fqdn: '127.0.0.1', port: 9, memory: 1024, disk: 1024 } });
    expect(created.status).toBe(201);
    const nodeId: string = created.body.data.id;
    const key = deriveNodeKey(created.body.data.token);
    const u = await a.newUser('sftp');
    for (let i = 0; i < SIGNIN_FAILURES; i++) {
      const body = JSON.stringify({ username: `${u.email}.0123abcd`, password: `wrong-${i}`, ip: '203.0.113.7' });
      const authorization = signRequest(nodeId, key, 'POST', '/api/agent/v1/sftp/login', body);
      const r = await a.request('POST', '/api/agent/v1/sftp/login', { raw: body, headers: { authorization, 'content-type': 'application/json' } });
      expect(r.status).toBe(401);
    }
    expect((await signin(b, u.email, u.password)).status).toBe(429);
  });

  // last: it leaves this address refused on the node routes for a minute
  test('20 failed node signatures from an address on A: B refuses that address\'s node requests (429)', async () => {
    const admin = await a.admin();
    const created = await a.request('POST', '/api/v1/nodes', { token: admin.token, body: { name: 'forged-node', fqdn: '127.0.0.1', port: 9, memory: 1024, disk: 1024 } });
    expect(created.status).toBe(201);
    const nodeId: string = created.body.data.id;
    const forged = deriveNodeKey('not-the-node-token');
    for (let i = 0; i < NODE_AUTH_FAILURES_PER_MINUTE; i++) {
      const authorization = signRequest(nodeId, forged, 'GET', '/api/agent/v1/servers');
      expect((await a.request('GET', '/api/agent/v1/servers', { headers: { authorization } })).status).toBe(401);
    }
    const genuine = signRequest(nodeId, deriveNodeKey(created.body.data.token), 'GET', '/api/agent/v1/servers');
    const onB = await b.request('GET', '/api/agent/v1/servers', { headers: { authorization: genuine } });
    expect(onB.status).toBe(429);
    expect(onB.body.error.code).toBe('RATE_LIMITED');
  });
});
