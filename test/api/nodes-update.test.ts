/**
 * PATCH /nodes/:id and GraphQL updateNode over real HTTP, a real database and a real node agent:
 * renames and capacity changes, the floor of what the node's servers have allocated (also against a
 * server created at the same time), name conflicts, what a body without changes does, admin only,
 * the `node:update` entry naming the fields that changed, and the agent reached at its new address.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startAgent } from '../../src/agent/index.js';
import { expectData, expectGqlError, gql } from '../graphql/gql.js';
import { blueprintsByKey, createNode, expectError, expectFieldError, localNodeId } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform;
let admin: string;
let user: string;
let blueprintId: string;

beforeAll(async () => {
  p = await startTestPlatform();
  admin = (await p.admin()).token;
  user = (await p.newUser('Plain User')).token;
  blueprintId = (await blueprintsByKey(p, admin))['shell-command'].id;
});
afterAll(async () => p?.stop());

const patch = (id: string, body: unknown, token = admin) => p.request('PATCH', `/api/v1/nodes/${id}`, { token, body });
const getNode = async (id: string) => (await p.request('GET', `/api/v1/nodes/${id}`, { token: admin })).body.data;
const server = (nodeId: string, memory: number, disk: number) =>
  p.request('POST', '/api/v1/servers', { token: admin, body: { name: 's', nodeId, blueprintId, memory, cpu: 50, disk } });

/** The `node:update` entries of a node, newest first. */
async function updates(nodeId: string): Promise<any[]> {
  const r = await p.request('GET', '/api/v1/admin/activity?event=node:update&limit=100', { token: admin });
  expect(r.status).toBe(200);
  return r.body.data.filter((e: any) => e.properties.nodeId === nodeId);
}

const UPDATE = 'mutation($id: ID!, $input: UpdateNodeInput!) { updateNode(id: $id, input: $input) { id name fqdn port scheme memory disk cpuCores updatedAt allocated { memory disk } } }';

test('a rename and a capacity raise are saved, answered as GET gives the node, and recorded with the changed fields only', async () => {
  const n = await createNode(p, admin, { memory: 1024, disk: 2048 });
  const r = await patch(n.id, { name: `renamed-${n.id}`, memory: 4096, disk: 2048, fqdn: 'Node9.Example.com', port: 5001, scheme: 'https', cpuCores: 8 });
  expect(r.status).toBe(200);
  expect(r.body.data).toMatchObject({ name: `renamed-${n.id}`, memory: 4096, disk: 2048, fqdn: 'node9.example.com', port: 5001, scheme: 'https', cpuCores: 8 });
  expect(r.body.data).toEqual(await getNode(n.id));
  // disk was sent with its current value: not a change (fields in the order of the create body)
  expect((await updates(n.id)).map((e) => e.properties)).toEqual([{ nodeId: n.id, fields: ['name', 'fqdn', 'port', 'scheme', 'memory', 'cpuCores'] }]);
});

test('a body that changes nothing (empty, the same values, or unknown fields only) answers the node as it is and records nothing', async () => {
  const n = await createNode(p, admin);
  const before = await getNode(n.id);
  for (const body of [{}, { name: n.name, memory: n.memory, fqdn: n.fqdn }, { unknown: 'field', sftpPort: 2022, status: 'online' }]) {
    const r = await patch(n.id, body);
    expect([r.status, r.body.data]).toEqual([200, before]);
  }
  expect(await updates(n.id)).toEqual([]);
  // an unknown field beside a known one is ignored (CONTRACT §1), the known one applies
  const r = await patch(n.id, { memory: 9000, unknown: 'field' });
  expect([r.status, r.body.data.memory, r.body.data.sftpPort]).toEqual([200, 9000, null]);
  expect((await updates(n.id)).map((e) => e.properties.fields)).toEqual([['memory']]);
});

test.each([
  ['name', { name: '' }],
  ['name', { name: 42 }],
  ['fqdn', { fqdn: 'http://node.example.com' }],
  ['port', { port: 0 }],
  ['port', { port: null }],
  ['scheme', { scheme: 'ftp' }],
  ['memory', { memory: 63 }],
  ['memory', { memory: '4096' }],
  ['disk', { disk: 1.5 }],
  ['cpuCores', { cpuCores: 0 }],
])('the create body\'s rules apply: bad %s → 422 naming it (%j), nothing changed', async (field, body) => {
  const n = await createNode(p, admin);
  const before = await getNode(n.id);
  expectFieldError(await patch(n.id, body), field);
  expect(await getNode(n.id)).toEqual(before);
});

test('cpuCores: null hands the figure back to the agent\'s heartbeat', async () => {
  const n = await createNode(p, admin, { cpuCores: 4 });
  const r = await patch(n.id, { cpuCores: null });
  expect([r.status, r.body.data.cpuCores]).toEqual([200, null]);
  expect((await updates(n.id)).map((e) => e.properties.fields)).toEqual([['cpuCores']]);
});

