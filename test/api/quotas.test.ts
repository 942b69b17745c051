/**
 * Per-user quotas (USER_MAX_SERVERS, USER_MAX_MEMORY, USER_MAX_CPU, USER_MAX_DISK) over real HTTP and a
 * real database: a user's servers together stay within them, concurrent creates included; servers count
 * against their owner; administrators are exempt.
 */
import { loadConfig } from '../../src/config.js';
import { blueprintsByKey, createNode, expectError } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { expectGqlError, gql } from '../graphql/gql.js';

const QUOTA = { servers: 3, memory: 1024, cpu: 300, disk: 4096 };

let p: TestPlatform;
let admin: { token: string; user: any };
let bp: Record<string, any>;
let node: { id: string };
/** Creates on different nodes do not wait for each other's node lock: only the quota's own lock orders them. */
let nodes: { id: string }[];

beforeAll(async () => {
  p = await startTestPlatform({ userQuota: QUOTA });
  admin = await p.admin();
  bp = await blueprintsByKey(p, admin.token);
  // the node has room for far more than any quota: only the quota can refuse
  node = await createNode(p, admin.token, { memory: 1_000_000, disk: 10_000_000, cpuCores: 64 });
  nodes = [node];
  for (let i = 0; i < 4; i++) nodes.push(await createNode(p, admin.token, { memory: 1_000_000, disk: 10_000_000, cpuCores: 64 }));
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

const small = (name = 's') => ({ name, nodeId: node.id, blueprintId: bp['shell-command'].id, memory: 64, cpu: 10, disk: 128 });

async function create(token: string, body: Record<string, unknown>) {
  return p.request('POST', '/api/v1/servers', { token, body });
}

async function countOf(token: string): Promise<number> {
  return (await p.request('GET', '/api/v1/servers?limit=100', { token })).body.meta.total;
}

describe('per-user quotas', () => {
  test('the server count: the (USER_MAX_SERVERS + 1)th server is 422 QUOTA_EXCEEDED saying which quota', async () => {
    const u = await p.newUser();
    for (let i = 0; i < QUOTA.servers; i++) expect((await create(u.token, small(`s${i}`))).status).toBe(201);
    const over = await create(u.token, small('one too many'));
    expectError(over, 422, 'QUOTA_EXCEEDED');
    expect(over.body.error.details).toMatchObject({ exceeded: ['servers'], limits: QUOTA, used: { servers: QUOTA.servers } });
    expect(over.body.error.message).toMatch(/limit of 3 servers/);
    expect(await countOf(u.token)).toBe(QUOTA.servers);
  });

  test('memory, cpu and disk: a server that takes the total over is refused with the field', async () => {
    const u = await p.newUser();
    expect((await create(u.token, { ...small(), memory: 1000 })).status).toBe(201);
    const mem = await create(u.token, { ...small(), memory: 64 });
    expectError(mem, 422, 'QUOTA_EXCEEDED');
    expect(mem.body.error.details.exceeded).toEqual(['memory']);
    expect(Object.keys(mem.body.error.details.fields)).toEqual(['memory']);
    expect(mem.body.error.details.used).toMatchObject({ memory: 1000 });

    const v = await p.newUser();
    const both = await create(v.token, { ...small(), cpu: 301, disk: 4097 });
    expectError(both, 422, 'QUOTA_EXCEEDED');
    expect(both.body.error.details.exceeded).toEqual(['cpu', 'disk']);
    // exactly at the quota is fine
    expect((await create(v.token, { ...small(), memory: 1024, cpu: 300, disk: 4096 })).status).toBe(201);
  });

  test('20 concurrent creates of one user, over five nodes, never pass USER_MAX_SERVERS', async () => {
    const u = await p.newUser();
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => create(u.token, { ...small(`c${i}`), nodeId: nodes[i % nodes.length]!.id })));
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(QUOTA.servers);
    for (const r of replies.filter((x) => x.status !== 201)) expectError(r, 422, 'QUOTA_EXCEEDED');
    expect(await countOf(u.token)).toBe(QUOTA.servers);
  });

  test('concurrent creates never pass the memory quota either', async () => {
    const u = await p.newUser();
    // two of 400 MiB fit in 1024 MiB, a third does not (the count quota, 3, would allow it)
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => create(u.token, { ...small(`m${i}`), nodeId: nodes[i % nodes.length]!.id, memory: 400 })));
    expect(replies.map((r) => r.status).filter((s) => s === 201)).toHaveLength(2);
    const list = await p.request('GET', '/api/v1/servers?limit=100', { token: u.token });
    expect(list.body.data.reduce((sum: number, s: any) => sum + s.memory, 0)).toBeLessThanOrEqual(QUOTA.memory);
  });

  test('PATCH: growing memory (or cpu, or disk) over the quota is 422; shrinking and renaming are fine', async () => {
    const u = await p.newUser();
    const a = (await create(u.token, { ...small('a'), memory: 512 })).body.data;
    const b = (await create(u.token, { ...small('b'), memory: 256 })).body.data;
    const grow = await p.request('PATCH', `/api/v1/servers/${b.id}`, { token: u.token, body: { memory: 600 } });
    expectError(grow, 422, 'QUOTA_EXCEEDED');
    expect(grow.body.error.details).toMatchObject({ exceeded: ['memory'], used: { memory: 512 }, requested: { memory: 600 } });
    expectError(await p.request('PATCH', `/api/v1/servers/${b.id}`, { token: u.token, body: { cpu: 291 } }), 422, 'QUOTA_EXCEEDED');
    expect((await p.request('PATCH', `/api/v1/servers/${b.id}`, { token: u.token, body: { memory: 512 } })).status).toBe(200);
    expect((await p.request('PATCH', `/api/v1/servers/${a.id}`, { token: u.token, body: { memory: 128, name: 'smaller' } })).status).toBe(200);
    expect((await p.request('PATCH', `/api/v1/servers/${b.id}`, { token: u.token, body: { memory: 896 } })).status).toBe(200);
  });

  test('GraphQL createServer and updateServer apply the same quota', async () => {
    const u = await p.newUser();
    const CREATE = 'mutation($input: CreateServerInput!) { createServer(input: $input) { id } }';
    const s = (await gql(p, CREATE, { input: { ...small(), memory: 1024 } }, { token: u.token })).body.data!.createServer;
    const over = await gql(p, CREATE, { input: small() }, { token: u.token });
    expectGqlError(over, 'QUOTA_EXCEEDED');
    expect(over.body.errors![0]!.extensions.details.exceeded).toEqual(['memory']);
    const UPDATE = 'mutation($id: ID!, $input: UpdateServerInput!) { updateServer(id: $id, input: $input) { id memory } }';
    expectGqlError(await gql(p, UPDATE, { id: s.id, input: { disk: 5000 } }, { token: u.token }), 'QUOTA_EXCEEDED');
  });

  test('administrators are exempt; servers they make for a user count against that user', async () => {
    for (let i = 0; i < QUOTA.servers + 2; i++) expect((await create(admin.token, { ...small(`admin${i}`), memory: 2048 })).status).toBe(201);
    const u = await p.newUser();
    for (let i = 0; i < QUOTA.servers + 1; i++) {
      expect((await create(admin.token, { ...small(`given${i}`), ownerId: u.user.id })).status).toBe(201);
    }
    const given = await p.request('GET', '/api/v1/servers?limit=100', { token: u.token });
    expect(given.body.meta.total).toBe(QUOTA.servers + 1);
    // the user is over the count now: their own create is refused, the admin may still grow their server
    expectError(await create(u.token, small('mine')), 422, 'QUOTA_EXCEEDED');
    const id = given.body.data[0].id;
    expect((await p.request('PATCH', `/api/v1/servers/${id}`, { token: admin.token, body: { memory: 4096 } })).status).toBe(200);
    // … and the user cannot grow any further, but may shrink
    expectError(await p.request('PATCH', `/api/v1/servers/${id}`, { token: u.token, body: { memory: 8192 } }), 422, 'QUOTA_EXCEEDED');
    expect((await p.request('PATCH', `/api/v1/servers/${id}`, { token: u.token, body: { memory: 1024 } })).status).toBe(200);
  });
});

