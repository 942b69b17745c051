/**
 * /nodes, /admin/* and /blueprints over real HTTP and a real database: admin-only rules, node
 * registration and tokens, platform statistics, user search, blueprint seeding.
 */
import { createHash } from 'node:crypto';
import { seedBuiltinBlueprints } from '../../src/services/blueprint-seeder.js';
import { BUILTIN_BLUEPRINTS } from '../../src/blueprints/builtin.js';
import { deriveNodeKey, signRequest } from '../../src/shared/node-protocol.js';
import { blueprintsByKey, createNode, expectError, expectFieldError, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform;
let admin: { token: string; user: any };
let user: { token: string; user: any };

beforeAll(async () => {
  p = await startTestPlatform();
  admin = await p.admin();
  user = await p.newUser('Plain User');
});
afterAll(async () => p?.stop());

const NODE_KEYS = ['id', 'name', 'fqdn', 'port', 'scheme', 'memory', 'disk', 'cpuCores', 'status', 'lastSeenAt', 'sftpPort', 'sftpFingerprint', 'allocated', 'tokenCreatedAt', 'createdAt', 'updatedAt'].sort();

describe('nodes', () => {
  test('POST /nodes registers a node with defaults and returns its token once', async () => {
    const r = await p.request('POST', '/api/v1/nodes', { token: admin.token, body: { name: 'eu-1', fqdn: 'Node1.Example.com', memory: 4096, disk: 20480 } });
    expect(r.status).toBe(201);
    expect(r.body.data).toEqual({
      id: expect.any(String),
      name: 'eu-1',
      fqdn: 'node1.example.com',
      port: 5000,
      scheme: 'http',
      memory: 4096,
      disk: 20480,
      cpuCores: null,
      status: 'offline',
      lastSeenAt: null,
      sftpPort: null,
      sftpFingerprint: null,
      allocated: { memory: 0, disk: 0 },
      tokenCreatedAt: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      token: expect.stringMatching(/^hpn_/),
    });
    const g = await p.request('GET', `/api/v1/nodes/${r.body.data.id}`, { token: admin.token });
    expect(Object.keys(g.body.data).sort()).toEqual(NODE_KEYS);
    // no secret: the token's value, its key, a hash (tokenCreatedAt, when it was issued, is no secret)
    expect(g.text.replace(/"tokenCreatedAt"/, '')).not.toMatch(/token|keyEnc|key_enc|hash/i);
  });

  test('IPv4/IPv6 addresses, https and a custom port are accepted', async () => {
    for (const fqdn of ['10.0.0.5', '::1', 'fe80::1', 'localhost', 'a-b.c-d.example']) {
      const r = await p.request('POST', '/api/v1/nodes', { token: admin.token, body: { name: `n-${fqdn}`, fqdn, port: 8443, scheme: 'https', memory: 1024, disk: 1024, cpuCores: 8 } });
      expect(r.status).toBe(201);
      expect(r.body.data).toMatchObject({ fqdn, port: 8443, scheme: 'https', cpuCores: 8 });
    }
  });

  test.each([
    ['name', { name: '' }],
    ['name', { name: undefined }],
    ['fqdn', { fqdn: '' }],
    ['fqdn', { fqdn: 'http://node.example.com' }],
    ['fqdn', { fqdn: 'node.example.com:5000' }],
    ['fqdn', { fqdn: 'bad host' }],
    ['fqdn', { fqdn: '-bad.example' }],
    ['fqdn', { fqdn: '999.1.1.1' }],
    ['fqdn', { fqdn: "x'; drop table nodes; --" }],
    ['port', { port: 0 }],
    ['port', { port: 65536 }],
    ['port', { port: '5000' }],
    ['port', { port: 50.5 }],
    ['scheme', { scheme: 'ftp' }],
    ['memory', { memory: undefined }],
    ['memory', { memory: 1.5 }],
    ['memory', { memory: '4096' }],
    ['disk', { disk: -1 }],
    ['cpuCores', { cpuCores: 0 }],
    ['cpuCores', { cpuCores: 2.5 }],
  ])('invalid %s → 422 (%j)', async (field, patch) => {
    const body = { name: `bad-${Math.random()}`, fqdn: 'node.example.com', memory: 1024, disk: 1024, ...patch };
    expectFieldError(await p.request('POST', '/api/v1/nodes', { token: admin.token, body }), field);
  });

  test('a taken name → 422 ALREADY_EXISTS', async () => {
    await createNode(p, admin.token, { name: 'dup' });
    const r = await p.request('POST', '/api/v1/nodes', { token: admin.token, body: { name: 'dup', fqdn: 'x.example.com', memory: 1024, disk: 1024 } });
    expectError(r, 422, 'ALREADY_EXISTS');
    expect(r.body.error.details.fields.name).toEqual(expect.any(String));
  });

  test('admin only: users 403, anonymous 401 on every node route', async () => {
    const n = await createNode(p, admin.token);
    for (const [method, path] of [
      ['GET', '/api/v1/nodes'],
      ['POST', '/api/v1/nodes'],
      ['GET', `/api/v1/nodes/${n.id}`],
      ['DELETE', `/api/v1/nodes/${n.id}`],
      ['POST', `/api/v1/admin/nodes/${n.id}/token`],
    ]) {
      const body = method === 'POST' ? {} : undefined;
      expectError(await p.request(method!, path!, { token: user.token, body }), 403, 'FORBIDDEN');
      expectError(await p.request(method!, path!, { body }), 401, 'UNAUTHORIZED');
    }
    expect((await p.request('GET', `/api/v1/nodes/${n.id}`, { token: admin.token })).status).toBe(200);
  });

  test('GET /nodes is paginated and shows allocations', async () => {
    const n = await createNode(p, admin.token, { memory: 2048, disk: 4096 });
    const bp = await blueprintsByKey(p, user.token);
    await p.request('POST', '/api/v1/servers', { token: user.token, body: { name: 's', nodeId: n.id, blueprintId: bp['shell-command'].id, memory: 300, cpu: 50, disk: 400 } });
    const all = await p.request('GET', '/api/v1/nodes?limit=100', { token: admin.token });
    expect(all.status).toBe(200);
    const found = all.body.data.find((x: any) => x.id === n.id);
    expect(found.allocated).toEqual({ memory: 300, disk: 400 });
    const page = await p.request('GET', '/api/v1/nodes?limit=2&page=2', { token: admin.token });
    expect(page.body.meta).toEqual({ total: all.body.meta.total, page: 2, limit: 2 });
    expect(page.body.data.map((x: any) => x.id)).toEqual(all.body.data.slice(2, 4).map((x: any) => x.id));
    expect((await p.request('GET', '/api/v1/nodes?page=10000', { token: admin.token })).body).toEqual({ data: [], meta: { total: all.body.meta.total, page: 10000, limit: 20 } });
    expectError(await p.request('GET', '/api/v1/nodes?limit=101', { token: admin.token }), 422, 'VALIDATION_ERROR');
  });

  test('unknown and non-UUID ids → 404', async () => {
    for (const [m, path] of [
      ['GET', '/api/v1/nodes/00000000-0000-4000-8000-000000000000'],
      ['GET', '/api/v1/nodes/nope'],
      ['DELETE', '/api/v1/nodes/00000000-0000-4000-8000-000000000000'],
      ['POST', '/api/v1/admin/nodes/00000000-0000-4000-8000-000000000000/token'],
      ['POST', '/api/v1/admin/nodes/nope/token'],
    ]) {
      expectError(await p.request(m!, path!, { token: admin.token }), 404, 'NOT_FOUND');
    }
  });

  test('DELETE /nodes/:id: 422 NODE_HAS_SERVERS while servers remain, else 204', async () => {
    const n = await createNode(p, admin.token);
    const bp = await blueprintsByKey(p, user.token);
    const s = await p.request('POST', '/api/v1/servers', { token: user.token, body: { name: 's', nodeId: n.id, blueprintId: bp['shell-command'].id } });
    expect(s.status).toBe(201);
    expectError(await p.request('DELETE', `/api/v1/nodes/${n.id}`, { token: admin.token }), 422, 'NODE_HAS_SERVERS');
    expect((await p.request('DELETE', `/api/v1/servers/${s.body.data.id}?force=true`, { token: admin.token })).status).toBe(204);
    const d = await p.request('DELETE', `/api/v1/nodes/${n.id}`, { token: admin.token });
    expect(d.status).toBe(204);
    expect(d.text).toBe('');
    expectError(await p.request('GET', `/api/v1/nodes/${n.id}`, { token: admin.token }), 404, 'NOT_FOUND');
  });

  test('a node signature header with an id that is not a UUID is a 401 (was a 500 from PostgreSQL), body or not', async () => {
    const ts = Math.floor(Date.now() / 1000);
    for (const nodeId of ['-'.repeat(36), '0'.repeat(36), 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaa-']) {
      const authorization = `HPN1 ${nodeId}:${ts}:abcdefghijkl:${'A'.repeat(43)}`;
      expectError(await p.request('GET', '/api/agent/v1/servers', { headers: { authorization } }), 401, 'UNAUTHORIZED');
      expectError(await p.request('POST', '/api/agent/v1/events', { headers: { authorization, 'content-type': 'application/json' }, raw: JSON.stringify({ events: [] }) }), 401, 'UNAUTHORIZED');
    }
    // an unknown node's (or nobody's) large body is refused before it is read
    const big = JSON.stringify({ events: [], pad: 'x'.repeat(4 * 1024 * 1024) });
    expectError(await p.request('POST', '/api/agent/v1/events', { headers: { 'content-type': 'application/json' }, raw: big }), 401, 'UNAUTHORIZED');
  });

  test('cpuCores an administrator gives stands; the agent\'s heartbeat fills it in only when none was given', async () => {
    // the first heartbeat overwrote the administrator's 16 with the machine's own count
    const beat = (n: { id: string; token: string }, cores: number) => {
      const body = JSON.stringify({ stats: { cpu: { cores } } });
      const authorization = signRequest(n.id, deriveNodeKey(n.token), 'POST', '/api/agent/v1/heartbeat', body);
      return p.request('POST', '/api/agent/v1/heartbeat', { headers: { authorization, 'content-type': 'application/json' }, raw: body });
    };
    const given = await createNode(p, admin.token, { cpuCores: 16 });
    const open = await createNode(p, admin.token, { cpuCores: null });
    for (const n of [given, open]) expect((await beat(n, 2)).status).toBeLessThan(300);
    const cores = async (id: string) => (await p.request('GET', `/api/v1/nodes/${id}`, { token: admin.token })).body.data.cpuCores;
    expect([await cores(given.id), await cores(open.id)]).toEqual([16, 2]);
  });

  test('POST /admin/nodes/:id/token issues a new token; the previous one stops working', async () => {
    const n = await createNode(p, admin.token);
    const signed = (token: string) =>
      p.request('GET', '/api/agent/v1/servers', { headers: { authorization: signRequest(n.id, deriveNodeKey(token), 'GET', '/api/agent/v1/servers') } });
    expect((await signed(n.token)).status).toBe(200);

    const r = await p.request('POST', `/api/v1/admin/nodes/${n.id}/token`, { token: admin.token });
    expect(r.status).toBe(201);
    expect(r.body.data).toEqual({ token: expect.stringMatching(/^hpn_/), nodeId: n.id, createdAt: expect.any(String) });
    expect(r.body.data.token).not.toBe(n.token);
    expect((await signed(n.token)).status).toBe(401);
    expect((await signed(r.body.data.token)).status).toBe(200);

    // Only the hash is stored; the node key is sealed and can be opened by the panel.
    const row = await p.orm.em.fork().getConnection().execute(`select token_hash, key_enc from nodes where id = ?`, [n.id]);
    expect(row[0].token_hash).toBe(createHash('sha256').update(r.body.data.token).digest('hex'));
    expect(row[0].key_enc).not.toContain(r.body.data.token);
    const entity = await p.orm.em.fork().findOneOrFail('Node', { id: n.id });
    expect(p.services.agents.nodeKey(entity as any)?.equals(deriveNodeKey(r.body.data.token))).toBe(true);
  });
});

test('the node the panel runs in its own process keeps its token: a rotation is refused, its servers stay under control', async () => {
  // the new token could not reach the agent inside the panel: every local server was NODE_UNAVAILABLE until a restart
  const local = await startTestPlatform({ localAgent: true, agentPort: 0 });
  try {
    const admin = await local.admin();
    const nodeId = await localNodeId(local, admin.token);
    expectError(await local.request('POST', `/api/v1/admin/nodes/${nodeId}/token`, { token: admin.token }), 422, 'INVALID_STATE');
    const bps = await blueprintsByKey(local, admin.token);
    const r = await local.request('POST', '/api/v1/servers', { token: admin.token, body: { name: 'still mine', nodeId, blueprintId: bps['shell-command'].id, memory: 128, cpu: 50, disk: 128, variables: { COMMAND: 'exec sleep 600' } } });
    expect(r.status).toBe(201);
    await waitForStatus(local, admin.token, r.body.data.id, 'offline');
    expect((await local.request('POST', `/api/v1/servers/${r.body.data.id}/start`, { token: admin.token })).status).toBe(200);
    expect((await local.request('POST', `/api/v1/servers/${r.body.data.id}/kill`, { token: admin.token })).status).toBe(200);
  } finally {
    await local.stop();
  }
}, 90_000);

describe('admin', () => {
  test('GET /admin/users: paginated, searchable by email or name (case-insensitive, wildcards literal), never hashes', async () => {
    const a = await p.newUser('Zebra_Crossing');
    const b = await p.newUser('100% Human');
    const r = await p.request('GET', '/api/v1/admin/users?limit=100', { token: admin.token });
    expect(r.status).toBe(200);
    expect(r.body.meta.total).toBeGreaterThanOrEqual(4);
    expect(r.text).not.toMatch(/passwordHash|password_hash|\$argon2/);
    expect(Object.keys(r.body.data[0]).sort()).toEqual(['createdAt', 'email', 'id', 'name', 'role', 'updatedAt']);

    const byName = await p.request('GET', '/api/v1/admin/users?search=zEBRA', { token: admin.token });
    expect(byName.body.data.map((u: any) => u.id)).toEqual([a.user.id]);
    const byEmail = await p.request('GET', `/api/v1/admin/users?search=${encodeURIComponent(b.email.toUpperCase())}`, { token: admin.token });
    expect(byEmail.body.data.map((u: any) => u.id)).toEqual([b.user.id]);
    const pct = await p.request('GET', '/api/v1/admin/users?search=%25', { token: admin.token });
    expect(pct.body.data.map((u: any) => u.id)).toEqual([b.user.id]);
    const under = await p.request('GET', '/api/v1/admin/users?search=_', { token: admin.token });
    expect(under.body.data.map((u: any) => u.id)).toEqual([a.user.id]);
    const inj = await p.request('GET', `/api/v1/admin/users?search=${encodeURIComponent("' or 1=1 --")}`, { token: admin.token });
    expect(inj.body).toEqual({ data: [], meta: { total: 0, page: 1, limit: 20 } });
    expectError(await p.request('GET', '/api/v1/admin/users?page=0', { token: admin.token }), 422, 'VALIDATION_ERROR');
    expectError(await p.request('GET', '/api/v1/admin/users?search=a&search=b', { token: admin.token }), 422, 'VALIDATION_ERROR');
    expectFieldError(await p.request('GET', '/api/v1/admin/users?search=a%00', { token: admin.token }), 'search');
    expectError(await p.request('GET', '/api/v1/admin/users', { token: user.token }), 403, 'FORBIDDEN');
    expectError(await p.request('GET', '/api/v1/admin/users'), 401, 'UNAUTHORIZED');
  });

  test('GET /admin/stats counts users, servers by status, nodes, blueprints and allocations', async () => {
    const before = (await p.request('GET', '/api/v1/admin/stats', { token: admin.token })).body.data;
    expect(before).toEqual({
      users: expect.any(Number),
      servers: { total: expect.any(Number), byStatus: { installing: expect.any(Number), install_failed: expect.any(Number), offline: expect.any(Number), starting: expect.any(Number), running: expect.any(Number), stopping: expect.any(Number), restoring: expect.any(Number) } },
      nodes: { total: expect.any(Number), online: expect.any(Number) },
      blueprints: BUILTIN_BLUEPRINTS.length,
      memory: { allocated: expect.any(Number), total: expect.any(Number) },
      disk: { allocated: expect.any(Number), total: expect.any(Number) },
    });
    const n = await createNode(p, admin.token, { memory: 1000, disk: 3000 });
    const bp = await blueprintsByKey(p, user.token);
    await p.request('POST', '/api/v1/servers', { token: user.token, body: { name: 's', nodeId: n.id, blueprintId: bp['shell-command'].id, memory: 100, disk: 200 } });
    await p.request('POST', '/api/v1/servers', { token: user.token, body: { name: 's', nodeId: n.id, blueprintId: bp['demo-game'].id, memory: 100, disk: 200 } });
    await p.newUser();
    const after = (await p.request('GET', '/api/v1/admin/stats', { token: admin.token })).body.data;
    expect(after.users).toBe(before.users + 1);
    expect(after.nodes.total).toBe(before.nodes.total + 1);
    expect(after.servers.total).toBe(before.servers.total + 2);
    expect(after.servers.byStatus.offline).toBe(before.servers.byStatus.offline + 1);
    expect(after.servers.byStatus.installing).toBe(before.servers.byStatus.installing + 1);
    expect(after.memory).toEqual({ allocated: before.memory.allocated + 200, total: before.memory.total + 1000 });
    expect(after.disk).toEqual({ allocated: before.disk.allocated + 400, total: before.disk.total + 3000 });
    expectError(await p.request('GET', '/api/v1/admin/stats', { token: user.token }), 403, 'FORBIDDEN');
    expectError(await p.request('GET', '/api/v1/admin/stats'), 401, 'UNAUTHORIZED');
  });

  test('admin routes use the admin rate-limit bucket', async () => {
    const r = await p.request('GET', '/api/v1/admin/stats', { token: admin.token });
    expect(r.headers.get('x-ratelimit-limit')).toBe('100000');
    expect(r.headers.get('x-ratelimit-remaining')).toEqual(expect.any(String));
  });
});

describe('blueprints', () => {
  test('every signed-in user lists and reads the seeded built-in blueprints', async () => {
    const r = await p.request('GET', '/api/v1/blueprints', { token: user.token });
    expect(r.status).toBe(200);
    expect(r.body.meta).toEqual({ total: BUILTIN_BLUEPRINTS.length, page: 1, limit: 20 });
    expect(r.body.data.map((b: any) => b.key).sort()).toEqual(BUILTIN_BLUEPRINTS.map((b) => b.key).sort());
    const demo = r.body.data.find((b: any) => b.key === 'demo-game');
    expect(Object.keys(demo).sort()).toEqual(['builtin', 'configFiles', 'createdAt', 'defaults', 'description', 'fileDenylist', 'id', 'install', 'installShell', 'key', 'name', 'ready', 'startup', 'stop', 'updatedAt', 'variables']);
    expect(demo.builtin).toBe(true);
    expect(demo.variables[0]).toEqual({ key: expect.any(String), name: expect.any(String), description: expect.any(String), default: expect.any(String), rules: expect.any(String), userViewable: true, userEditable: true });
    const one = await p.request('GET', `/api/v1/blueprints/${demo.id}`, { token: user.token });
    expect(one.body.data).toEqual(demo);
    expectError(await p.request('GET', '/api/v1/blueprints/00000000-0000-4000-8000-000000000000', { token: user.token }), 404, 'NOT_FOUND');
    expectError(await p.request('GET', '/api/v1/blueprints/demo-game', { token: user.token }), 404, 'NOT_FOUND');
    expectError(await p.request('GET', '/api/v1/blueprints'), 401, 'UNAUTHORIZED');
    expectError(await p.request('GET', `/api/v1/blueprints/${demo.id}`), 401, 'UNAUTHORIZED');
    expectError(await p.request('GET', '/api/v1/blueprints?limit=abc', { token: user.token }), 422, 'VALIDATION_ERROR');
    expect((await p.request('GET', '/api/v1/blueprints?page=50', { token: user.token })).body).toEqual({ data: [], meta: { total: BUILTIN_BLUEPRINTS.length, page: 50, limit: 20 } });
  });

  test('seeding is idempotent and updates built-ins in place (same id)', async () => {
    const before = await blueprintsByKey(p, user.token);
    expect(await seedBuiltinBlueprints(p.orm)).toEqual({ inserted: 0, updated: 0 });
    const changed = BUILTIN_BLUEPRINTS.map((b) => (b.key === 'demo-game' ? { ...b, name: 'Demo game server v2' } : b));
    expect(await seedBuiltinBlueprints(p.orm, changed)).toEqual({ inserted: 0, updated: 1 });
    const after = await blueprintsByKey(p, user.token);
    expect(after['demo-game'].id).toBe(before['demo-game'].id);
    expect(after['demo-game'].name).toBe('Demo game server v2');
    expect(await seedBuiltinBlueprints(p.orm)).toEqual({ inserted: 0, updated: 1 });
    expect((await blueprintsByKey(p, user.token))['demo-game'].name).toBe(before['demo-game'].name);
  });
});
