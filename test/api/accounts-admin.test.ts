/**
 * Administrators' management of accounts (`/admin/users/:id`, REST and GraphQL): reading one,
 * changing its name, email, password and role, deleting it, and the rules (the last administrator,
 * your own account, an account that owns servers). Taking something away reaches what the account
 * holds open: its GraphQL sockets, its node console sockets (and the tokens issued before) and its SFTP
 * sessions close at once (CONTRACT §9: within a second; these wait at most 3 s, less than the
 * GraphQL sockets' periodic 4 s credential check).
 */
import { ConsoleClient } from '../support/console-client.js';
import { createLocalDemoServer } from '../support/fixtures.js';
import { CONSOLE_LINES, subscribe, trackedClients } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { connectSftp, type SftpConnection } from '../support/sftp-client.js';
import { until } from '../support/wait.js';
import { gql } from '../graphql/gql.js';

jest.setTimeout(90_000);

type Account = Awaited<ReturnType<TestPlatform['newUser']>>;
let p: TestPlatform;
let admin: { token: string; user: any };
let owner: Account;
let serverId: string;
let sftpPort: number;
const clients = trackedClients();
const opened: { end(): void }[] = [];

const U = (id: string) => `/api/v1/admin/users/${id}`;
const get = (token: string, id: string) => p.request('GET', U(id), { token });
const patch = (token: string, id: string, body: unknown) => p.request('PATCH', U(id), { token, body });
const del = (token: string, id: string) => p.request('DELETE', U(id), { token });
const signin = (email: string, password: string) => p.request('POST', '/api/v1/auth/signin', { body: { email, password } });

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, rateLimits: { general: 100_000, auth: 100_000, admin: 100_000 } });
  admin = await p.admin();
  owner = await p.newUser('Owner');
  serverId = await createLocalDemoServer(p, admin.token, owner.token, 'accounts');
  const details = await until(async () => {
    const r = await p.request('GET', `/api/v1/servers/${serverId}/sftp`, { token: owner.token });
    return r.body.data?.port ? r.body.data : null;
  }, 20_000, 'the node to report its SFTP server');
  sftpPort = details.port;
}, 90_000);

afterAll(async () => {
  for (const o of opened) o.end();
  await clients.disposeAll();
  await p?.stop();
}, 60_000);

async function activity(event: string): Promise<any[]> {
  const r = await p.request('GET', `/api/v1/admin/activity?event=${event}&limit=100`, { token: admin.token });
  expect(r.status).toBe(200);
  return r.body.data;
}

/** Everything `who` can hold open on the owner's server: a GraphQL console subscription, a node console socket, an SFTP session. */
async function holdOpen(who: Account) {
  const before = p.services.console.hub.subscriberCount(serverId);
  const c = clients.open(p.url, who.token);
  const sub = subscribe(c, CONSOLE_LINES, { id: serverId });
  await until(() => p.services.console.hub.subscriberCount(serverId) > before, 10_000, 'the subscription to start');
  const t = await p.request('GET', `/api/v1/servers/${serverId}/console-token`, { token: who.token });
  expect(t.status).toBe(200);
  const socket = await ConsoleClient.connect(t.body.data.socket, t.body.data.token);
  opened.push({ end: () => socket.ws.terminate() });
  const sftp: SftpConnection = await connectSftp({ port: sftpPort, username: `${who.email}.${serverId.slice(0, 8)}`, password: who.password });
  opened.push(sftp);
  let sftpClosed = false;
  void sftp.closed.then(() => (sftpClosed = true));
  return { sub, socket, consoleToken: t.body.data.token as string, consoleUrl: t.body.data.socket as string, sftpClosed: () => sftpClosed };
}

async function expectTokenRevoked(url: string, token: string): Promise<void> {
  const again = await ConsoleClient.open(url);
  opened.push({ end: () => again.ws.terminate() });
  again.send({ type: 'auth', token });
  const err = await again.waitFor((m) => m.type === 'error');
  expect(err.data.code).toBe('TOKEN_REVOKED');
}

