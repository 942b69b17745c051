/**
 * A server's startup variables and what they must not tell: without startup.read a read-only value
 * cannot be confirmed by guessing it (REST and GraphQL answer a right guess as a wrong one), a
 * `__proto__` key is refused rather than dropped, and the agent's own P_SERVER_UUID is no
 * blueprint's variable.
 */
import { createNode } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { gql } from '../graphql/gql.js';

let p: TestPlatform;
let admin: string;
let owner: { token: string; email: string };
let nodeId: string;
let serverId: string;

beforeAll(async () => {
  p = await startTestPlatform();
  admin = (await p.admin()).token;
  owner = await p.newUser('owner');
  nodeId = (await createNode(p, admin, { memory: 1_000_000, disk: 10_000_000 })).id;
  const bp = await p.request('POST', '/api/v1/admin/blueprints', {
    token: admin,
    body: {
      key: 'startup-secrets',
      name: 'probe',
      startup: 'run --rcon={{RCON_PASSWORD}} --motd={{MOTD}}',
      stop: 'stop',
      variables: [
        { key: 'RCON_PASSWORD', name: 'RCON password', description: '', default: 'S3cret-rcon', rules: 'nullable|string|max:64', userViewable: true, userEditable: false },
        { key: 'MOTD', name: 'MOTD', description: '', default: 'hello', rules: 'nullable|string|max:60', userViewable: true, userEditable: true },
      ],
    },
  });
  if (bp.status !== 201) throw new Error(bp.text);
  const s = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'st', nodeId, blueprintId: bp.body.data.id, memory: 64, cpu: 10, disk: 128 } });
  if (s.status !== 201) throw new Error(s.text);
  serverId = s.body.data.id;
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

async function subuser(permissions: string[]) {
  const u = await p.newUser('sub');
  const r = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: u.email, permissions } });
  if (r.status !== 201) throw new Error(r.text);
  return u;
}
const put = (token: string, variables: unknown) => p.request('PUT', `/api/v1/servers/${serverId}/startup`, { token, body: { variables } });

test('without startup.read, PUT does not tell a right guess of a read-only value from a wrong one (REST)', async () => {
  const w = await subuser(['startup.update']);
  // the subuser indeed may not read it
  expect((await p.request('GET', `/api/v1/servers/${serverId}/startup`, { token: w.token })).status).toBe(403);
  expect((await p.request('GET', `/api/v1/servers/${serverId}`, { token: w.token })).body.data.variables).toEqual({});
  const wrong = await put(w.token, { RCON_PASSWORD: 'guess-1' });
  const right = await put(w.token, { RCON_PASSWORD: 'S3cret-rcon' });
  expect(wrong.status).toBe(422);
  // the same answer as a wrong guess (the right one was a 200: the guess confirmed)
  expect(right.status).toBe(wrong.status);
});

test('with startup.read, a read-only value sent back unchanged is no change (a form saved whole), a new one is refused', async () => {
  const rw = await subuser(['startup.read', 'startup.update']);
  expect((await put(rw.token, { RCON_PASSWORD: 'S3cret-rcon', MOTD: 'hello' })).status).toBe(200);
  expect(Object.keys((await put(rw.token, { RCON_PASSWORD: 'other' })).body.error.details.fields)).toEqual(['variables.RCON_PASSWORD']);
});

test('without startup.read, updateServerStartup does not confirm a read-only value (GraphQL)', async () => {
  const w = await subuser(['startup.update']);
  const q = 'mutation($id: ID!, $v: JSONObject!) { updateServerStartup(serverId: $id, variables: $v) { startup } }';
  const wrong = await gql(p, q, { id: serverId, v: { RCON_PASSWORD: 'guess-2' } }, { token: w.token });
  const right = await gql(p, q, { id: serverId, v: { RCON_PASSWORD: 'S3cret-rcon' } }, { token: w.token });
  expect(wrong.body.errors?.[0]?.extensions.code).toBe('VALIDATION_ERROR');
  expect(right.body.errors?.[0]?.extensions.code).toBe('VALIDATION_ERROR');
});

test('`__proto__` is not a startup variable: 422, not a silent 200', async () => {
  const r = await p.request('PUT', `/api/v1/servers/${serverId}/startup`, { token: owner.token, raw: '{"variables":{"__proto__":"x"}}', headers: { 'content-type': 'application/json' } });
  expect(r.status).toBe(422);
  expect(r.body.error.details.fields).toHaveProperty(['variables.__proto__']);
});

test('a blueprint variable may not be named P_SERVER_UUID (the agent sets it and overrides the value)', async () => {
  const r = await p.request('POST', '/api/v1/admin/blueprints', {
    token: admin,
    body: { key: 'p-server-uuid', name: 'uuid', startup: 'run {{P_SERVER_UUID}}', stop: 'stop', variables: [{ key: 'P_SERVER_UUID', name: 'x', description: '', default: 'not-the-id', rules: 'nullable|string', userViewable: true, userEditable: true }] },
  });
  expect(r.status).toBe(422);
  expect(r.body.error.details.fields).toHaveProperty(['variables.0.key']);
});
