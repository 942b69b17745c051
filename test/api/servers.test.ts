/**
 * /servers over real HTTP and a real database: create/read/update/delete, validation of every field,
 * ownership (another user's server is a 404), filters, pagination, capacity and its concurrency.
 * The local node agent runs (so deletes reach a real agent); other nodes point at a closed port.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { blueprintsByKey, createNode, expectError, expectFieldError } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform;
let admin: { token: string; user: any };
let owner: { token: string; user: any };
let other: { token: string; user: any };
let bp: Record<string, any>;
let node: { id: string };
let localNodeId: string;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0 });
  admin = await p.admin();
  owner = await p.newUser('Owner');
  other = await p.newUser('Other');
  bp = await blueprintsByKey(p, owner.token);
  node = await createNode(p, admin.token, { memory: 8192, disk: 65536, cpuCores: 4 });
  const nodes = await p.request('GET', '/api/v1/nodes?limit=100', { token: admin.token });
  localNodeId = nodes.body.data.find((n: any) => n.name === 'local').id;
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

const base = () => ({ name: 'My server', nodeId: node.id, blueprintId: bp['shell-command'].id, memory: 256, cpu: 100, disk: 512 });

async function create(body: Record<string, unknown>, token = owner.token) {
  return p.request('POST', '/api/v1/servers', { token, body });
}

async function created(body: Record<string, unknown> = {}, token = owner.token) {
  const r = await create({ ...base(), ...body }, token);
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`);
  return r.body.data;
}

describe('POST /servers', () => {
  test('creates a server with the documented shape', async () => {
    const r = await create({ ...base(), description: 'hello', autoRestart: true });
    expect(r.status).toBe(201);
    expect(r.body.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'My server',
      description: 'hello',
      ownerId: owner.user.id,
      nodeId: node.id,
      blueprintId: bp['shell-command'].id,
      memory: 256,
      cpu: 100,
      disk: 512,
      backupLimit: 5,
      status: 'offline', // shell-command has no install script
      variables: { COMMAND: bp['shell-command'].variables[0].default },
      autoRestart: true,
      lastExitCode: null,
      lastCrashAt: null,
      lastStopReason: null,
      crashCount: 0,
      permissions: ['*'],
      paths: [],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(new Date(r.body.data.createdAt).toISOString()).toBe(r.body.data.createdAt);
  });

  test('a blueprint with an install script starts as installing; variables get their defaults', async () => {
    const s = await created({ blueprintId: bp['demo-game'].id, variables: { MOTD: 'Welcome!' } });
    expect(s.status).toBe('installing');
    expect(s.variables).toEqual({ MOTD: 'Welcome!', MAX_PLAYERS: '20', SERVER_PORT: '25565' });
  });

  test('memory, cpu and disk default from the blueprint when omitted', async () => {
    const r = await create({ name: 'defaults', nodeId: node.id, blueprintId: bp['demo-game'].id });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject(bp['demo-game'].defaults);
  });

  test.each([
    ['name', { name: undefined }],
    ['name', { name: '' }],
    ['name', { name: '   ' }],
    ['name', { name: 42 }],
    ['name', { name: 'x'.repeat(101) }],
    ['name', { name: 'bad\u0000name' }],
    ['description', { description: 7 }],
    ['description', { description: 'x'.repeat(2001) }],
    ['nodeId', { nodeId: undefined }],
    ['nodeId', { nodeId: 'not-a-uuid' }],
    ['nodeId', { nodeId: '00000000-0000-4000-8000-000000000000' }],
    ['nodeId', { nodeId: 12 }],
    ['blueprintId', { blueprintId: undefined }],
    ['blueprintId', { blueprintId: 'nope' }],
    ['blueprintId', { blueprintId: '00000000-0000-4000-8000-000000000000' }],
    ['memory', { memory: 63 }],
    ['memory', { memory: 0 }],
    ['memory', { memory: -256 }],
    ['memory', { memory: 256.5 }],
    ['memory', { memory: '512' }],
    ['memory', { memory: null }],
    ['memory', { memory: 2 ** 53 }], // past what a JSON number keeps exactly (2 ** 31 is CAPACITY_EXCEEDED: no node has it)
    ['disk', { disk: 127 }],
    ['disk', { disk: 1.5 }],
    ['disk', { disk: '1024' }],
    ['cpu', { cpu: 0 }],
    ['cpu', { cpu: 401 }], // the node has 4 cores: at most 400
    ['cpu', { cpu: 1.5 }],
    ['cpu', { cpu: true }],
    ['autoRestart', { autoRestart: 'yes' }],
    ['variables', { variables: 'MOTD=x' }],
    ['variables', { variables: ['x'] }],
    ['variables.COMMAND', { variables: { COMMAND: 5 } }],
    ['variables.COMMAND', { variables: { COMMAND: '' } }], // required
    ['variables.NOPE', { variables: { NOPE: 'x' } }],
    ['ownerId', { ownerId: 'not-a-uuid' }],
  ])('invalid %s → 422 (%j)', async (field, patch) => {
    expectFieldError(await create({ ...base(), ...patch }), field);
  });

  test('variables are checked against the blueprint rules', async () => {
    const demo = { ...base(), blueprintId: bp['demo-game'].id };
    expectFieldError(await create({ ...demo, variables: { MAX_PLAYERS: 'many' } }), 'variables.MAX_PLAYERS');
    expectFieldError(await create({ ...demo, variables: { MAX_PLAYERS: '1001' } }), 'variables.MAX_PLAYERS');
    expectFieldError(await create({ ...demo, variables: { SERVER_PORT: '80' } }), 'variables.SERVER_PORT');
    expectFieldError(await create({ ...demo, variables: { MOTD: 'm'.repeat(65) } }), 'variables.MOTD');
    expect((await create({ ...demo, variables: { MAX_PLAYERS: '1000' } })).status).toBe(201);
  });

  test('unknown and invalid ids are reported together', async () => {
    const r = await create({ ...base(), nodeId: '00000000-0000-4000-8000-000000000001', blueprintId: '00000000-0000-4000-8000-000000000002' });
    expectError(r, 422, 'VALIDATION_ERROR');
    expect(r.body.error.details.fields).toEqual({ nodeId: expect.any(String), blueprintId: expect.any(String) });
  });

  test('odd Unicode and injection strings are stored verbatim and harmless', async () => {
    for (const name of ["'; DROP TABLE servers; --", '<script>alert(1)</script>', 'Ünïcødé 🚀 服务器 שרת', '{{MOTD}} $(rm -rf /) `id`', "Robert'); --"]) {
      const s = await created({ name, description: name + '\n' + name, variables: { COMMAND: name } });
      const g = await p.request('GET', `/api/v1/servers/${s.id}`, { token: owner.token });
      expect(g.body.data.name).toBe(name);
      expect(g.body.data.description).toBe(name + '\n' + name);
      expect(g.body.data.variables.COMMAND).toBe(name);
    }
    // names refuse bidi controls (test/api/names.test.ts); free text keeps them
    const rtl = await created({ name: 'rtl', description: 'Ünïcødé \u202Ertl', variables: { COMMAND: 'echo \u202Ertl' } });
    expect(rtl.description).toBe('Ünïcødé \u202Ertl');
    expect(rtl.variables.COMMAND).toBe('echo \u202Ertl');
    expect((await p.request('GET', '/api/v1/servers', { token: owner.token })).status).toBe(200);
  });

  test('names are trimmed; unknown body fields are ignored', async () => {
    const s = await created({ name: '  padded  ', status: 'running', crashCount: 99, id: '00000000-0000-4000-8000-000000000003' });
    expect(s.name).toBe('padded');
    expect(s.status).toBe('offline');
    expect(s.crashCount).toBe(0);
    expect(s.id).not.toBe('00000000-0000-4000-8000-000000000003');
  });

  test('ownerId: admins create servers for other users, users cannot', async () => {
    const forOwner = await created({ ownerId: owner.user.id }, admin.token);
    expect(forOwner.ownerId).toBe(owner.user.id);
    expect((await p.request('GET', `/api/v1/servers/${forOwner.id}`, { token: owner.token })).status).toBe(200);
    expectError(await create({ ...base(), ownerId: other.user.id }), 403, 'FORBIDDEN');
    expect((await create({ ...base(), ownerId: owner.user.id })).status).toBe(201); // yourself is fine
    expectFieldError(await create({ ...base(), ownerId: '00000000-0000-4000-8000-000000000000' }, admin.token), 'ownerId');
  });

  test('anonymous → 401; malformed JSON and non-JSON bodies → 400', async () => {
    expectError(await p.request('POST', '/api/v1/servers', { body: base() }), 401, 'UNAUTHORIZED');
    expectError(await p.request('POST', '/api/v1/servers', { token: owner.token, raw: '{"name":', headers: { 'content-type': 'application/json' } }), 400, 'BAD_REQUEST');
    expectError(await p.request('POST', '/api/v1/servers', { token: owner.token, raw: 'name=x', headers: { 'content-type': 'text/plain' } }), 400, 'BAD_REQUEST');
    expectError(await p.request('POST', '/api/v1/servers', { token: owner.token, raw: '[]', headers: { 'content-type': 'application/json' } }), 400, 'BAD_REQUEST');
  });

  test('a server that does not fit the node → 422 CAPACITY_EXCEEDED with requested/available', async () => {
    const small = await createNode(p, admin.token, { memory: 1024, disk: 2048 });
    await created({ nodeId: small.id, memory: 960, disk: 1000 });
    const r = await create({ ...base(), nodeId: small.id, memory: 64, disk: 1000 });
    expect(r.status).toBe(201);
    const over = await create({ ...base(), nodeId: small.id, memory: 64, disk: 128 });
    expectError(over, 422, 'CAPACITY_EXCEEDED');
    expect(over.body.error.details).toMatchObject({ requested: { memory: 64, disk: 128 }, available: { memory: 0, disk: 48 } });
  });

  test('memory or disk past what any node holds (over 2^31 MiB) is CAPACITY_EXCEEDED, on create and on PATCH (CONTRACT §3: the upper bound is what the node can allocate)', async () => {
    const huge = 1024 ** 4; // 1 TiB of MiB
    for (const field of ['memory', 'disk']) {
      const r = await create({ ...base(), [field]: huge });
      expectError(r, 422, 'CAPACITY_EXCEEDED');
      expect(r.body.error.details.fields[field]).toMatch(/free on this node/);
    }
    const s = await created({});
    for (const field of ['memory', 'disk']) {
      const r = await p.request('PATCH', `/api/v1/servers/${s.id}`, { token: owner.token, body: { [field]: huge } });
      expectError(r, 422, 'CAPACITY_EXCEEDED');
    }
    // past what a JSON number keeps exactly: still an integer the validation refuses by name
    expectFieldError(await create({ ...base(), memory: 2 ** 60 }), 'memory');
  });
});

describe('capacity under concurrency', () => {
  test('10 parallel creates on a node with room for exactly 3 → 3 succeed, 7 CAPACITY_EXCEEDED', async () => {
    const tight = await createNode(p, admin.token, { memory: 768, disk: 100_000 });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => create({ ...base(), name: `race ${i}`, nodeId: tight.id, memory: 256 })),
    );
    const ok = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status !== 201);
    expect(ok).toHaveLength(3);
    expect(refused).toHaveLength(7);
    for (const r of refused) expectError(r, 422, 'CAPACITY_EXCEEDED');
    const n = await p.request('GET', `/api/v1/nodes/${tight.id}`, { token: admin.token });
    expect(n.body.data.allocated).toEqual({ memory: 768, disk: 3 * 512 });
    expect(n.body.data.allocated.memory).toBeLessThanOrEqual(n.body.data.memory);
  });

  test('parallel resizes never overbook either', async () => {
    const tight = await createNode(p, admin.token, { memory: 1024, disk: 100_000 });
    const servers = [];
    for (let i = 0; i < 4; i++) servers.push(await created({ nodeId: tight.id, memory: 128, name: `resize ${i}` }));
    // 512 free; each resize wants +384 → only one can win
    const results = await Promise.all(servers.map((s) => p.request('PATCH', `/api/v1/servers/${s.id}`, { token: owner.token, body: { memory: 512 } })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) expectError(r, 422, 'CAPACITY_EXCEEDED');
    const n = await p.request('GET', `/api/v1/nodes/${tight.id}`, { token: admin.token });
    expect(n.body.data.allocated.memory).toBe(512 + 3 * 128);
  });
});

describe('GET /servers and /servers/:id', () => {
  let mine: any;
  let theirs: any;
  beforeAll(async () => {
    mine = await created({ name: 'mine' });
    theirs = await created({ name: 'theirs' }, other.token);
  });

  test('users see only their own servers; admins see all', async () => {
    const list = await p.request('GET', '/api/v1/servers?limit=100', { token: owner.token });
    expect(list.status).toBe(200);
    expect(list.body.data.every((s: any) => s.ownerId === owner.user.id)).toBe(true);
    expect(list.body.data.map((s: any) => s.id)).toContain(mine.id);
    expect(list.body.data.map((s: any) => s.id)).not.toContain(theirs.id);
    const all = await p.request('GET', '/api/v1/servers?limit=100', { token: admin.token });
    expect(all.body.meta.total).toBeGreaterThan(list.body.meta.total);
    const ids = [];
    for (let page = 1; page <= Math.ceil(all.body.meta.total / 100); page++) {
      ids.push(...(await p.request('GET', `/api/v1/servers?limit=100&page=${page}`, { token: admin.token })).body.data.map((s: any) => s.id));
    }
    expect(ids).toEqual(expect.arrayContaining([mine.id, theirs.id]));
  });

  test('another user\'s server is a 404, as are unknown and non-UUID ids', async () => {
    expectError(await p.request('GET', `/api/v1/servers/${theirs.id}`, { token: owner.token }), 404, 'NOT_FOUND');
    expectError(await p.request('GET', '/api/v1/servers/00000000-0000-4000-8000-000000000000', { token: owner.token }), 404, 'NOT_FOUND');
    expectError(await p.request('GET', '/api/v1/servers/not-a-uuid', { token: owner.token }), 404, 'NOT_FOUND');
    expectError(await p.request('GET', `/api/v1/servers/${mine.id}`), 401, 'UNAUTHORIZED');
    expect((await p.request('GET', `/api/v1/servers/${theirs.id}`, { token: admin.token })).body.data.id).toBe(theirs.id);
  });

  test('filters: status and nodeId; invalid values → 422', async () => {
    const byNode = await p.request('GET', `/api/v1/servers?nodeId=${node.id}&limit=100`, { token: owner.token });
    expect(byNode.status).toBe(200);
    expect(byNode.body.data.length).toBeGreaterThan(0);
    expect(byNode.body.data.every((s: any) => s.nodeId === node.id)).toBe(true);
    const installing = await p.request('GET', '/api/v1/servers?status=installing&limit=100', { token: owner.token });
    expect(installing.body.data.every((s: any) => s.status === 'installing')).toBe(true);
    const none = await p.request('GET', `/api/v1/servers?nodeId=00000000-0000-4000-8000-000000000000`, { token: owner.token });
    expect(none.body).toEqual({ data: [], meta: { total: 0, page: 1, limit: 20 } });
    expectFieldError(await p.request('GET', '/api/v1/servers?status=exploded', { token: owner.token }), 'status');
    expectFieldError(await p.request('GET', '/api/v1/servers?nodeId=abc', { token: owner.token }), 'nodeId');
    expectFieldError(await p.request('GET', '/api/v1/servers?status=offline&status=running', { token: owner.token }), 'status');
  });

  test('pagination: bad values → 422; past the end → [] with the true total; stable order', async () => {
    for (const q of ['page=0', 'limit=0', 'limit=101', 'page=abc', 'limit=1.5', 'page=-1', 'page=1.5']) {
      expectError(await p.request('GET', `/api/v1/servers?${q}`, { token: owner.token }), 422, 'VALIDATION_ERROR');
    }
    const first = await p.request('GET', '/api/v1/servers?limit=100', { token: owner.token });
    const total = first.body.meta.total;
    const past = await p.request('GET', '/api/v1/servers?page=999&limit=10', { token: owner.token });
    expect(past.body).toEqual({ data: [], meta: { total, page: 999, limit: 10 } });
    const walked: string[] = [];
    for (let page = 1; walked.length < total; page++) {
      const r = await p.request('GET', `/api/v1/servers?page=${page}&limit=3`, { token: owner.token });
      expect(r.body.meta).toEqual({ total, page, limit: 3 });
      walked.push(...r.body.data.map((s: any) => s.id));
    }
    expect(walked).toEqual(first.body.data.map((s: any) => s.id).slice(0, total));
    const times = first.body.data.map((s: any) => s.createdAt);
    expect([...times].sort()).toEqual(times);
  });

  test('a list item is exactly the detail view of the same server (same fields, types and ISO dates)', async () => {
    const list = await p.request('GET', '/api/v1/servers?limit=100', { token: owner.token });
    expect(list.body.data.length).toBeGreaterThan(0);
    for (const item of list.body.data.slice(0, 5)) {
      const one = await p.request('GET', `/api/v1/servers/${item.id}`, { token: owner.token });
      expect(item).toEqual(one.body.data);
      expect(new Date(item.createdAt).toISOString()).toBe(item.createdAt);
      expect(new Date(item.updatedAt).toISOString()).toBe(item.updatedAt);
    }
  });
});

describe('PATCH /servers/:id', () => {
  test('updates name, description, resources, autoRestart and variables', async () => {
    const s = await created({ blueprintId: bp['demo-game'].id });
    const r = await p.request('PATCH', `/api/v1/servers/${s.id}`, {
      token: owner.token,
      body: { name: 'Renamed', description: 'new', memory: 512, cpu: 200, disk: 1024, autoRestart: true, variables: { MAX_PLAYERS: '5' } },
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ name: 'Renamed', description: 'new', memory: 512, cpu: 200, disk: 1024, autoRestart: true });
    expect(r.body.data.variables).toEqual({ MOTD: 'A HostPanel demo server', MAX_PLAYERS: '5', SERVER_PORT: '25565' });
    const g = await p.request('GET', `/api/v1/servers/${s.id}`, { token: owner.token });
    expect(g.body.data).toMatchObject({ name: 'Renamed', memory: 512 });
    const empty = await p.request('PATCH', `/api/v1/servers/${s.id}`, { token: owner.token, body: {} });
    expect(empty.status).toBe(200);
    expect(empty.body.data.name).toBe('Renamed');
  });

  test('nodeId, blueprintId and ownerId cannot change → 422; their current values are accepted (the record sent back as GET gave it)', async () => {
    const s = await created();
    expectFieldError(await p.request('PATCH', `/api/v1/servers/${s.id}`, { token: owner.token, body: { nodeId: localNodeId } }), 'nodeId');
    expectFieldError(await p.request('PATCH', `/api/v1/servers/${s.id}`, { token: owner.token, body: { nodeId: 42 } }), 'nodeId');
    const got = (await p.request('GET', `/api/v1/servers/${s.id}`, { token: owner.token })).body.data;
    const back = await p.request('PATCH', `/api/v1/servers/${s.id}`, { token: owner.token, body: { ...got, name: 'Sent back' } });
    expect([back.status, back.body.data.name, back.body.data.nodeId, back.body.data.blueprintId]).toEqual([200, 'Sent back', got.nodeId, got.blueprintId]);
    // a subuser who may rename sends back the record they were given: only the name changes, which they may
    const friend = await p.newUser('renamer');
    expect((await p.request('POST', `/api/v1/servers/${s.id}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['settings.rename'] } })).status).toBe(201);
    const theirs = (await p.request('GET', `/api/v1/servers/${s.id}`, { token: friend.token })).body.data;
    const renamed = await p.request('PATCH', `/api/v1/servers/${s.id}`, { token: friend.token, body: { ...theirs, name: 'Renamed by a friend' } });
    expect([renamed.status, renamed.body.data?.name, renamed.body.data?.memory]).toEqual([200, 'Renamed by a friend', got.memory]);
    // a change of what they may not change is still refused
    expectError(await p.request('PATCH', `/api/v1/servers/${s.id}`, { token: friend.token, body: { ...theirs, memory: theirs.memory + 64 } }), 403, 'FORBIDDEN');
    // a variable's value kept from them (no startup.read): the right value is refused as a wrong one is
    const [key, value] = Object.entries(got.variables as Record<string, string>)[0]!;
    for (const guess of [value, `${value}-wrong`]) expectError(await p.request('PATCH', `/api/v1/servers/${s.id}`, { token: friend.token, body: { variables: { [key]: guess } } }), 403, 'FORBIDDEN');
    expectFieldError(await p.request('PATCH', `/api/v1/servers/${s.id}`, { token: owner.token, body: { blueprintId: bp['demo-game'].id } }), 'blueprintId');
    expectFieldError(await p.request('PATCH', `/api/v1/servers/${s.id}`, { token: admin.token, body: { ownerId: other.user.id } }), 'ownerId');
  });

  test.each([
    ['name', { name: '' }],
    ['name', { name: null }],
    ['memory', { memory: 63 }],
    ['memory', { memory: '512' }],
    ['memory', { memory: 100.5 }],
    ['disk', { disk: 0 }],
    ['cpu', { cpu: 0 }],
    ['cpu', { cpu: 401 }],
    ['autoRestart', { autoRestart: 1 }],
    ['variables.COMMAND', { variables: { COMMAND: '' } }],
    ['variables.X', { variables: { X: 'y' } }],
  ])('invalid %s → 422 (%j)', async (field, body) => {
    const s = await created();
    expectFieldError(await p.request('PATCH', `/api/v1/servers/${s.id}`, { token: owner.token, body }), field);
  });

  test('growth beyond the node → CAPACITY_EXCEEDED; shrinking is fine', async () => {
    const small = await createNode(p, admin.token, { memory: 512, disk: 4096 });
    const s = await created({ nodeId: small.id, memory: 256 });
    expectError(await p.request('PATCH', `/api/v1/servers/${s.id}`, { token: owner.token, body: { memory: 513 } }), 422, 'CAPACITY_EXCEEDED');
    expect((await p.request('PATCH', `/api/v1/servers/${s.id}`, { token: owner.token, body: { memory: 512 } })).status).toBe(200);
    expect((await p.request('PATCH', `/api/v1/servers/${s.id}`, { token: owner.token, body: { memory: 128 } })).body.data.memory).toBe(128);
  });

  test('another user\'s server → 404; anonymous → 401', async () => {
    const s = await created();
    expectError(await p.request('PATCH', `/api/v1/servers/${s.id}`, { token: other.token, body: { name: 'mine now' } }), 404, 'NOT_FOUND');
    expectError(await p.request('PATCH', `/api/v1/servers/${s.id}`, { body: { name: 'x' } }), 401, 'UNAUTHORIZED');
    expect((await p.request('GET', `/api/v1/servers/${s.id}`, { token: owner.token })).body.data.name).toBe('My server');
    expect((await p.request('PATCH', `/api/v1/servers/${s.id}`, { token: admin.token, body: { name: 'by admin' } })).body.data.name).toBe('by admin');
  });
});

describe('DELETE /servers/:id', () => {
  test('on a reachable node: the agent removes it → 204, then 404', async () => {
    const s = await created({ nodeId: localNodeId });
    expectError(await p.request('DELETE', `/api/v1/servers/${s.id}`, { token: other.token }), 404, 'NOT_FOUND');
    const r = await p.request('DELETE', `/api/v1/servers/${s.id}`, { token: owner.token });
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expectError(await p.request('GET', `/api/v1/servers/${s.id}`, { token: owner.token }), 404, 'NOT_FOUND');
    expectError(await p.request('DELETE', `/api/v1/servers/${s.id}`, { token: owner.token }), 404, 'NOT_FOUND');
  });

  test('on an unreachable node: 422 NODE_UNAVAILABLE and the record stays; admins may force', async () => {
    const s = await created();
    expectError(await p.request('DELETE', `/api/v1/servers/${s.id}`, { token: owner.token }), 422, 'NODE_UNAVAILABLE');
    expect((await p.request('GET', `/api/v1/servers/${s.id}`, { token: owner.token })).status).toBe(200);
    expectError(await p.request('DELETE', `/api/v1/servers/${s.id}?force=true`, { token: owner.token }), 403, 'FORBIDDEN');
    expectFieldError(await p.request('DELETE', `/api/v1/servers/${s.id}?force=maybe`, { token: admin.token }), 'force');
    expect((await p.request('DELETE', `/api/v1/servers/${s.id}?force=true`, { token: admin.token })).status).toBe(204);
    expectError(await p.request('GET', `/api/v1/servers/${s.id}`, { token: owner.token }), 404, 'NOT_FOUND');
  });

  test('a node address where something other than an agent answers 404: 422 NODE_UNAVAILABLE, the record stays', async () => {
    const impostor = createServer((_req, res) => res.writeHead(404).end());
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
    try {
      const n = await createNode(p, admin.token, { port: (impostor.address() as AddressInfo).port });
      const s = await created({ nodeId: n.id });
      expectError(await p.request('POST', `/api/v1/servers/${s.id}/start`, { token: owner.token }), 422, 'NODE_UNAVAILABLE');
      expectError(await p.request('DELETE', `/api/v1/servers/${s.id}`, { token: owner.token }), 422, 'NODE_UNAVAILABLE');
      expect((await p.request('GET', `/api/v1/servers/${s.id}`, { token: owner.token })).status).toBe(200);
    } finally {
      impostor.close();
    }
  });

  test('anonymous → 401; non-UUID → 404', async () => {
    const s = await created();
    expectError(await p.request('DELETE', `/api/v1/servers/${s.id}`), 401, 'UNAUTHORIZED');
    expectError(await p.request('DELETE', '/api/v1/servers/123', { token: owner.token }), 404, 'NOT_FOUND');
  });
});
