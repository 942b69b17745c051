/** GraphQL twins of servers, nodes, blueprints, admin and plants: success, errors, authorization. */
import { createNode } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { expectData, expectGqlError, gql } from './gql.js';

let p: TestPlatform;
let admin: string;
let owner: { token: string; user: any };
let other: { token: string; user: any };
let nodeId: string;
let blueprintId: string;

const SERVER_FIELDS = 'id name description ownerId nodeId blueprintId memory cpu disk status variables autoRestart crashCount createdAt updatedAt';
const CREATE = `mutation($input: CreateServerInput!) { createServer(input: $input) { ${SERVER_FIELDS} owner { id } node { id name } blueprint { id key } } }`;

beforeAll(async () => {
  p = await startTestPlatform();
  admin = (await p.admin()).token;
  owner = await p.newUser('Owner');
  other = await p.newUser('Other');
  nodeId = (await createNode(p, admin)).id;
  const bps = expectData(await gql(p, '{ blueprints(limit: 100) { items { id key name variables { key default rules } defaults { memory cpu disk } } total } }', undefined, { token: owner.token })).blueprints;
  expect(bps.total).toBeGreaterThan(0);
  blueprintId = bps.items[0].id;
});
afterAll(async () => p?.stop());

describe('blueprints', () => {
  test('list and get; anonymous UNAUTHORIZED; unknown NOT_FOUND', async () => {
    const b = expectData(await gql(p, '{ blueprint(id: "' + blueprintId + '") { id key startup stop ready builtin createdAt } }', undefined, { token: owner.token })).blueprint;
    expect(b.id).toBe(blueprintId);
    const rest = await p.request('GET', `/api/v1/blueprints/${blueprintId}`, { token: owner.token });
    expect(b.startup).toBe(rest.body.data.startup);
    expectGqlError(await gql(p, '{ blueprints { total } }'), 'UNAUTHORIZED');
    expectGqlError(await gql(p, '{ blueprint(id: "00000000-0000-4000-8000-000000000000") { id } }', undefined, { token: owner.token }), 'NOT_FOUND');
    expectGqlError(await gql(p, '{ blueprints(limit: 101) { total } }', undefined, { token: owner.token }), 'VALIDATION_ERROR');
  });
});

