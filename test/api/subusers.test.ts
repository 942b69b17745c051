/**
 * Subusers over REST: invitation, listing, permission changes and removal, the no-escalation rules,
 * bad input (422 with the field, nothing half-created), and what a subuser sees and may do.
 */
import fc from 'fast-check';
import { blueprintsByKey, createNode, expectError, expectFieldError } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform;
let admin: string;
let owner: { token: string; user: any; email: string };
let friend: { token: string; user: any; email: string };
let staff: { token: string; user: any; email: string };
let serverId: string;
let otherServerId: string;

async function newServer(token: string, nodeId: string, blueprintId: string): Promise<string> {
  const r = await p.request('POST', '/api/v1/servers', { token, body: { name: `s ${Math.random()}`, nodeId, blueprintId, memory: 64, cpu: 10, disk: 128 } });
  if (r.status !== 201) throw new Error(r.text);
  return r.body.data.id;
}

beforeAll(async () => {
  p = await startTestPlatform({ rateLimits: { general: 100_000, auth: 100_000, admin: 100_000 } });
  admin = (await p.admin()).token;
  owner = await p.newUser('owner');
  friend = await p.newUser('friend');
  staff = await p.newUser('staff');
  const node = await createNode(p, admin);
  const bp = (await blueprintsByKey(p, owner.token))['demo-game'].id;
  serverId = await newServer(owner.token, node.id, bp);
  otherServerId = await newServer(owner.token, node.id, bp);
});
afterAll(async () => {
  await p?.stop();
});

const subusers = (id = serverId) => `/api/v1/servers/${id}/subusers`;

test('GET /permissions lists every key with a description, for any signed-in user', async () => {
  const r = await p.request('GET', '/api/v1/permissions', { token: friend.token });
  expect(r.status).toBe(200);
  const keys = r.body.data.map((k: any) => k.key);
  expect(keys).toEqual(expect.arrayContaining(['websocket.connect', 'control.console', 'file.sftp', 'startup.update', 'activity.read']));
  for (const k of r.body.data) expect(typeof k.description).toBe('string');
  expectError(await p.request('GET', '/api/v1/permissions'), 401, 'UNAUTHORIZED');
});

test('a stranger does not see the server; once invited, the subuser sees it with their keys only', async () => {
  expectError(await p.request('GET', `/api/v1/servers/${serverId}`, { token: friend.token }), 404, 'NOT_FOUND');
  const add = await p.request('POST', subusers(), { token: owner.token, body: { email: friend.email.toUpperCase(), permissions: ['websocket.connect', 'control.start'] } });
  expect(add.status).toBe(201);
  expect(add.body.data).toMatchObject({ userId: friend.user.id, email: friend.email, permissions: ['control.start', 'websocket.connect'], paths: [] });

  const one = await p.request('GET', `/api/v1/servers/${serverId}`, { token: friend.token });
  expect(one.status).toBe(200);
  expect(one.body.data.permissions).toEqual(['control.start', 'websocket.connect']);
  const list = await p.request('GET', '/api/v1/servers?limit=100', { token: friend.token });
  expect(list.body.data.map((s: any) => s.id)).toEqual([serverId]);
  expect(list.body.data[0].permissions).toEqual(['control.start', 'websocket.connect']);
  expect(list.body.meta.total).toBe(1);
  const mine = await p.request('GET', '/api/v1/servers?limit=100', { token: owner.token });
  expect(mine.body.data.every((s: any) => s.permissions[0] === '*')).toBe(true);
  expect((await p.request('GET', `/api/v1/servers/${serverId}`, { token: admin })).body.data.permissions).toEqual(['*']);

  // the other server of the owner stays invisible
  expectError(await p.request('GET', `/api/v1/servers/${otherServerId}`, { token: friend.token }), 404, 'NOT_FOUND');
});

test('a subuser lacking a key gets 403; owner-only changes stay the owner\'s', async () => {
  // friend holds websocket.connect and control.start only
  expectError(await p.request('POST', `/api/v1/servers/${serverId}/stop`, { token: friend.token }), 403, 'FORBIDDEN');
  expectError(await p.request('POST', `/api/v1/servers/${serverId}/kill`, { token: friend.token }), 403, 'FORBIDDEN');
  expectError(await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: friend.token, body: { name: 'mine now' } }), 403, 'FORBIDDEN');
  expectError(await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: friend.token, body: { memory: 128 } }), 403, 'FORBIDDEN');
  expectError(await p.request('DELETE', `/api/v1/servers/${serverId}`, { token: friend.token }), 403, 'FORBIDDEN');
  expectError(await p.request('GET', subusers(), { token: friend.token }), 403, 'FORBIDDEN');
  // start is allowed by the policy: the answer depends on the server and its node (unreachable here), not on authorization
  const start = await p.request('POST', `/api/v1/servers/${serverId}/start`, { token: friend.token });
  expect(start.status).toBe(422);
  expect(['NODE_UNAVAILABLE', 'INVALID_STATE']).toContain(start.body.error.code);
});

