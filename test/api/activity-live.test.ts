/**
 * The `serverActivity` subscription over graphql-ws: it ends when its subscriber loses activity.read
 * (the key, or the whole subuser entry), and it carries only entries that are in the log (never
 * those of a change refused at its flush). `serverBackups` ends the same way when backup.read goes,
 * and both complete when their server is deleted. Also: dates in an entry's properties are kept as dates.
 */
import { blueprintsByKey, createNode } from '../support/fixtures.js';
import { gqlWsClient, subscribe, type Sub } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let admin: string;
let owner: { token: string; user: any; email: string };
let nodeId: string;
let blueprintId: string;
let serverId: string;
const FEED = 'subscription($id: ID!) { serverActivity(serverId: $id) { id event } }';
const BACKUPS = 'subscription($id: ID!) { serverBackups(serverId: $id) { id status } }';

beforeAll(async () => {
  p = await startTestPlatform({ rateLimits: { general: 100_000, auth: 100_000, admin: 100_000 } });
  admin = (await p.admin()).token;
  owner = await p.newUser('owner');
  nodeId = (await createNode(p, admin)).id;
  blueprintId = (await blueprintsByKey(p, owner.token))['shell-command'].id;
  serverId = await newServer('live');
}, 60_000);
afterAll(async () => {
  await p?.stop();
});

async function newServer(name: string): Promise<string> {
  return (await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name, nodeId, blueprintId, memory: 64, cpu: 10, disk: 128 } })).body.data.id;
}
/** A backup of the server (its node is unreachable: the backup is recorded, then fails). */
const backup = (id = serverId) => p.request('POST', `/api/v1/servers/${id}/backups`, { token: owner.token, body: {} });
const rename = (name: string) => p.request('PATCH', `/api/v1/servers/${serverId}`, { token: owner.token, body: { name } });

/** Runs `fn` with a live serverActivity subscription of `token`'s user, once an entry came through it. */
async function withFeed(token: string, fn: (feed: Sub) => Promise<void>, query = FEED): Promise<void> {
  const ws = gqlWsClient(p.url, token);
  try {
    const feed = subscribe(ws, query, { id: serverId });
    await until(async () => ((await rename(`live ${Math.random()}`)).status === 200 && feed.items.length > 0) || null, 10_000, 'an entry on the subscription');
    await fn(feed);
  } finally {
    await ws.dispose();
  }
}

test.each([
  ['its activity.read key is taken away', (userId: string) => p.request('PATCH', `/api/v1/servers/${serverId}/subusers/${userId}`, { token: owner.token, body: { permissions: ['websocket.connect'] } })],
  ['it is removed as a subuser', (userId: string) => p.request('DELETE', `/api/v1/servers/${serverId}/subusers/${userId}`, { token: owner.token })],
])('a subscriber whose %s stops getting entries: the subscription ends', async (_what, revoke) => {
  // the subscription was checked once at its start and went on receiving the server's entries
  const friend = await p.newUser(`friend ${Math.random()}`);
  expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['activity.read'] } })).status).toBe(201);
  await withFeed(friend.token, async (feed) => {
    expect([200, 204]).toContain((await revoke(friend.user.id)).status);
    await until(() => feed.done || null, 5_000, 'the subscription to end');
    expect(feed.errors.map((e: any) => e.extensions?.code)).toEqual(['FORBIDDEN']);
    const seen = feed.items.length;
    expect((await rename('after')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    expect(feed.items).toHaveLength(seen);
  });
});

test("a subscriber sees the address of its own entries only; the owner's come without", async () => {
  const friend = await p.newUser(`seer ${Math.random()}`);
  expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['activity.read', 'settings.rename'] } })).status).toBe(201);
  const query = 'subscription($id: ID!) { serverActivity(serverId: $id) { event actor { id } ip } }';
  await withFeed(
    friend.token,
    async (feed) => {
      expect((await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: friend.token, body: { name: 'by the friend' } })).status).toBe(200);
      await until(() => feed.items.some((i: any) => i.serverActivity.actor.id === friend.user.id) || null, 5_000, "the friend's entry");
      const seen = feed.items.map((i: any) => i.serverActivity).filter((e: any) => e.event === 'server:update');
      expect(seen.filter((e: any) => e.actor.id === owner.user.id).map((e: any) => e.ip)).toEqual(seen.filter((e: any) => e.actor.id === owner.user.id).map(() => null));
      expect(seen.find((e: any) => e.actor.id === friend.user.id).ip).toMatch(/127\.0\.0\.1|::1/);
    },
    query,
  );
  expect((await p.request('DELETE', `/api/v1/servers/${serverId}/subusers/${friend.user.id}`, { token: owner.token })).status).toBe(204);
});