describe('servers', () => {
  let serverId: string;

  test('createServer: owner creates; relations resolve; REST sees the same record', async () => {
    const r = await gql(p, CREATE, { input: { name: 'Survival', nodeId, blueprintId, memory: 256, cpu: 100, disk: 1024 } }, { token: owner.token });
    const s = expectData(r).createServer;
    serverId = s.id;
    expect(s).toMatchObject({ name: 'Survival', ownerId: owner.user.id, nodeId, blueprintId, memory: 256, cpu: 100, disk: 1024 });
    expect(s.owner.id).toBe(owner.user.id);
    expect(s.node.id).toBe(nodeId);
    expect(s.blueprint.id).toBe(blueprintId);
    const rest = await p.request('GET', `/api/v1/servers/${serverId}`, { token: owner.token });
    expect(rest.body.data).toMatchObject({ id: serverId, name: 'Survival', status: s.status });
  });

  test('createServer errors: UNAUTHORIZED, VALIDATION_ERROR (same fields as REST), CAPACITY_EXCEEDED, FORBIDDEN ownerId', async () => {
    expectGqlError(await gql(p, CREATE, { input: { name: 'x', nodeId, blueprintId } }), 'UNAUTHORIZED');
    const bad = { name: '', nodeId, blueprintId, memory: 10, disk: 5, cpu: 0 };
    const g = await gql(p, CREATE, { input: bad }, { token: owner.token });
    expectGqlError(g, 'VALIDATION_ERROR');
    const rest = await p.request('POST', '/api/v1/servers', { token: owner.token, body: bad });
    expect(rest.status).toBe(422);
    expect(g.body.errors![0]!.extensions.details.fields).toEqual(rest.body.error.details.fields);
    const unknownNode = await gql(p, CREATE, { input: { name: 'x', nodeId: '00000000-0000-4000-8000-000000000000', blueprintId } }, { token: owner.token });
    expectGqlError(unknownNode, 'VALIDATION_ERROR');
    expect(unknownNode.body.errors![0]!.extensions.details.fields.nodeId).toBeDefined();
    expectGqlError(await gql(p, CREATE, { input: { name: 'big', nodeId, blueprintId, memory: 1_000_000 } }, { token: owner.token }), 'CAPACITY_EXCEEDED');
    expectGqlError(await gql(p, CREATE, { input: { name: 'x', nodeId, blueprintId, ownerId: other.user.id } }, { token: owner.token }), 'FORBIDDEN');
    // a value that is not an Int at all: caught by GraphQL, reported as VALIDATION_ERROR on that field
    const notInt = await gql(p, CREATE, { input: { name: 'x', nodeId, blueprintId, memory: 1.5 } }, { token: owner.token });
    expectGqlError(notInt, 'VALIDATION_ERROR', 400);
    expect(Object.keys(notInt.body.errors![0]!.extensions.details.fields)).toEqual(['memory']);
  });

  test('server(id): anonymous UNAUTHORIZED / other user NOT_FOUND / owner and admin OK', async () => {
    const Q = `query($id: ID!) { server(id: $id) { id name owner { email } } }`;
    expectGqlError(await gql(p, Q, { id: serverId }), 'UNAUTHORIZED');
    expectGqlError(await gql(p, Q, { id: serverId }, { token: other.token }), 'NOT_FOUND');
    expect(expectData(await gql(p, Q, { id: serverId }, { token: owner.token })).server.id).toBe(serverId);
    expect(expectData(await gql(p, Q, { id: serverId }, { token: admin })).server.owner.email).toBeDefined();
    expectGqlError(await gql(p, Q, { id: 'not-a-uuid' }, { token: owner.token }), 'NOT_FOUND');
  });

  test('a server\'s owner is shown to its owner, administrators and subusers holding user.read; null to other subusers', async () => {
    // a subuser holding only file.read read the owner's email and role, which REST never shows them
    const add = async (permissions: string[]) => {
      const u = await p.newUser('sub');
      const r = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: u.email, permissions } });
      expect(r.status).toBe(201);
      return u.token;
    };
    const Q = `query($id: ID!) { server(id: $id) { ownerId owner { id email role } } servers { items { id owner { email } } } }`;
    const asFileReader = expectData(await gql(p, Q, { id: serverId }, { token: await add(['file.read']) }));
    expect(asFileReader.server).toEqual({ ownerId: owner.user.id, owner: null });
    expect(asFileReader.servers.items.find((x: any) => x.id === serverId).owner).toBeNull();
    for (const token of [owner.token, admin, await add(['user.read'])]) {
      expect(expectData(await gql(p, Q, { id: serverId }, { token })).server.owner).toMatchObject({ id: owner.user.id, email: owner.user.email });
    }
  });

  test('servers list: own only for users, all for admins, filters, pagination errors', async () => {
    await gql(p, CREATE, { input: { name: 'Other', nodeId, blueprintId, memory: 128, disk: 256 } }, { token: other.token });
    const L = 'query($status: ServerStatus, $nodeId: ID, $page: Int, $limit: Int) { servers(status: $status, nodeId: $nodeId, page: $page, limit: $limit) { items { id ownerId } total page limit } }';
    const mine = expectData(await gql(p, L, {}, { token: owner.token })).servers;
    expect(mine.total).toBe(1);
    expect(mine.items.every((s: any) => s.ownerId === owner.user.id)).toBe(true);
    const all = expectData(await gql(p, L, { limit: 1 }, { token: admin })).servers;
    expect(all).toMatchObject({ total: 2, page: 1, limit: 1 });
    expect(all.items).toHaveLength(1);
    const byNode = expectData(await gql(p, L, { nodeId }, { token: admin })).servers;
    expect(byNode.total).toBe(2);
    const byStatus = expectData(await gql(p, L, { status: 'running' }, { token: admin })).servers;
    expect(byStatus.total).toBe(0);
    expectGqlError(await gql(p, L, {}), 'UNAUTHORIZED');
    const g = await gql(p, L, { page: 0 }, { token: owner.token });
    expectGqlError(g, 'VALIDATION_ERROR');
    const rest = await p.request('GET', '/api/v1/servers?page=0', { token: owner.token });
    expect(g.body.errors![0]!.extensions.details.fields).toEqual(rest.body.error.details.fields);
    expectGqlError(await gql(p, L, { nodeId: 'x' }, { token: owner.token }), 'VALIDATION_ERROR');
  });

  test('a servers list item equals the server query for the same id (scalars, dates, relations)', async () => {
    const F = 'id name description ownerId nodeId blueprintId memory cpu disk status variables autoRestart lastExitCode lastCrashAt lastStopReason crashCount createdAt updatedAt owner { id email } node { id name } blueprint { id key }';
    for (const token of [admin, owner.token]) {
      const list = expectData(await gql(p, `{ servers(limit: 100) { total items { ${F} } } }`, {}, { token })).servers;
      expect(list.items.length).toBeGreaterThan(0);
      expect(list.total).toBe(list.items.length);
      for (const item of list.items) {
        const one = expectData(await gql(p, `query($id: ID!) { server(id: $id) { ${F} } }`, { id: item.id }, { token })).server;
        expect(item).toEqual(one);
        expect(new Date(item.createdAt).toISOString()).toBe(item.createdAt);
      }
    }
  });

  test('updateServer: owner OK, other NOT_FOUND, invalid VALIDATION_ERROR', async () => {
    const U = 'mutation($id: ID!, $input: UpdateServerInput!) { updateServer(id: $id, input: $input) { id name memory description } }';
    const s = expectData(await gql(p, U, { id: serverId, input: { name: 'Renamed', memory: 512, description: 'hello' } }, { token: owner.token })).updateServer;
    expect(s).toMatchObject({ name: 'Renamed', memory: 512, description: 'hello' });
    expectGqlError(await gql(p, U, { id: serverId, input: { name: 'Hijack' } }, { token: other.token }), 'NOT_FOUND');
    expectGqlError(await gql(p, U, { id: serverId, input: { memory: 1 } }, { token: owner.token }), 'VALIDATION_ERROR');
    expectGqlError(await gql(p, U, { id: serverId, input: { name: 'x' } }), 'UNAUTHORIZED');
    expect(expectData(await gql(p, U, { id: serverId, input: { name: 'ByAdmin' } }, { token: admin })).updateServer.name).toBe('ByAdmin');
  });

  test('deleteServer: other NOT_FOUND; unreachable node NODE_UNAVAILABLE; force needs admin', async () => {
    const D = 'mutation($id: ID!, $force: Boolean) { deleteServer(id: $id, force: $force) }';
    expectGqlError(await gql(p, D, { id: serverId }), 'UNAUTHORIZED');
    expectGqlError(await gql(p, D, { id: serverId }, { token: other.token }), 'NOT_FOUND');
    expectGqlError(await gql(p, D, { id: serverId }, { token: owner.token }), 'NODE_UNAVAILABLE');
    expectGqlError(await gql(p, D, { id: serverId, force: true }, { token: owner.token }), 'FORBIDDEN');
    expect(expectData(await gql(p, D, { id: serverId, force: true }, { token: admin })).deleteServer).toBe(true);
    expectGqlError(await gql(p, '{ server(id: "' + serverId + '") { id } }', undefined, { token: owner.token }), 'NOT_FOUND');
  });
});