test('memory or disk below what the servers have allocated → 422 INVALID_STATE naming the figure; nothing changes', async () => {
  const n = await createNode(p, admin, { memory: 2048, disk: 4096 });
  expect((await server(n.id, 500, 1000)).status).toBe(201);
  expect((await server(n.id, 300, 600)).status).toBe(201);
  const before = await getNode(n.id);
  expect(before.allocated).toEqual({ memory: 800, disk: 1600 });

  const low = await patch(n.id, { name: `never-${n.id}`, memory: 799 });
  expectError(low, 422, 'INVALID_STATE');
  expect(low.body.error.message).toMatch(/800 MiB of memory allocated; delete or shrink them first/);
  expect(low.body.error.details).toEqual({ fields: { memory: expect.stringContaining('800') }, allocated: { memory: 800, disk: 1600 } });
  const both = await patch(n.id, { memory: 100, disk: 1599 });
  expectError(both, 422, 'INVALID_STATE');
  expect(Object.keys(both.body.error.details.fields)).toEqual(['memory', 'disk']);
  expect(await getNode(n.id)).toEqual(before);
  expect(await updates(n.id)).toEqual([]);

  // down to exactly what is allocated is fine
  const exact = await patch(n.id, { memory: 800, disk: 1600 });
  expect([exact.status, exact.body.data.memory, exact.body.data.disk, exact.body.data.allocated]).toEqual([200, 800, 1600, { memory: 800, disk: 1600 }]);
  // and the node is then full for a new server
  expectError(await server(n.id, 64, 128), 422, 'CAPACITY_EXCEEDED');
});

test('another node\'s name → 422 ALREADY_EXISTS with fields.name, as at create; the node keeps its own name', async () => {
  const a = await createNode(p, admin);
  const b = await createNode(p, admin);
  const r = await patch(b.id, { name: a.name, memory: 12345 });
  expectError(r, 422, 'ALREADY_EXISTS');
  expect(r.body.error.details.fields.name).toEqual(expect.any(String));
  expect(await getNode(b.id)).toMatchObject({ name: b.name, memory: b.memory });
  // its own name is no conflict
  expect((await patch(b.id, { name: b.name })).status).toBe(200);
});

test('administrators only; an unknown or malformed id is a 404 as GET /nodes/:id gives it', async () => {
  const n = await createNode(p, admin);
  expectError(await patch(n.id, { memory: 99999 }, user), 403, 'FORBIDDEN');
  expectError(await p.request('PATCH', `/api/v1/nodes/${n.id}`, { body: { memory: 99999 } }), 401, 'UNAUTHORIZED');
  expect((await getNode(n.id)).memory).toBe(n.memory);
  for (const id of ['00000000-0000-4000-8000-000000000000', 'nope']) {
    const get = await p.request('GET', `/api/v1/nodes/${id}`, { token: admin });
    expectError(get, 404, 'NOT_FOUND');
    const r = await patch(id, { memory: 99999 });
    expect([r.status, r.body]).toEqual([get.status, get.body]);
  }
  const g = await gql(p, UPDATE, { id: n.id, input: { memory: 99999 } }, { token: user });
  expectGqlError(g, 'FORBIDDEN');
  expectGqlError(await gql(p, UPDATE, { id: 'nope', input: { memory: 99999 } }, { token: admin }), 'NOT_FOUND');
});

test('GraphQL updateNode gives what PATCH gives: the node, its rules and its errors', async () => {
  const n = await createNode(p, admin, { memory: 1000, disk: 1000 });
  expect((await server(n.id, 600, 600)).status).toBe(201);
  const g = expectData(await gql(p, UPDATE, { id: n.id, input: { name: `g-${n.id}`, memory: 2000 } }, { token: admin })).updateNode;
  const rest = await getNode(n.id);
  expect(g).toEqual({ id: n.id, name: rest.name, fqdn: rest.fqdn, port: rest.port, scheme: rest.scheme, memory: 2000, disk: 1000, cpuCores: rest.cpuCores, updatedAt: rest.updatedAt, allocated: { memory: 600, disk: 600 } });
  expect(rest.name).toBe(`g-${n.id}`);
  expect((await updates(n.id)).map((e) => e.properties.fields)).toEqual([['name', 'memory']]);

  const low = await gql(p, UPDATE, { id: n.id, input: { disk: 599 } }, { token: admin });
  expectGqlError(low, 'INVALID_STATE');
  expect(low.body.errors![0]!.message).toMatch(/600 MiB of disk allocated/);
  expect(low.body.errors![0]!.extensions.details.allocated).toEqual({ memory: 600, disk: 600 });
  const taken = await createNode(p, admin);
  expectGqlError(await gql(p, UPDATE, { id: n.id, input: { name: taken.name } }, { token: admin }), 'ALREADY_EXISTS');
  expectGqlError(await gql(p, UPDATE, { id: n.id, input: { port: 70000 } }, { token: admin }), 'VALIDATION_ERROR');
  // nothing to change: the node as it is, no entry
  expect(expectData(await gql(p, UPDATE, { id: n.id, input: {} }, { token: admin })).updateNode.memory).toBe(2000);
  // cpuCores: null reaches the service as REST's null does
  expect(expectData(await gql(p, UPDATE, { id: n.id, input: { cpuCores: null } }, { token: admin })).updateNode.cpuCores).toBeNull();
  expect((await updates(n.id)).map((e) => e.properties.fields)).toEqual([['cpuCores'], ['name', 'memory']]);
  expect(await getNode(n.id)).toMatchObject({ memory: 2000, disk: 1000, name: `g-${n.id}` });
});

