/**
 * Requests that race each other on one account or one server (found by an audit that sent them
 * truly at once): each must get a documented answer, and what the database and the node hold
 * afterwards must be what the answers said.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { blueprintsByKey, localNodeId } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until, sleep } from '../support/wait.js';

let p: TestPlatform;
let admin: { token: string };
let nodeId: string;
let blueprints: Record<string, any>;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 3 });
  admin = await p.admin();
  nodeId = await localNodeId(p, admin.token);
  blueprints = await blueprintsByKey(p, admin.token);
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

async function createServers(n: number, key = 'demo-game'): Promise<string[]> {
  const body = (i: number) => ({ name: `race ${i}`, nodeId, blueprintId: blueprints[key].id, memory: 64, cpu: 10, disk: 128 });
  const created = await Promise.all(Array.from({ length: n }, (_, i) => p.request('POST', '/api/v1/servers', { token: admin.token, body: body(i) })));
  for (const r of created) if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`);
  return created.map((r) => r.body.data.id);
}

const UPDATE = 'mutation($id: ID!, $input: UpdateServerInput!) { updateServer(id: $id, input: $input) { id } }';

test('updates racing the delete of their server get 200 or 404, never a 500, and the node keeps no deleted server', async () => {
  const outcomes: Record<string, number> = {};
  const count = (k: string) => (outcomes[k] = (outcomes[k] ?? 0) + 1);
  const deleted: string[] = [];
  for (let round = 0; round < 3; round++) {
    const ids = await createServers(10);
    await Promise.all(
      ids.map(async (id) => {
        const [rest, graphql, del, rest2] = await Promise.all([
          p.request('PATCH', `/api/v1/servers/${id}`, { token: admin.token, body: { name: 'renamed', memory: 70 } }),
          p.request('POST', '/graphql', { token: admin.token, body: { query: UPDATE, variables: { id, input: { name: 'g', memory: 72 } } } }),
          p.request('DELETE', `/api/v1/servers/${id}`, { token: admin.token }),
          p.request('PATCH', `/api/v1/servers/${id}`, { token: admin.token, body: { description: 'x' } }),
        ]);
        count(`REST ${rest.status}`);
        count(`REST ${rest2.status}`);
        count(`GraphQL ${graphql.body.errors?.[0]?.extensions?.code ?? 'ok'}`);
        expect({ status: del.status, error: del.body?.error }).toEqual({ status: 204, error: undefined });
        deleted.push(id);
      }),
    );
  }
  expect(Object.keys(outcomes).filter((k) => !/^(REST (200|404)|GraphQL (ok|NOT_FOUND))$/.test(k))).toEqual([]);

  // the node has none of them: no files, and its server count is the panel's
  const serversDir = path.join(p.config.dataDir, 'agent', 'servers');
  await until(async () => deleted.every((id) => !existsSync(path.join(serversDir, id))), 10_000, 'the deleted servers\' files to be gone');
  const panelCount = (await p.request('GET', `/api/v1/servers?nodeId=${nodeId}&limit=1`, { token: admin.token })).body.meta.total;
  const stats = await p.request('GET', `/api/v1/nodes/${nodeId}/stats`, { token: admin.token });
  expect(stats.body.data.servers.total).toBe(panelCount);
}, 120_000);

test('concurrent updates of different variables of one server all take effect', async () => {
  const ids = await createServers(5);
  await Promise.all(
    ids.map((id, i) =>
      Promise.all([
        p.request('PATCH', `/api/v1/servers/${id}`, { token: admin.token, body: { variables: { MOTD: `motd ${i}` } } }),
        p.request('PATCH', `/api/v1/servers/${id}`, { token: admin.token, body: { variables: { MAX_PLAYERS: String(10 + i) } } }),
        p.request('POST', '/graphql', { token: admin.token, body: { query: UPDATE, variables: { id, input: { variables: { SERVER_PORT: String(30000 + i) } } } } }),
      ]),
    ),
  );
  const kept = await Promise.all(ids.map(async (id) => (await p.request('GET', `/api/v1/servers/${id}`, { token: admin.token })).body.data.variables));
  kept.forEach((v, i) => expect(v).toMatchObject({ MOTD: `motd ${i}`, MAX_PLAYERS: String(10 + i), SERVER_PORT: String(30000 + i) }));
}, 60_000);

describe('password changes', () => {
  test('no session signed in with the old password outlives a password change, however the sign-ins interleave with it', async () => {
    const u = await p.newUser('Racer');
    const signins: Promise<{ status: number; token?: string }>[] = [];
    let stop = false;
    let firstSignedIn: () => void = () => undefined;
    const someSignedIn = new Promise<void>((resolve) => (firstSignedIn = resolve));
    const spray = (async () => {
      while (!stop) {
        const signin = p.request('POST', '/api/v1/auth/signin', { body: { email: u.email, password: u.password } });
        signins.push(signin.then((r) => (r.status === 200 && firstSignedIn(), { status: r.status, token: r.body?.data?.token })));
        await sleep(3);
      }
    })();
    // the change starts once a sign-in has got through, with more of them under way
    await someSignedIn;
    const change = await p.request('PATCH', '/api/v1/users/me', { token: u.token, body: { password: 'a-new-password-456', currentPassword: u.password } });
    expect(change.status).toBe(200);
    stop = true;
    await spray;
    const results = await Promise.all(signins);
    // 429: the per-account throttle after 10 failed sign-ins (the old password, after the change)
    expect(results.every((r) => r.status === 200 || r.status === 401 || r.status === 429)).toBe(true);
    const tokens = results.filter((r) => r.status === 200).map((r) => r.token!);
    const alive = (await Promise.all(tokens.map((t) => p.request('GET', '/api/v1/auth/session', { token: t })))).filter((r) => r.status === 200).length;
    expect(`${alive} of ${tokens.length} old-password sessions still work`).toBe(`0 of ${tokens.length} old-password sessions still work`);
    // the one that changed the password is still signed in, and the new password is the one checked
    // (a sign-in may be throttled by now: the failed sign-ins of the spray count against the account)
    expect((await p.request('GET', '/api/v1/auth/session', { token: u.token })).status).toBe(200);
    expect((await p.request('PATCH', '/api/v1/users/me', { token: u.token, body: { password: 'a-third-password-789', currentPassword: 'a-new-password-456' } })).status).toBe(200);
  }, 60_000);

  test('two changes at once from two sessions: one wins, the other is refused, and the winner stays signed in', async () => {
    for (let round = 0; round < 3; round++) {
      const u = await p.newUser('Twice');
      const second = (await p.request('POST', '/api/v1/auth/signin', { body: { email: u.email, password: u.password } })).body.data.token;
      const [a, b] = await Promise.all(
        [u.token, second].map((token, i) =>
          p.request('PATCH', '/api/v1/users/me', { token, body: { password: `new-password-${i}-xyz`, currentPassword: u.password } }),
        ),
      );
      const statuses = [a.status, b.status].sort();
      // the loser either is told its current password is wrong now (422) or finds its session ended (401)
      expect([statuses, 'one 200'].join()).toMatch(/^200,(401|422),one 200$/);
      const winner = a.status === 200 ? 0 : 1;
      const winnerToken = winner === 0 ? u.token : second;
      expect((await p.request('GET', '/api/v1/auth/session', { token: winnerToken })).status).toBe(200);
      expect((await p.request('POST', '/api/v1/auth/signin', { body: { email: u.email, password: `new-password-${winner}-xyz` } })).status).toBe(200);
      expect((await p.request('POST', '/api/v1/auth/signin', { body: { email: u.email, password: `new-password-${1 - winner}-xyz` } })).status).toBe(401);
    }
  }, 60_000);
});