describe('nodes (admin only)', () => {
  test('nodes / node: anonymous UNAUTHORIZED, user FORBIDDEN, admin OK with allocation', async () => {
    expectGqlError(await gql(p, '{ nodes { total } }'), 'UNAUTHORIZED');
    expectGqlError(await gql(p, '{ nodes { total } }', undefined, { token: owner.token }), 'FORBIDDEN');
    const list = expectData(await gql(p, '{ nodes { items { id name fqdn port scheme status memory disk allocated { memory disk } } total page limit } }', undefined, { token: admin })).nodes;
    expect(list.total).toBeGreaterThanOrEqual(1);
    const n = list.items.find((x: any) => x.id === nodeId);
    const rest = await p.request('GET', `/api/v1/nodes/${nodeId}`, { token: admin });
    expect(n.allocated).toEqual(rest.body.data.allocated);
    expect(expectData(await gql(p, `{ node(id: "${nodeId}") { id allocated { memory } } }`, undefined, { token: admin })).node.id).toBe(nodeId);
    expectGqlError(await gql(p, `{ node(id: "${nodeId}") { id } }`, undefined, { token: owner.token }), 'FORBIDDEN');
    expectGqlError(await gql(p, '{ node(id: "00000000-0000-4000-8000-000000000000") { id } }', undefined, { token: admin }), 'NOT_FOUND');
  });

  test('a server\'s node is visible to its owner, but not the node\'s allocation', async () => {
    const s = expectData(await gql(p, CREATE, { input: { name: 'Mine', nodeId, blueprintId, memory: 128, disk: 256 } }, { token: owner.token })).createServer;
    const r = await gql(p, `{ server(id: "${s.id}") { node { id name allocated { memory } } } }`, undefined, { token: owner.token });
    expect(r.body.errors![0]!.extensions.code).toBe('FORBIDDEN');
    expect(expectData(await gql(p, `{ server(id: "${s.id}") { node { id name } } }`, undefined, { token: owner.token })).server.node.id).toBe(nodeId);
  });

  test('a server\'s node and blueprint carry the fields their own queries do (they came back null, or failed)', async () => {
    const s = expectData(await gql(p, CREATE, { input: { name: 'Relations', nodeId, blueprintId, memory: 128, disk: 256 } }, { token: admin })).createServer;
    await p.orm.em.fork().getConnection().execute("update nodes set sftp_port = 2222, sftp_fingerprint = 'SHA256:probe' where id = ?", [nodeId]);
    const fields = '{ sftpPort sftpFingerprint }';
    const bpFields = '{ installShell configFiles { file parser } }';
    const viaServer = expectData(await gql(p, `{ server(id: "${s.id}") { node ${fields} blueprint ${bpFields} } servers(limit: 100) { items { id node ${fields} } } }`, undefined, { token: admin }));
    const direct = expectData(await gql(p, `{ node(id: "${nodeId}") ${fields} blueprint(id: "${blueprintId}") ${bpFields} }`, undefined, { token: admin }));
    expect(direct.node).toEqual({ sftpPort: 2222, sftpFingerprint: 'SHA256:probe' });
    expect(viaServer.server.node).toEqual(direct.node);
    expect(viaServer.servers.items.find((x: any) => x.id === s.id).node).toEqual(direct.node);
    expect(viaServer.server.blueprint).toEqual(direct.blueprint);
  });

  test('createNode, createNodeToken, deleteNode (NODE_HAS_SERVERS), with errors', async () => {
    const C = 'mutation($input: CreateNodeInput!) { createNode(input: $input) { node { id name fqdn port scheme allocated { memory } } token { token nodeId createdAt } } }';
    const input = { name: 'gql-node', fqdn: 'Node1.Example.com', memory: 4096, disk: 8192 };
    expectGqlError(await gql(p, C, { input }), 'UNAUTHORIZED');
    expectGqlError(await gql(p, C, { input }, { token: owner.token }), 'FORBIDDEN');
    const created = expectData(await gql(p, C, { input }, { token: admin })).createNode;
    expect(created.node).toMatchObject({ name: 'gql-node', fqdn: 'node1.example.com', port: 5000, scheme: 'http', allocated: { memory: 0 } });
    expect(created.token.nodeId).toBe(created.node.id);
    expect(created.token.token).toMatch(/^hpn_/);
    expectGqlError(await gql(p, C, { input }, { token: admin }), 'ALREADY_EXISTS');
    const bad = { name: 'x', fqdn: 'not a host!', memory: 1, disk: 1, port: 0 };
    const g = await gql(p, C, { input: bad }, { token: admin });
    expectGqlError(g, 'VALIDATION_ERROR');
    const rest = await p.request('POST', '/api/v1/nodes', { token: admin, body: bad });
    expect(g.body.errors![0]!.extensions.details.fields).toEqual(rest.body.error.details.fields);

    const T = 'mutation($id: ID!) { createNodeToken(nodeId: $id) { token nodeId createdAt } }';
    expectGqlError(await gql(p, T, { id: created.node.id }, { token: owner.token }), 'FORBIDDEN');
    const t = expectData(await gql(p, T, { id: created.node.id }, { token: admin })).createNodeToken;
    expect(t.nodeId).toBe(created.node.id);
    expect(t.token).not.toBe(created.token.token);
    expectGqlError(await gql(p, T, { id: '00000000-0000-4000-8000-000000000000' }, { token: admin }), 'NOT_FOUND');

    const D = 'mutation($id: ID!) { deleteNode(id: $id) }';
    expectGqlError(await gql(p, D, { id: created.node.id }, { token: owner.token }), 'FORBIDDEN');
    expectGqlError(await gql(p, D, { id: nodeId }, { token: admin }), 'NODE_HAS_SERVERS');
    expect(expectData(await gql(p, D, { id: created.node.id }, { token: admin })).deleteNode).toBe(true);
    expectGqlError(await gql(p, D, { id: created.node.id }, { token: admin }), 'NOT_FOUND');
  });
});