test('settings.rename allows name and description, nothing else', async () => {
  const add = await p.request('POST', subusers(), { token: owner.token, body: { email: staff.email, permissions: ['settings.rename', 'user.read', 'user.create', 'user.update', 'user.delete', 'control.start'] } });
  expect(add.status).toBe(201);
  const r = await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: staff.token, body: { name: 'renamed by staff', description: 'hello' } });
  expect(r.status).toBe(200);
  expect(r.body.data).toMatchObject({ name: 'renamed by staff', description: 'hello' });
  expectError(await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: staff.token, body: { name: 'x', cpu: 20 } }), 403, 'FORBIDDEN');
  expect((await p.request('GET', `/api/v1/servers/${serverId}`, { token: owner.token })).body.data.cpu).toBe(10);
});

test('nobody grants a key they lack, edits themselves, or adds the owner', async () => {
  // staff holds user.* and control.start, but not control.stop
  expectError(await p.request('PATCH', `${subusers()}/${friend.user.id}`, { token: staff.token, body: { permissions: ['websocket.connect', 'control.start', 'control.stop'] } }), 403, 'FORBIDDEN');
  expectError(await p.request('PATCH', `${subusers()}/${staff.user.id}`, { token: staff.token, body: { permissions: ['settings.rename'] } }), 403, 'FORBIDDEN');
  expectError(await p.request('DELETE', `${subusers()}/${staff.user.id}`, { token: staff.token }), 403, 'FORBIDDEN');
  expectFieldError(await p.request('POST', subusers(), { token: owner.token, body: { email: owner.email, permissions: [] } }), 'email');
  // a key the granter holds can be granted; one the target already had can be kept
  const ok = await p.request('PATCH', `${subusers()}/${friend.user.id}`, { token: staff.token, body: { permissions: ['websocket.connect', 'control.start'] } });
  expect(ok.status).toBe(200);
  // nothing changed by the refused calls
  const list = await p.request('GET', subusers(), { token: owner.token });
  const f = list.body.data.find((s: any) => s.userId === friend.user.id);
  expect(f.permissions).toEqual(['control.start', 'websocket.connect']);
});

test('bad input is a 422 with the field, and nothing is created', async () => {
  const someone = await p.newUser('someone');
  const before = (await p.request('GET', subusers(), { token: owner.token })).body.meta.total;
  expectFieldError(await p.request('POST', subusers(), { token: owner.token, body: { email: 'nobody-here@example.com', permissions: [] } }), 'email');
  expectFieldError(await p.request('POST', subusers(), { token: owner.token, body: { email: someone.email, permissions: ['control.fly'] } }), 'permissions');
  expectFieldError(await p.request('POST', subusers(), { token: owner.token, body: { email: someone.email, permissions: 'control.start' } }), 'permissions');
  expectFieldError(await p.request('POST', subusers(), { token: owner.token, body: { email: someone.email, permissions: Array(5000).fill('control.start') } }), 'permissions');
  for (const bad of ['../etc', '/plugins/../../x', 'a\u0000b', 'c:\\windows', '/ok', '']) {
    const r = await p.request('POST', subusers(), { token: owner.token, body: { email: someone.email, permissions: ['file.read'], paths: [bad, '/plugins'] } });
    if (bad === '/ok') {
      expect(r.status).toBe(201);
      expect(r.body.data.paths).toEqual(['/ok', '/plugins']);
      expect((await p.request('DELETE', `${subusers()}/${someone.user.id}`, { token: owner.token })).status).toBe(204);
    } else expectFieldError(r, 'paths');
  }
  expect((await p.request('GET', subusers(), { token: owner.token })).body.meta.total).toBe(before);
  expectError(await p.request('POST', subusers(), { token: owner.token, body: { email: friend.email, permissions: [] } }), 422, 'ALREADY_EXISTS');
  expectError(await p.request('PATCH', `${subusers()}/${someone.user.id}`, { token: owner.token, body: { permissions: [] } }), 404, 'NOT_FOUND');
  expectError(await p.request('PATCH', `${subusers()}/not-a-uuid`, { token: owner.token, body: { permissions: [] } }), 404, 'NOT_FOUND');
  // another server's id: the subuser entry is of this server only
  expectError(await p.request('PATCH', `${subusers(otherServerId)}/${friend.user.id}`, { token: owner.token, body: { permissions: [] } }), 404, 'NOT_FOUND');
});

