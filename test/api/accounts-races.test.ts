/**
 * Deleting an account while the account (or someone on its behalf) writes something that
 * refers to it. docs/accounts.md: refusals are documented 4xx errors; nothing here may answer 500, and
 * nothing may be left behind for an account that is gone.
 */
import { blueprintsByKey, createLocalDemoServer, localNodeId } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

jest.setTimeout(120_000);

type Account = Awaited<ReturnType<TestPlatform['newUser']>>;
let p: TestPlatform;
let admin: { token: string; user: any };
let owner: Account;
let serverId: string;
const ROUNDS = 15;

const del = (id: string) => p.request('DELETE', `/api/v1/admin/users/${id}`, { token: admin.token });

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, rateLimits: { general: 100_000, auth: 100_000, admin: 100_000 } });
  admin = await p.admin();
  owner = await p.newUser('Owner');
  serverId = await createLocalDemoServer(p, admin.token, owner.token, 'shared');
}, 90_000);

afterAll(async () => {
  await p?.stop();
}, 60_000);

/**
 * Runs `write` for a fresh account at the same time as its deletion, ROUNDS times; the statuses of both.
 * First, alone, `write` succeeds for an account that is not deleted (the request itself is valid).
 */
async function raceDeletion(write: (victim: Account, round: number) => Promise<{ status: number }>): Promise<Array<[number, number]>> {
  expect((await write(await p.newUser('control'), ROUNDS)).status).toBeLessThan(300);
  const seen: Array<[number, number]> = [];
  for (let round = 0; round < ROUNDS; round++) {
    const victim = await p.newUser(`victim${round}`);
    const [w, d] = await Promise.all([write(victim, round), del(victim.user.id)]);
    seen.push([w.status, d.status]);
  }
  return seen;
}

const serverErrors = (seen: Array<[number, number]>) => seen.filter(([w, d]) => w >= 500 || d >= 500);
/** Rounds where a server was created and its owner deleted all the same (an owner of servers is not deleted). */
const bothDone = (seen: Array<[number, number]>) => seen.filter(([w, d]) => w === 201 && d === 204);

test('an account creating a server for itself while it is deleted: a documented answer, never 500', async () => {
  const [nodeId, blueprints] = await Promise.all([localNodeId(p, admin.token), blueprintsByKey(p, admin.token)]);
  const body = (round: number) => ({ name: `mine${round}`, nodeId, blueprintId: blueprints['demo-game'].id, memory: 64, cpu: 10, disk: 128 });
  const seen = await raceDeletion((victim, round) => p.request('POST', '/api/v1/servers', { token: victim.token, body: body(round) }));
  expect({ serverErrors: serverErrors(seen), bothDone: bothDone(seen) }).toEqual({ serverErrors: [], bothDone: [] });
});

test('an administrator creating a server for an account while another deletes it: a documented answer, never 500', async () => {
  const [nodeId, blueprints] = await Promise.all([localNodeId(p, admin.token), blueprintsByKey(p, admin.token)]);
  const body = (ownerId: string, round: number) => ({ name: `for${round}`, ownerId, nodeId, blueprintId: blueprints['demo-game'].id, memory: 64, cpu: 10, disk: 128 });
  const seen = await raceDeletion((victim, round) => p.request('POST', '/api/v1/servers', { token: admin.token, body: body(victim.user.id, round) }));
  expect({ serverErrors: serverErrors(seen), bothDone: bothDone(seen) }).toEqual({ serverErrors: [], bothDone: [] });
});

test('an account invited as a subuser while it is deleted: a documented answer, never 500', async () => {
  const seen = await raceDeletion((victim) => p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: victim.email, permissions: ['file.read'] } }));
  expect(serverErrors(seen)).toEqual([]);
});

test('an account making itself an API token while it is deleted: a documented answer, never 500', async () => {
  const seen = await raceDeletion((victim) => p.request('POST', '/api/v1/users/me/api-tokens', { token: victim.token, body: { name: 'script' } }));
  expect(serverErrors(seen)).toEqual([]);
});

test('an account signing in while it is deleted: a documented answer, never 500', async () => {
  const seen = await raceDeletion((victim) => p.request('POST', '/api/v1/auth/signin', { body: { email: victim.email, password: victim.password } }));
  expect(serverErrors(seen)).toEqual([]);
});

test('the same account deleted twice at once: one 204, one 404', async () => {
  for (let round = 0; round < 5; round++) {
    const victim = await p.newUser(`twice${round}`);
    const statuses = (await Promise.all([del(victim.user.id), del(victim.user.id)])).map((r) => r.status).sort();
    expect(statuses).toEqual([204, 404]);
  }
});

test('an account promoted by one administrator while another deletes it: 200 then 204, or 404', async () => {
  const other = await p.newUser('OtherAdmin');
  expect((await p.request('PATCH', `/api/v1/admin/users/${other.user.id}`, { token: admin.token, body: { role: 'admin' } })).status).toBe(200);
  for (let round = 0; round < 5; round++) {
    const victim = await p.newUser(`promoted${round}`);
    const [promote, d] = await Promise.all([p.request('PATCH', `/api/v1/admin/users/${victim.user.id}`, { token: other.token, body: { role: 'admin' } }), del(victim.user.id)]);
    expect(d.status).toBe(204);
    expect([200, 404]).toContain(promote.status);
    expect((await p.request('GET', `/api/v1/admin/users/${victim.user.id}`, { token: admin.token })).status).toBe(404);
  }
});