describe('admin', () => {
  test('adminUsers: paginated with search; users FORBIDDEN', async () => {
    const Q = 'query($search: String, $limit: Int) { adminUsers(search: $search, limit: $limit) { items { id email name role } total page limit } }';
    expectGqlError(await gql(p, Q, {}), 'UNAUTHORIZED');
    expectGqlError(await gql(p, Q, {}, { token: owner.token }), 'FORBIDDEN');
    const all = expectData(await gql(p, Q, { limit: 100 }, { token: admin })).adminUsers;
    expect(all.total).toBeGreaterThanOrEqual(3);
    const found = expectData(await gql(p, Q, { search: 'Owner' }, { token: admin })).adminUsers;
    expect(found.items.map((u: any) => u.id)).toEqual([owner.user.id]);
    expect(expectData(await gql(p, Q, { search: '%' }, { token: admin })).adminUsers.total).toBe(0);
  });

  test('adminStats: the same figures as REST; users FORBIDDEN', async () => {
    expectGqlError(await gql(p, '{ adminStats { users } }', undefined, { token: owner.token }), 'FORBIDDEN');
    const Q = '{ adminStats { users blueprints servers { total byStatus { installing install_failed offline starting running stopping restoring } } nodes { total online } memory { allocated total } disk { allocated total } } }';
    const g = expectData(await gql(p, Q, undefined, { token: admin })).adminStats;
    const rest = await p.request('GET', '/api/v1/admin/stats', { token: admin });
    expect(g).toEqual(rest.body.data);
  });
});

