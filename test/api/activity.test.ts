/**
 * The activity log over REST: an entry for each state-changing action with its actor, token and
 * address; the three lists and their filters; permissions; and no secret anywhere in the table.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { blueprintsByKey, createNode, expectError, expectFieldError } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform;
let admin: string;
const secrets: string[] = [];

beforeAll(async () => {
  p = await startTestPlatform({ rateLimits: { general: 100_000, auth: 100_000, admin: 100_000 } });
  admin = (await p.admin()).token;
});
afterAll(async () => {
  await p?.stop();
});

const events = async (token: string, query = '') => {
  const r = await p.request('GET', `/api/v1/users/me/activity?limit=100${query}`, { token });
  expect(r.status).toBe(200);
  return r.body.data as any[];
};

test('an account\'s own actions are recorded, newest first, with actor, token and address', async () => {
  const email = `act-${Date.now()}@example.com`;
  const password = 'first-password-1';
  const up = await p.request('POST', '/api/v1/auth/signup', { body: { email, password, name: 'Act' } });
  expect(up.status).toBe(201);
  const session = up.body.data.token as string;
  secrets.push(password, session);
  const bad = await p.request('POST', '/api/v1/auth/signin', { body: { email, password: 'wrong-password-1' } });
  expect(bad.status).toBe(401);
  secrets.push('wrong-password-1');
  const tok = await p.request('POST', '/api/v1/users/me/api-tokens', { token: session, body: { name: 'ci' } });
  expect(tok.status).toBe(201);
  secrets.push(tok.body.data.token);
  expect((await p.request('PATCH', '/api/v1/users/me', { token: tok.body.data.token, body: { name: 'Act Two' } })).status).toBe(200);
  expect((await p.request('PATCH', '/api/v1/users/me', { token: session, body: { password: 'second-password-2', currentPassword: password } })).status).toBe(200);
  secrets.push('second-password-2');
  expect((await p.request('DELETE', `/api/v1/users/me/api-tokens/${tok.body.data.id}`, { token: session })).status).toBe(204);

  const list = await events(session);
  expect(list.map((e) => e.event)).toEqual(['user:api-token.delete', 'user:password-changed', 'user:update', 'user:api-token.create', 'auth:signup']);
  const byToken = list.find((e) => e.event === 'user:update');
  expect(byToken.apiTokenId).toBe(tok.body.data.id);
  expect(byToken.properties).toEqual({ fields: ['name'] });
  expect(list.find((e) => e.event === 'user:api-token.create').apiTokenId).toBeNull();
  for (const e of list) {
    expect(e.actor).toEqual({ id: up.body.data.user.id, email });
    expect(e.ip).toMatch(/127\.0\.0\.1|::1/);
    expect(new Date(e.createdAt).toISOString()).toBe(e.createdAt);
  }
  // the failed sign-in is in the admin's view, with the address and the attempted email, no actor
  const failed = (await p.request('GET', '/api/v1/admin/activity?event=auth:signin-failed&limit=100', { token: admin })).body.data;
  const mine = failed.find((e: any) => e.properties.email === email);
  expect(mine).toMatchObject({ actor: null, serverId: null });
  expect(mine.ip).toMatch(/127\.0\.0\.1|::1/);
  // sign-out is recorded too (and the session then stops working)
  expect((await p.request('POST', '/api/v1/auth/signout', { token: session })).status).toBe(204);
  const s2 = await p.request('POST', '/api/v1/auth/signin', { body: { email, password: 'second-password-2' } });
  const latest = await events(s2.body.data.token, '&event=auth:');
  expect(latest.map((e) => e.event)).toEqual(['auth:signin', 'auth:signout', 'auth:signup']);
});

test('server actions land in the server\'s log, readable with activity.read only', async () => {
  const owner = await p.newUser('owner');
  const viewer = await p.newUser('viewer');
  const outsider = await p.newUser('outsider');
  const node = await createNode(p, admin);
  const bp = (await blueprintsByKey(p, owner.token))['demo-game'].id;
  const created = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'logged', nodeId: node.id, blueprintId: bp, memory: 64, cpu: 10, disk: 128 } });
  const id = created.body.data.id;
  expect((await p.request('PATCH', `/api/v1/servers/${id}`, { token: owner.token, body: { name: 'logged 2' } })).status).toBe(200);
  expect((await p.request('POST', `/api/v1/servers/${id}/subusers`, { token: owner.token, body: { email: viewer.email, permissions: ['activity.read'] } })).status).toBe(201);

  const r = await p.request('GET', `/api/v1/servers/${id}/activity`, { token: viewer.token });
  expect(r.status).toBe(200);
  expect(r.body.data.map((e: any) => e.event)).toEqual(['server:subuser.create', 'server:update', 'server:create']);
  expect(r.body.data[2].properties).toMatchObject({ name: 'logged', nodeId: node.id, memory: 64 });
  expect(r.body.data[0].properties).toMatchObject({ email: viewer.email, permissions: ['activity.read'] });
  expect(r.body.meta).toEqual({ total: 3, page: 1, limit: 20 });
  const filtered = await p.request('GET', `/api/v1/servers/${id}/activity?event=server:subuser`, { token: owner.token });
  expect(filtered.body.data.map((e: any) => e.event)).toEqual(['server:subuser.create']);

  expectError(await p.request('GET', `/api/v1/servers/${id}/activity`, { token: outsider.token }), 404, 'NOT_FOUND');
  expect((await p.request('PATCH', `/api/v1/servers/${id}/subusers/${viewer.user.id}`, { token: owner.token, body: { permissions: ['websocket.connect'] } })).status).toBe(200);
  expectError(await p.request('GET', `/api/v1/servers/${id}/activity`, { token: viewer.token }), 403, 'FORBIDDEN');
  expectError(await p.request('GET', '/api/v1/admin/activity', { token: owner.token }), 403, 'FORBIDDEN');
  // a removal names the account removed, as its creation and changes do
  expect((await p.request('DELETE', `/api/v1/servers/${id}/subusers/${viewer.user.id}`, { token: owner.token })).status).toBe(204);
  const removed = (await p.request('GET', `/api/v1/servers/${id}/activity?event=server:subuser.delete`, { token: owner.token })).body.data;
  expect(removed.map((e: any) => e.properties)).toEqual([{ userId: viewer.user.id, email: viewer.email }]);

  // the entries outlive the server
  expect((await p.request('DELETE', `/api/v1/servers/${id}?force=true`, { token: admin })).status).toBe(204);
  const all = (await p.request('GET', `/api/v1/admin/activity?serverId=${id}&limit=100`, { token: admin })).body.data;
  expect(all[0]).toMatchObject({ event: 'server:delete', serverId: id });
});

test("a server's log shows an entry's address to its actor and administrators only, over REST and GraphQL", async () => {
  // a subuser with activity.read read the owner's and administrators' addresses
  const owner = await p.newUser('ip-owner');
  const friend = await p.newUser('ip-friend');
  const node = await createNode(p, admin);
  const bp = (await blueprintsByKey(p, owner.token))['demo-game'].id;
  const id = (await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'ips', nodeId: node.id, blueprintId: bp, memory: 64, cpu: 10, disk: 128 } })).body.data.id;
  expect((await p.request('POST', `/api/v1/servers/${id}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['activity.read', 'settings.rename'] } })).status).toBe(201);
  expect((await p.request('PATCH', `/api/v1/servers/${id}`, { token: friend.token, body: { name: 'renamed by friend' } })).status).toBe(200);
  expect((await p.request('PATCH', `/api/v1/servers/${id}`, { token: admin, body: { name: 'renamed by admin' } })).status).toBe(200);
  const addressOf = async (token: string) => {
    const r = await p.request('GET', `/api/v1/servers/${id}/activity`, { token });
    expect(r.status).toBe(200);
    const q = await p.request('POST', '/graphql', { token, body: { query: 'query($id: ID!) { serverActivity(serverId: $id) { items { actor { email } ip } } }', variables: { id } } });
    const viaGraphql = (q.body as any).data.serverActivity.items.map((e: any) => `${e.actor.email} ${e.ip === null ? 'hidden' : 'shown'}`);
    const viaRest = r.body.data.map((e: any) => `${e.actor.email} ${e.ip === null ? 'hidden' : 'shown'}`);
    expect(viaGraphql).toEqual(viaRest);
    return viaRest;
  };
  const adminEmail = (await p.request('GET', '/api/v1/users/me', { token: admin })).body.data.email;
  expect(await addressOf(friend.token)).toEqual([`${adminEmail} hidden`, `${friend.email} shown`, `${owner.email} hidden`, `${owner.email} hidden`]);
  expect(await addressOf(owner.token)).toEqual([`${adminEmail} hidden`, `${friend.email} hidden`, `${owner.email} shown`, `${owner.email} shown`]);
  expect(await addressOf(admin)).toEqual([`${adminEmail} shown`, `${friend.email} shown`, `${owner.email} shown`, `${owner.email} shown`]);
});

test('node administration is recorded', async () => {
  const node = await createNode(p, admin);
  expect((await p.request('POST', `/api/v1/admin/nodes/${node.id}/token`, { token: admin })).status).toBe(201);
  expect((await p.request('DELETE', `/api/v1/nodes/${node.id}`, { token: admin })).status).toBe(204);
  const list = (await p.request('GET', '/api/v1/admin/activity?event=node:&limit=100', { token: admin })).body.data.filter((e: any) => e.properties.nodeId === node.id);
  expect(list.map((e: any) => e.event)).toEqual(['node:delete', 'node:token', 'node:create']);
  secrets.push(node.token);
});

test('filters are validated; a page past the end is empty with the true total', async () => {
  const u = await p.newUser('filters');
  expectFieldError(await p.request('GET', '/api/v1/users/me/activity?since=yesterday', { token: u.token }), 'since');
  // a day the calendar lacks was read as the next one
  expectFieldError(await p.request('GET', '/api/v1/users/me/activity?since=2024-02-30', { token: u.token }), 'since');
  expectFieldError(await p.request('GET', '/api/v1/users/me/activity?until=2023-02-29T10:00:00Z', { token: u.token }), 'until');
  expect((await p.request('GET', '/api/v1/users/me/activity?since=2024-02-29T10:00:00Z', { token: u.token })).status).toBe(200);
  // the years 0001-0099 are years, not 1900-1999; past 9999 in UTC is after every entry (it was a 500)
  expect((await p.request('GET', '/api/v1/users/me/activity?until=0050-06-01T00:00:00Z', { token: u.token })).body.meta.total).toBe(0);
  expect((await p.request('GET', '/api/v1/users/me/activity?since=0050-06-01T00:00:00Z', { token: u.token })).body.meta.total).toBe(1);
  expect((await p.request('GET', '/api/v1/users/me/activity?since=9999-12-31T23:59:59-14:00', { token: u.token })).body.meta.total).toBe(0);
  expect((await p.request('GET', '/api/v1/users/me/activity?until=9999-12-31T23:00:00-02:00', { token: u.token })).body.meta.total).toBe(1);
  expectFieldError(await p.request('GET', '/api/v1/users/me/activity?serverId=nope', { token: u.token }), 'serverId');
  expectFieldError(await p.request('GET', '/api/v1/users/me/activity?event=%00', { token: u.token }), 'event');
  // CONTRACT's `a|b|c` is notation for several events, not a filter: it matched nothing, silently
  expectFieldError(await p.request('GET', '/api/v1/users/me/activity?event=auth:signup|auth:signin', { token: u.token }), 'event');
  const far = await p.request('GET', '/api/v1/users/me/activity?page=50', { token: u.token });
  expect(far.body).toEqual({ data: [], meta: { total: 1, page: 50, limit: 20 } });
  const future = await p.request('GET', `/api/v1/users/me/activity?since=${new Date(Date.now() + 3_600_000).toISOString()}`, { token: u.token });
  expect(future.body.meta.total).toBe(0);
  expectError(await p.request('GET', '/api/v1/users/me/activity'), 401, 'UNAUTHORIZED');
});

test('no password, token or cookie value is stored anywhere in the table', async () => {
  const rows = await p.orm.em.fork().getConnection().execute('select * from activity');
  const dump = JSON.stringify(rows);
  expect(rows.length).toBeGreaterThan(10);
  expect(secrets.length).toBeGreaterThan(5);
  for (const s of secrets) expect(dump).not.toContain(s);
  expect(dump).not.toMatch(/hp[st]_[A-Za-z0-9]/); // no secret with a session or API token prefix
});

test('pruning deletes old entries in batches and keeps the recent ones', async () => {
  const conn = p.orm.em.fork().getConnection();
  await conn.execute(`insert into activity (id, event, properties, created_at) select gen_random_uuid(), 'test:old', '{}', now() - interval '200 days' from generate_series(1, 2500)`);
  const before = Number((await conn.execute(`select count(*) as n from activity where event <> 'test:old'`))[0].n);
  expect(await p.services.activity.prune(90)).toBe(2500);
  expect(Number((await conn.execute(`select count(*) as n from activity where event = 'test:old'`))[0].n)).toBe(0);
  expect(Number((await conn.execute(`select count(*) as n from activity`))[0].n)).toBe(before);
});

test('entries of actions without a transaction of their own are listed right after, intact, and written when an instance stops', async () => {
  const owner = await p.newUser('batched');
  const serverId = randomUUID(); // an entry outlives the server it names: any id will do
  const properties = { command: 'say "hi", {a,b} \\ NULL é 🎮', nested: { list: [1, 'two', null], quote: "it's" } };
  // the service a power action and a console command record through (it batches these entries)
  await p.services.activity.record({ event: 'server:console.command', serverId, user: { id: owner.user.id, email: owner.email }, ip: '203.0.113.7', properties });
  const listed = (await p.request('GET', `/api/v1/admin/activity?serverId=${serverId}`, { token: admin })).body.data;
  expect(listed).toEqual([
    { id: expect.any(String), event: 'server:console.command', serverId, actor: { id: owner.user.id, email: owner.email }, apiTokenId: null, ip: '203.0.113.7', properties, createdAt: expect.any(String) },
  ]);

  // a second instance on the same database writes the entries it holds when it stops
  const masterKey = readFileSync(path.join(p.config.dataDir, 'keys', 'master.key'), 'utf8').trim();
  const q = await startTestPlatform({}, { MASTER_KEY: masterKey }, { database: p.dbName });
  try {
    for (const action of ['start', 'stop', 'kill']) await q.services.activity.record({ event: `server:power.${action}`, serverId, user: { id: owner.user.id, email: owner.email } });
  } finally {
    await q.stop();
  }
  const after = (await p.request('GET', `/api/v1/admin/activity?serverId=${serverId}`, { token: admin })).body.data;
  expect(after.map((e: any) => e.event).sort()).toEqual(['server:console.command', 'server:power.kill', 'server:power.start', 'server:power.stop']);
});