describe('quota configuration', () => {
  test('defaults and 0 = no limit', async () => {
    expect(loadConfig({}).userQuota).toEqual({ servers: 10, memory: 16384, cpu: 800, disk: 102400 });
    expect(loadConfig({ USER_MAX_SERVERS: '0', USER_MAX_MEMORY: '0', USER_MAX_CPU: '0', USER_MAX_DISK: '0' }).userQuota).toEqual({ servers: 0, memory: 0, cpu: 0, disk: 0 });
    expect(() => loadConfig({ USER_MAX_SERVERS: '-1' })).toThrow(/USER_MAX_SERVERS/);
  });

  test('with 0 everywhere a user is not limited', async () => {
    const open = await startTestPlatform({ userQuota: { servers: 0, memory: 0, cpu: 0, disk: 0 } });
    try {
      const a = await open.admin();
      const n = await createNode(open, a.token, { memory: 1_000_000, disk: 10_000_000, cpuCores: 64 });
      const b = await blueprintsByKey(open, a.token);
      const u = await open.newUser();
      for (let i = 0; i < 12; i++) {
        const r = await open.request('POST', '/api/v1/servers', { token: u.token, body: { name: `n${i}`, nodeId: n.id, blueprintId: b['shell-command'].id, memory: 4096, cpu: 100, disk: 20000 } });
        expect(r.status).toBe(201);
      }
    } finally {
      await open.stop();
    }
  }, 60_000);
});
