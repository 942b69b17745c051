/**
 * An administrator's change to an account on gateway instance A reaches the account's GraphQL
 * sockets held by instance B at once (docs/accounts.md: "on every gateway instance", through Redis).
 * The waits are 3 s, less than the sockets' periodic 4 s credential check. Needs REDIS_URL.
 */
import { randomBytes } from 'node:crypto';
import { trackedClients } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { redisOnly } from '../support/redis-only.js';
import { until } from '../support/wait.js';

const { describeRedis } = redisOnly('test/scale/accounts-across.test.ts', 'to carry account changes between two gateway instances');

describeRedis('account changes across two gateway instances', () => {
  let a: TestPlatform;
  let b: TestPlatform;
  let admin: { token: string };
  const clients = trackedClients();

  beforeAll(async () => {
    const masterKey = randomBytes(32).toString('base64');
    a = await startTestPlatform({}, { MASTER_KEY: masterKey });
    b = await startTestPlatform({}, { MASTER_KEY: masterKey }, { database: a.dbName });
    admin = await a.admin();
  }, 60_000);
  afterAll(async () => {
    await clients.disposeAll();
    await b?.stop();
    await a?.stop();
  }, 60_000);

  /** A socket of `token` on B, kept open; its close code once closed. */
  async function socketOnB(token: string): Promise<{ code: () => number | null }> {
    let code: number | null = null;
    let connected = false;
    clients.open(b.url, token, { lazy: false, onNonLazyError: () => undefined, on: { connected: () => void (connected = true), closed: (e: any) => void (code ??= e.code) } });
    await until(() => connected, 10_000, 'the socket on B to open');
    return { code: () => code };
  }

  test('deleting an account on A closes its GraphQL socket on B with 4401 at once', async () => {
    const victim = await a.newUser('victim');
    const s = await socketOnB(victim.token);
    expect((await a.request('DELETE', `/api/v1/admin/users/${victim.user.id}`, { token: admin.token })).status).toBe(204);
    await until(() => s.code() !== null, 3_000, 'the socket on B to close');
    expect(s.code()).toBe(4401);
  });

  test('taking the administrator role away on A closes the account\'s GraphQL socket on B with 4403 at once', async () => {
    const deputy = await a.newUser('deputy');
    expect((await a.request('PATCH', `/api/v1/admin/users/${deputy.user.id}`, { token: admin.token, body: { role: 'admin' } })).status).toBe(200);
    const s = await socketOnB(deputy.token);
    expect((await a.request('PATCH', `/api/v1/admin/users/${deputy.user.id}`, { token: admin.token, body: { role: 'user' } })).status).toBe(200);
    await until(() => s.code() !== null, 3_000, 'the socket on B to close');
    expect(s.code()).toBe(4403);
  });

  test('a password set on A closes the account\'s session socket on B with 4401 at once', async () => {
    const victim = await a.newUser('reset');
    const s = await socketOnB(victim.token);
    expect((await a.request('PATCH', `/api/v1/admin/users/${victim.user.id}`, { token: admin.token, body: { password: 'another-password-1' } })).status).toBe(200);
    await until(() => s.code() !== null, 3_000, 'the socket on B to close');
    expect(s.code()).toBe(4401);
  });
});