test('property: any permission list either stores exactly its known keys or is refused whole', async () => {
  const someone = await p.newUser('prop');
  const keys = (await p.request('GET', '/api/v1/permissions', { token: owner.token })).body.data.map((k: any) => k.key) as string[];
  await fc.assert(
    fc.asyncProperty(fc.array(fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 12 })), { maxLength: 8 }), async (list) => {
      const r = await p.request('POST', subusers(otherServerId), { token: owner.token, body: { email: someone.email, permissions: list } });
      if (list.every((k) => keys.includes(k))) {
        expect(r.status).toBe(201);
        expect(r.body.data.permissions).toEqual([...new Set(list)].sort());
        expect((await p.request('DELETE', `${subusers(otherServerId)}/${someone.user.id}`, { token: owner.token })).status).toBe(204);
      } else expectFieldError(r, 'permissions');
    }),
    { numRuns: 40, seed: 20261125 },
  );
  expect((await p.request('GET', subusers(otherServerId), { token: owner.token })).body.meta.total).toBe(0);
});

test('a scoped subuser can only hand out scopes inside their own', async () => {
  const scoped = await p.newUser('scoped');
  const target = await p.newUser('target');
  expect((await p.request('POST', subusers(otherServerId), { token: owner.token, body: { email: scoped.email, permissions: ['user.create', 'file.read'], paths: ['/plugins'] } })).status).toBe(201);
  expectError(await p.request('POST', subusers(otherServerId), { token: scoped.token, body: { email: target.email, permissions: ['file.read'] } }), 403, 'FORBIDDEN');
  expectError(await p.request('POST', subusers(otherServerId), { token: scoped.token, body: { email: target.email, permissions: ['file.read'], paths: ['/world'] } }), 403, 'FORBIDDEN');
  const ok = await p.request('POST', subusers(otherServerId), { token: scoped.token, body: { email: target.email, permissions: ['file.read'], paths: ['/plugins/essentials'] } });
  expect(ok.status).toBe(201);
  // the server's record tells each caller their own folders, over REST as over GraphQL
  const one = await p.request('GET', `/api/v1/servers/${otherServerId}`, { token: scoped.token });
  const list = await p.request('GET', '/api/v1/servers?limit=100', { token: scoped.token });
  const gql = await p.request('POST', '/graphql', { token: scoped.token, body: { query: '{ servers(limit: 100) { items { id paths } } }' } });
  expect([one.body.data.paths, list.body.data.find((s: any) => s.id === otherServerId).paths, (gql.body as any).data.servers.items.find((s: any) => s.id === otherServerId).paths]).toEqual([['/plugins'], ['/plugins'], ['/plugins']]);
  expect((await p.request('GET', `/api/v1/servers/${otherServerId}`, { token: owner.token })).body.data.paths).toEqual([]);
  expect((await p.request('GET', '/api/v1/servers?limit=100', { token: admin })).body.data.every((s: any) => s.paths.length === 0)).toBe(true);
});

test('a scope naming the root is the whole server: stored as [], and setting [] widens nothing', async () => {
  const rooted = await p.newUser('rooted');
  const granter = await p.newUser('granter');
  const made = await p.request('POST', subusers(otherServerId), { token: owner.token, body: { email: rooted.email, permissions: ['file.read'], paths: ['/', '/plugins'] } });
  expect([made.status, made.body.data.paths]).toEqual([201, []]);
  const patched = await p.request('PATCH', `${subusers(otherServerId)}/${rooted.user.id}`, { token: owner.token, body: { paths: ['//./'] } });
  expect([patched.status, patched.body.data.paths]).toEqual([200, []]);
  // a granter without file keys may set what was the root already (it was a 403: "[]" counted as wider than ["/"])
  expect((await p.request('POST', subusers(otherServerId), { token: owner.token, body: { email: granter.email, permissions: ['user.read', 'user.update'] } })).status).toBe(201);
  const same = await p.request('PATCH', `${subusers(otherServerId)}/${rooted.user.id}`, { token: granter.token, body: { paths: [] } });
  expect(same.status).toBe(200);
});

test('removing a subuser hides the server from them again', async () => {
  expect((await p.request('DELETE', `${subusers()}/${friend.user.id}`, { token: owner.token })).status).toBe(204);
  expectError(await p.request('GET', `/api/v1/servers/${serverId}`, { token: friend.token }), 404, 'NOT_FOUND');
  expect((await p.request('GET', '/api/v1/servers', { token: friend.token })).body.meta.total).toBe(0);
});