describe('plants', () => {
  test('addPlant keeps int64 ids exactly; plant reads it back; duplicates and anonymous are errors', async () => {
    const A = 'mutation($id: Int64!, $name: String!, $tag: String) { addPlant(id: $id, name: $name, tag: $tag) { id name tag } }';
    expectGqlError(await gql(p, A, { id: '1', name: 'Fern' }), 'UNAUTHORIZED');
    const big = '9223372036854775807';
    expect(expectData(await gql(p, A, { id: big, name: 'Fern', tag: 'green' }, { token: owner.token })).addPlant).toEqual({ id: big, name: 'Fern', tag: 'green' });
    expect(expectData(await gql(p, `mutation { addPlant(id: 9007199254740993, name: "Cactus") { id name tag } }`, undefined, { token: owner.token })).addPlant).toEqual({
      id: '9007199254740993',
      name: 'Cactus',
      tag: null,
    });
    expect(expectData(await gql(p, 'query($id: Int64!) { plant(id: $id) { id name tag } }', { id: big }, { token: owner.token })).plant).toEqual({ id: big, name: 'Fern', tag: 'green' });
    expect(expectData(await gql(p, '{ plant(id: "12345") { id } }', undefined, { token: owner.token })).plant).toBeNull();
    expectGqlError(await gql(p, A, { id: big, name: 'Again' }, { token: owner.token }), 'BAD_REQUEST');
    expectGqlError(await gql(p, A, { id: '5', name: '  ' }, { token: owner.token }), 'BAD_REQUEST');
    const tooBig = await gql(p, A, { id: '9223372036854775808', name: 'x' }, { token: owner.token });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.errors![0]!.extensions.code).toBe('VALIDATION_ERROR');
    // a plant added over REST is readable over GraphQL
    await p.request('POST', '/plants', { token: owner.token, raw: '{"id": 42, "name": "Ivy"}', headers: { 'content-type': 'application/json' } });
    expect(expectData(await gql(p, '{ plant(id: 42) { id name tag } }', undefined, { token: owner.token })).plant).toEqual({ id: '42', name: 'Ivy', tag: null });
  });
});