test('a server created while the node shrinks: one of the two is refused, and allocation never exceeds capacity', async () => {
  for (let round = 0; round < 6; round++) {
    const n = await createNode(p, admin, { memory: 1000, disk: 1000 });
    expect((await server(n.id, 400, 400)).status).toBe(201);
    // either fits alone (400 + 400 ≤ 1000; 400 ≤ 500), not both
    const [created, shrunk] = await Promise.all([server(n.id, 400, 400), patch(n.id, { memory: 500 })]);
    const after = await getNode(n.id);
    expect(after.allocated.memory).toBeLessThanOrEqual(after.memory);
    if (created.status === 201) {
      expectError(shrunk, 422, 'INVALID_STATE');
      expect(after).toMatchObject({ memory: 1000, allocated: { memory: 800, disk: 800 } });
    } else {
      expectError(created, 422, 'CAPACITY_EXCEEDED');
      expect(shrunk.status).toBe(200);
      expect(after).toMatchObject({ memory: 500, allocated: { memory: 400, disk: 400 } });
    }
  }
});

test('a new fqdn, port or scheme is the address the panel calls next (none is kept from before)', async () => {
  // the agent listens on 127.0.0.1 only: 127.0.0.2 (loopback too) refuses, as port 1 does
  const n = await createNode(p, admin, { fqdn: '127.0.0.2', port: 1 });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'nodes-update-agent-'));
  const agent = await startAgent({ panelUrl: p.url, nodeId: n.id, nodeToken: n.token, port: 0, sftpPort: 0, host: '127.0.0.1', dataDir, stopGraceSeconds: 2 });
  try {
    const online = async () => (await p.request('GET', `/api/v1/nodes/${n.id}/stats`, { token: admin })).body.data.online;
    const steps: [Record<string, unknown>, boolean][] = [
      [{}, false],
      [{ port: agent.port }, false],
      [{ fqdn: '127.0.0.1' }, true],
      [{ scheme: 'https' }, false],
      [{ scheme: 'http' }, true],
      [{ port: 1 }, false],
    ];
    const seen: boolean[] = [];
    for (const [body] of steps) {
      expect((await patch(n.id, body)).status).toBe(200);
      seen.push(await online());
    }
    expect(seen).toEqual(steps.map(([, up]) => up));
    expect((await updates(n.id)).map((e) => e.properties.fields).reverse()).toEqual([['port'], ['fqdn'], ['scheme'], ['scheme'], ['port']]);
  } finally {
    await agent.close().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 60_000);

test('the node "local" the panel runs in its own process keeps its name and address (found by its name, its address set at every start); its capacity changes', async () => {
  const local = await startTestPlatform({ localAgent: true, agentPort: 0 });
  try {
    const token = (await local.admin()).token;
    const id = await localNodeId(local, token);
    const before = (await local.request('GET', `/api/v1/nodes/${id}`, { token })).body.data;
    for (const body of [{ name: 'renamed' }, { fqdn: '10.0.0.9' }, { port: before.port + 1 }, { scheme: 'https' }]) {
      const r = await local.request('PATCH', `/api/v1/nodes/${id}`, { token, body });
      expectError(r, 422, 'INVALID_STATE');
      expect(Object.keys(r.body.error.details.fields)).toEqual(Object.keys(body));
    }
    // its current values sent back are no change
    expect((await local.request('PATCH', `/api/v1/nodes/${id}`, { token, body: { name: before.name, fqdn: before.fqdn, port: before.port, scheme: before.scheme } })).status).toBe(200);
    const r = await local.request('PATCH', `/api/v1/nodes/${id}`, { token, body: { memory: before.memory + 1 } });
    expect([r.status, r.body.data.memory, r.body.data.name]).toEqual([200, before.memory + 1, 'local']);
  } finally {
    await local.stop();
  }
}, 90_000);