test('an administrator reads an account; others may not; unknown and malformed ids', async () => {
  const u = await p.newUser('Reader');
  const r = await get(admin.token, u.user.id);
  expect(r.status).toBe(200);
  expect(r.body.data).toEqual({ id: u.user.id, email: u.email, name: 'Reader', role: 'user', createdAt: expect.any(String), updatedAt: expect.any(String) });
  expect(JSON.stringify(r.body)).not.toMatch(/password/i);
  expect((await get(u.token, u.user.id)).status).toBe(403);
  expect((await p.request('GET', U(u.user.id))).status).toBe(401);
  expect((await get(admin.token, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
  expect((await get(admin.token, 'not-an-id')).status).toBe(404);
  const g = await gql(p, 'query($id: ID!) { adminUser(id: $id) { id email name role } }', { id: u.user.id }, { token: admin.token });
  expect(g.body.data?.adminUser).toEqual({ id: u.user.id, email: u.email, name: 'Reader', role: 'user' });
});

test('name and email change; a taken email and bad fields are refused; the log names only what changed', async () => {
  const u = await p.newUser('Before');
  const other = await p.newUser('Other');
  const r = await patch(admin.token, u.user.id, { name: 'After', email: `  New.${u.email.toUpperCase()} ` });
  expect(r.status).toBe(200);
  expect(r.body.data).toMatchObject({ name: 'After', email: `new.${u.email}` });
  const taken = await patch(admin.token, u.user.id, { email: other.email });
  expect(taken.status).toBe(422);
  expect(taken.body.error.code).toBe('ALREADY_EXISTS');
  const bad = await patch(admin.token, u.user.id, { role: 'root', password: 'short' });
  expect(bad.status).toBe(422);
  expect(Object.keys(bad.body.error.details.fields).sort()).toEqual(['password', 'role']);
  expect((await get(admin.token, u.user.id)).body.data).toMatchObject({ name: 'After', email: `new.${u.email}`, role: 'user' });
  // the same values again change nothing and record nothing
  expect((await patch(admin.token, u.user.id, { name: 'After' })).status).toBe(200);
  const entries = (await activity('admin:user.update')).filter((e) => e.properties.userId === u.user.id);
  expect(entries.map((e) => e.properties.fields)).toEqual([['name', 'email']]);
  expect(entries[0].actor.id).toBe(admin.user.id);
  // the user's own "what I did" does not list what an administrator did to the account
  const mine = await p.request('GET', '/api/v1/users/me/activity?event=admin', { token: (await signin(`new.${u.email}`, u.password)).body.data.token });
  expect(mine.body.data).toEqual([]);
});

test('a password set by an administrator ends every session of the account, its console socket and SFTP session; API tokens stay', async () => {
  const u = await p.newUser('Reset');
  const share = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: u.email, permissions: ['websocket.connect', 'file.sftp', 'file.read'] } });
  expect(share.status).toBe(201);
  const api = await p.request('POST', '/api/v1/users/me/api-tokens', { token: u.token, body: { name: 'script' } });
  expect(api.status).toBe(201);
  const held = await holdOpen(u);

  const r = await patch(admin.token, u.user.id, { password: 'a-new-password-1' });
  expect(r.status).toBe(200);
  await until(() => held.sub.done && held.socket.closeCode !== null && held.sftpClosed(), 3_000, 'the GraphQL subscription, console socket and SFTP session to end');
  expect(held.socket.closeCode).toBe(4403);
  await expectTokenRevoked(held.consoleUrl, held.consoleToken);
  expect((await p.request('GET', '/api/v1/users/me', { token: u.token })).status).toBe(401);
  expect((await p.request('GET', '/api/v1/users/me', { token: api.body.data.token })).status).toBe(200);
  expect((await signin(u.email, u.password)).status).toBe(401);
  expect((await signin(u.email, 'a-new-password-1')).status).toBe(200);
  const [entry] = (await activity('admin:user.update')).filter((e) => e.properties.userId === u.user.id);
  expect(entry.properties.fields).toEqual(['password']);
  expect(JSON.stringify(entry)).not.toContain('a-new-password-1');
});

test("a user's own password change closes what their other sessions hold open on the nodes; the session that changed it stays", async () => {
  const u = await p.newUser('Careful');
  const share = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: u.email, permissions: ['websocket.connect', 'file.sftp', 'file.read'] } });
  expect(share.status).toBe(201);
  // someone else signed in with the old password: a second session, holding a console socket open
  const other = await signin(u.email, u.password);
  expect(other.status).toBe(200);
  const held = await holdOpen({ ...u, token: other.body.data.token });
  const mine = clients.open(p.url, u.token);
  const mySub = subscribe(mine, CONSOLE_LINES, { id: serverId });

  const r = await p.request('PATCH', '/api/v1/users/me', { token: u.token, body: { password: 'a-new-password-2', currentPassword: u.password } });
  expect(r.status).toBe(200);
  await until(() => held.sub.done && held.socket.closeCode !== null && held.sftpClosed(), 3_000, "the other session's subscription, console socket and SFTP session to end");
  expect(held.socket.closeCode).toBe(4403);
  await expectTokenRevoked(held.consoleUrl, held.consoleToken);
  expect((await p.request('GET', '/api/v1/users/me', { token: other.body.data.token })).status).toBe(401);
  // this session goes on: its subscription is open, and a console token issued now is accepted
  expect((await p.request('GET', '/api/v1/users/me', { token: u.token })).status).toBe(200);
  expect(mySub.done).toBe(false);
  const t = await p.request('GET', `/api/v1/servers/${serverId}/console-token`, { token: u.token });
  expect(t.status).toBe(200);
  const socket = await ConsoleClient.connect(t.body.data.socket, t.body.data.token);
  opened.push({ end: () => socket.ws.terminate() });
  expect(socket.closeCode).toBeNull();
});