describe('changes of the same entries at once are judged one after the other', () => {
  let sid: string;
  beforeAll(async () => {
    const node = await createNode(p, admin);
    sid = await newServer(owner.token, node.id, (await blueprintsByKey(p, owner.token))['demo-game'].id);
  });

  test('a key the owner takes away is not given back by a subuser who never held it, sending at the same moment', async () => {
    // the subuser's change was judged on the entry as read before the owner's: "keeping" a key its
    // target held then, it gave back the key the owner had just taken (58 of 60 rounds)
    const a = await p.newUser('granter');
    const b = await p.newUser('target');
    expect((await p.request('POST', subusers(sid), { token: owner.token, body: { email: a.email, permissions: ['user.update', 'websocket.connect'] } })).status).toBe(201);
    expect((await p.request('POST', subusers(sid), { token: owner.token, body: { email: b.email, permissions: ['websocket.connect'] } })).status).toBe(201);
    for (let round = 0; round < 20; round++) {
      expect((await p.request('PATCH', `${subusers(sid)}/${b.user.id}`, { token: owner.token, body: { permissions: ['websocket.connect', 'control.start'] } })).status).toBe(200);
      const [byOwner, bySubuser] = await Promise.all([
        p.request('PATCH', `${subusers(sid)}/${b.user.id}`, { token: owner.token, body: { permissions: ['websocket.connect'] } }),
        p.request('PATCH', `${subusers(sid)}/${b.user.id}`, { token: a.token, body: { permissions: ['control.start'] } }),
      ]);
      const now = (await p.request('GET', subusers(sid), { token: owner.token })).body.data.find((s: any) => s.userId === b.user.id);
      // the subuser first: the owner's change wins; the owner first: control.start is a grant (403)
      if (bySubuser.status === 200) expect([byOwner.status, now.permissions]).toEqual([200, ['websocket.connect']]);
      else expect([byOwner.status, bySubuser.status, now.permissions]).toEqual([200, 403, ['websocket.connect']]);
    }
  });

  test("widening another subuser's folder scope gives their file keys there: only a granter holding them may", async () => {
    const a = await p.newUser('widener');
    const b = await p.newUser('scoped');
    await p.request('POST', subusers(sid), { token: owner.token, body: { email: a.email, permissions: ['user.read', 'user.update', 'file.read'] } });
    await p.request('POST', subusers(sid), { token: owner.token, body: { email: b.email, permissions: ['file.read', 'file.delete'], paths: ['/data'] } });
    const widen = await p.request('PATCH', `${subusers(sid)}/${b.user.id}`, { token: a.token, body: { paths: [] } });
    expectError(widen, 403, 'FORBIDDEN');
    expect(widen.body.error.message).toBe('You cannot grant permissions you do not hold: file.delete.');
    const gql = await p.request('POST', '/graphql', { token: a.token, body: { query: 'mutation($s: ID!, $u: ID!) { updateSubuser(serverId: $s, userId: $u, input: { paths: ["/"] }) { paths } }', variables: { s: sid, u: b.user.id } } });
    expect(gql.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    // narrowing, or a key taken away, needs no more than user.update
    expect((await p.request('PATCH', `${subusers(sid)}/${b.user.id}`, { token: a.token, body: { paths: ['/data/maps'] } })).status).toBe(200);
    expect((await p.request('PATCH', `${subusers(sid)}/${b.user.id}`, { token: a.token, body: { permissions: ['file.read'] } })).status).toBe(200);
    const now = (await p.request('GET', subusers(sid), { token: owner.token })).body.data.find((s: any) => s.userId === b.user.id);
    expect([now.permissions, now.paths]).toEqual([['file.read'], ['/data/maps']]);
  });

  test('a granter limited to some folders may take a key from a subuser of the whole server, not give them a file key', async () => {
    // it was refused ("the paths you give must lie inside it") although it gave no paths
    const a = await p.newUser('limited');
    const b = await p.newUser('whole');
    await p.request('POST', subusers(sid), { token: owner.token, body: { email: a.email, permissions: ['user.update', 'file.read', 'websocket.connect'], paths: ['/data'] } });
    await p.request('POST', subusers(sid), { token: owner.token, body: { email: b.email, permissions: ['file.read', 'websocket.connect'] } });
    expect((await p.request('PATCH', `${subusers(sid)}/${b.user.id}`, { token: a.token, body: { permissions: ['file.read'] } })).status).toBe(200);
    expect((await p.request('PATCH', `${subusers(sid)}/${b.user.id}`, { token: a.token, body: { permissions: ['websocket.connect'] } })).status).toBe(200);
    const give = await p.request('PATCH', `${subusers(sid)}/${b.user.id}`, { token: a.token, body: { permissions: ['websocket.connect', 'file.read'] } });
    expectError(give, 403, 'FORBIDDEN');
    expect(give.body.error.message).toBe('Your own access is limited to /data: the paths you give must lie inside it.');
  });
});