test('entries of changes refused at their flush never reach subscribers', async () => {
  // the entry was announced before the change was flushed: 14 of 15 identical adds failed (422
  // ALREADY_EXISTS) and their entries, never stored, reached every subscriber all the same
  await withFeed(owner.token, async (feed) => {
    const target = await p.newUser('added twice');
    const adds = await Promise.all(Array.from({ length: 15 }, () => p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: target.email, permissions: [] } })));
    expect(adds.filter((r) => r.status === 201)).toHaveLength(1);
    // a later entry marks the end of what the adds announced
    expect((await rename('marker')).status).toBe(200);
    await until(() => feed.items.some((i) => i.serverActivity.event === 'server:update' && feed.items.indexOf(i) > 0) || null, 5_000, 'the marker');
    const log = await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:subuser.create&limit=100`, { token: owner.token });
    const stored = new Set(log.body.data.map((e: any) => e.id));
    const announced = feed.items.filter((i) => i.serverActivity.event === 'server:subuser.create').map((i) => i.serverActivity.id);
    expect(announced).toHaveLength(1);
    expect(announced.filter((id: string) => !stored.has(id))).toEqual([]);
  });
});

test('an entry written in its change\'s transaction reaches subscribers once the transaction commits', async () => {
  await withFeed(owner.token, async (feed) => {
    // a backup's record and its entry are one transaction (the node is unreachable: it then fails)
    await p.request('POST', `/api/v1/servers/${serverId}/backups`, { token: owner.token, body: {} });
    await until(() => feed.items.some((i) => i.serverActivity.event === 'server:backup.create') || null, 5_000, 'the backup entry');
  });
});

test('a date in an entry is stored as its ISO text (an API token\'s expiry was {})', async () => {
  const u = await p.newUser('expiring token');
  const made = await p.request('POST', '/api/v1/users/me/api-tokens', { token: u.token, body: { name: 'ci', expiresInDays: 1 } });
  expect(made.status).toBe(201);
  const log = await p.request('GET', '/api/v1/users/me/activity?event=user:api-token.create', { token: u.token });
  const expiresAt = log.body.data[0].properties.expiresAt;
  expect(expiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  expect(Math.abs(Date.parse(expiresAt) - (Date.now() + 86_400_000))).toBeLessThan(60_000);
});

test('a serverBackups subscriber who loses backup.read stops getting backups: the subscription ends', async () => {
  // it was checked once at its start and went on receiving the server's backups after the removal
  const friend = await p.newUser(`backup reader ${Math.random()}`);
  expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['backup.read'] } })).status).toBe(201);
  const ws = gqlWsClient(p.url, friend.token);
  try {
    const feed = subscribe(ws, BACKUPS, { id: serverId });
    // the node is unreachable: the backup fails at once, and subscribers are told so
    await until(async () => (expect((await backup()).status).toBe(422), feed.items.length > 0) || null, 10_000, 'a failed backup on the subscription');
    expect(feed.items[0].serverBackups.status).toBe('failed');
    expect((await p.request('DELETE', `/api/v1/servers/${serverId}/subusers/${friend.user.id}`, { token: owner.token })).status).toBe(204);
    await until(() => feed.done || null, 5_000, 'the subscription to end');
    expect(feed.errors.map((e: any) => e.extensions?.code)).toEqual(['FORBIDDEN']);
    const seen = feed.items.length;
    await backup();
    await new Promise((r) => setTimeout(r, 300));
    expect(feed.items).toHaveLength(seen);
  } finally {
    await ws.dispose();
  }
});

test('deleting a server completes its activity and backups subscriptions', async () => {
  const doomed = await newServer('doomed');
  const ws = gqlWsClient(p.url, owner.token);
  try {
    const backups = subscribe(ws, BACKUPS, { id: doomed });
    const activity = subscribe(ws, FEED, { id: doomed });
    await until(async () => (await backup(doomed), backups.items.length > 0 && activity.items.length > 0) || null, 10_000, 'both feeds running');
    // the node is unreachable: an administrator drops the record
    expect((await p.request('DELETE', `/api/v1/servers/${doomed}?force=true`, { token: admin })).status).toBe(204);
    await until(() => (backups.done && activity.done) || null, 5_000, 'both subscriptions to complete');
    expect([backups.errors, activity.errors]).toEqual([[], []]);
  } finally {
    await ws.dispose();
  }
});