test('deleting an account closes its GraphQL socket, console socket and SFTP session, and refuses its console token', async () => {
  const friend = await p.newUser('Friend');
  const share = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['websocket.connect', 'control.console', 'file.sftp', 'file.read'] } });
  expect(share.status).toBe(201);
  const held = await holdOpen(friend);

  expect((await del(admin.token, friend.user.id)).status).toBe(204);
  await until(() => held.sub.done && held.socket.closeCode !== null && held.sftpClosed(), 3_000, 'the GraphQL subscription, console socket and SFTP session to end');
  expect(held.socket.closeCode).toBe(4403);
  await expectTokenRevoked(held.consoleUrl, held.consoleToken);
  expect((await p.request('GET', '/api/v1/users/me', { token: friend.token })).status).toBe(401);
  expect((await signin(friend.email, friend.password)).status).toBe(401);
  expect((await get(admin.token, friend.user.id)).status).toBe(404);
  expect((await del(admin.token, friend.user.id)).status).toBe(404);
  const subusers = await p.request('GET', `/api/v1/servers/${serverId}/subusers`, { token: owner.token });
  expect(subusers.body.data.map((s: any) => s.user?.id ?? s.userId)).not.toContain(friend.user.id);
  // what the account did stays in the log, with its email as it was; the deletion is recorded
  const [deleted] = (await activity('admin:user.delete')).filter((e) => e.properties.userId === friend.user.id);
  expect(deleted).toMatchObject({ actor: { id: admin.user.id }, properties: { email: friend.email, role: 'user' } });
  const signins = (await activity('auth:signup')).filter((e) => e.actor?.id === friend.user.id);
  expect(signins.map((e) => e.actor.email)).toEqual([friend.email]);
});

test('taking the administrator role away closes what it held open on other users\' servers; it can be given back', async () => {
  const deputy = await p.newUser('Deputy');
  const promoted = await patch(admin.token, deputy.user.id, { role: 'admin' });
  expect(promoted.status).toBe(200);
  expect(promoted.body.data.role).toBe('admin');
  // the role counts from the next request, with the same credential
  expect((await p.request('GET', '/api/v1/admin/stats', { token: deputy.token })).status).toBe(200);
  const held = await holdOpen(deputy);

  const demoted = await gql(p, 'mutation($id: ID!) { updateUser(id: $id, input: { role: user }) { role } }', { id: deputy.user.id }, { token: admin.token });
  expect(demoted.body.data?.updateUser).toEqual({ role: 'user' });
  await until(() => held.sub.done && held.socket.closeCode !== null && held.sftpClosed(), 3_000, 'the GraphQL socket, console socket and SFTP session to end');
  expect(held.sub.errors.map((e: any) => e.code)).toContain(4403);
  expect(held.socket.closeCode).toBe(4403);
  await expectTokenRevoked(held.consoleUrl, held.consoleToken);
  // the same credential goes on, as a user: no admin area, no other users' servers
  expect((await p.request('GET', '/api/v1/users/me', { token: deputy.token })).status).toBe(200);
  expect((await p.request('GET', '/api/v1/admin/stats', { token: deputy.token })).status).toBe(403);
  expect((await p.request('GET', `/api/v1/servers/${serverId}`, { token: deputy.token })).status).toBe(404);
  const [entry] = (await activity('admin:user.update')).filter((e) => e.properties.userId === deputy.user.id && e.properties.role?.to === 'user');
  expect(entry.properties).toMatchObject({ fields: ['role'], role: { from: 'admin', to: 'user' } });
});

test('refused: deleting your own account, an account that owns servers, and demoting the last administrator', async () => {
  const self = await del(admin.token, admin.user.id);
  expect(self.status).toBe(422);
  expect(self.body.error.code).toBe('INVALID_STATE');
  const owns = await del(admin.token, owner.user.id);
  expect(owns.status).toBe(422);
  expect(owns.body.error).toMatchObject({ code: 'INVALID_STATE', details: { servers: 1 } });
  expect((await get(admin.token, owner.user.id)).status).toBe(200);
  const last = await patch(admin.token, admin.user.id, { role: 'user' });
  expect(last.status).toBe(422);
  expect(last.body.error.code).toBe('INVALID_STATE');
  const g = await gql(p, 'mutation($id: ID!) { deleteUser(id: $id) }', { id: owner.user.id }, { token: admin.token });
  expect(g.body.errors?.[0]?.extensions.code).toBe('INVALID_STATE');
  expect((await get(admin.token, admin.user.id)).body.data.role).toBe('admin');
});

test('two administrators taking the role from each other at once leave one administrator', async () => {
  const second = await p.newUser('Second');
  expect((await patch(admin.token, second.user.id, { role: 'admin' })).status).toBe(200);
  const [a, b] = await Promise.all([patch(admin.token, second.user.id, { role: 'user' }), patch(second.token, admin.user.id, { role: 'user' })]);
  expect([a.status, b.status].sort()).toEqual([200, 422]);
  const roles = await Promise.all([get(a.status === 200 ? admin.token : second.token, admin.user.id), get(a.status === 200 ? admin.token : second.token, second.user.id)]);
  expect(roles.map((r) => r.body.data.role).sort()).toEqual(['admin', 'user']);
  // the bootstrap administrator gets the role back for the tests after this one
  if (b.status === 200) expect((await patch(second.token, admin.user.id, { role: 'admin' })).status).toBe(200);
});
