/**
 * POST /servers/:id/reinstall and GraphQL reinstallServer, on the local node agent: the way back from
 * a failed install once an administrator has fixed the blueprint's script (the server's files stay),
 * the owner's and administrators' alone, and refused while the server runs.
 */
import { createNode, expectError, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { expectData, gql } from '../graphql/gql.js';

let p: TestPlatform;
let admin: string;
let owner: { token: string; user: any };
let nodeId: string;
let n = 0;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 2 });
  admin = (await p.admin()).token;
  owner = await p.newUser('owner');
  nodeId = await localNodeId(p, admin);
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

/** A blueprint running `sleep 60` (running at once) with this install script; its id. */
async function blueprint(install: string | null): Promise<string> {
  const body = { key: `reinstall-${++n}`, name: `Reinstall ${n}`, startup: 'sleep 60', stop: 'SIGTERM', ready: null, install, installShell: 'sh' };
  const r = await p.request('POST', '/api/v1/admin/blueprints', { token: admin, body });
  if (r.status !== 201) throw new Error(r.text);
  return r.body.data.id;
}

async function server(blueprintId: string, on = nodeId): Promise<string> {
  const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: `reinstall ${++n}`, nodeId: on, blueprintId, memory: 64, cpu: 10, disk: 128 } });
  if (r.status !== 201) throw new Error(r.text);
  return r.body.data.id;
}

const reinstall = (id: string, token = owner.token) => p.request('POST', `/api/v1/servers/${id}/reinstall`, { token });
const file = (id: string, path: string) => p.request('GET', `/api/v1/servers/${id}/files/contents?path=${encodeURIComponent(path)}`, { token: owner.token });

test("a failed install: the administrator fixes the blueprint's script, the owner reinstalls, and the server is offline and starts (its files kept)", async () => {
  const blueprintId = await blueprint('echo first run > kept.txt\necho about to fail\nexit 3');
  const id = await server(blueprintId);
  await waitForStatus(p, owner.token, id, 'install_failed');
  expectError(await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token }), 422, 'INVALID_STATE');

  const fixed = await p.request('PATCH', `/api/v1/admin/blueprints/${blueprintId}`, { token: admin, body: { install: 'test -f kept.txt && echo fixed > fixed.txt' } });
  expect(fixed.status).toBe(200);
  const r = await reinstall(id);
  expect(r.status).toBe(200);
  expect(r.body.data).toMatchObject({ id, status: 'installing', lastStopReason: null });
  await waitForStatus(p, owner.token, id, 'offline');
  // the files of the first run stayed: the fixed script found them
  expect((await file(id, '/kept.txt')).text).toBe('first run\n');
  expect((await file(id, '/fixed.txt')).text).toBe('fixed\n');

  expect((await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token })).status).toBe(200);
  await waitForStatus(p, owner.token, id, 'running');
  await p.request('POST', `/api/v1/servers/${id}/kill`, { token: owner.token });

  const activity = await p.request('GET', `/api/v1/servers/${id}/activity?event=server:reinstall`, { token: owner.token });
  expect(activity.body.data).toHaveLength(1);
  expect(activity.body.data[0]).toMatchObject({ event: 'server:reinstall', actor: { id: owner.user.id } });
}, 90_000);

test('only while nothing runs: a running server is 422 INVALID_STATE (stop it first), then reinstalls once killed', async () => {
  const id = await server(await blueprint(null));
  await waitForStatus(p, owner.token, id, 'offline');
  expect((await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token })).status).toBe(200);
  await waitForStatus(p, owner.token, id, 'running');
  const refused = await reinstall(id);
  expectError(refused, 422, 'INVALID_STATE');
  expect(refused.body.error.message).toMatch(/stop the server/i);
  expect((await p.request('GET', `/api/v1/servers/${id}`, { token: owner.token })).body.data.status).toBe('running');
  await p.request('POST', `/api/v1/servers/${id}/kill`, { token: owner.token });
  await waitForStatus(p, owner.token, id, 'offline');
  // a blueprint without a script: offline at once
  const r = await reinstall(id);
  expect([r.status, r.body.data.status]).toEqual([200, 'offline']);
}, 60_000);

test('the owner and administrators only: a subuser holding every key gets 403, a stranger 404; GraphQL reinstallServer answers as REST does', async () => {
  const id = await server(await blueprint('echo installed'));
  await waitForStatus(p, owner.token, id, 'offline');
  const keys = (await p.request('GET', '/api/v1/permissions', { token: owner.token })).body.data.map((k: any) => k.key);
  const sub = await p.newUser('subuser');
  expect((await p.request('POST', `/api/v1/servers/${id}/subusers`, { token: owner.token, body: { email: sub.email, permissions: keys } })).status).toBe(201);
  const stranger = await p.newUser('stranger');
  expectError(await reinstall(id, sub.token), 403, 'FORBIDDEN');
  expectError(await reinstall(id, stranger.token), 404, 'NOT_FOUND');
  const mutation = 'mutation ($id: ID!) { reinstallServer(id: $id) { id status } }';
  expect((await gql(p, mutation, { id }, { token: sub.token })).body.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
  expect((await p.request('GET', `/api/v1/servers/${id}/activity?event=server:reinstall`, { token: owner.token })).body.data).toEqual([]);

  expect(expectData(await gql(p, mutation, { id }, { token: admin })).reinstallServer).toEqual({ id, status: 'installing' });
  await waitForStatus(p, owner.token, id, 'offline');
}, 60_000);

test('a node that cannot be reached: 422 NODE_UNAVAILABLE, and the server keeps its status', async () => {
  const blueprintId = await blueprint(null);
  const id = await server(blueprintId, (await createNode(p, admin)).id);
  expect((await p.request('PATCH', `/api/v1/admin/blueprints/${blueprintId}`, { token: admin, body: { install: 'echo installed' } })).status).toBe(200);
  expectError(await reinstall(id), 422, 'NODE_UNAVAILABLE');
  expect((await p.request('GET', `/api/v1/servers/${id}`, { token: owner.token })).body.data.status).toBe('offline');
  expect((await p.request('GET', `/api/v1/servers/${id}/activity?event=server:reinstall`, { token: owner.token })).body.data).toEqual([]);
});
