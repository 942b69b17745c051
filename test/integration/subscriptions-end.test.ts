/** Every GraphQL subscription of a server ends when the subscriber loses its key, their credential ends (token deleted, signed out) or the server is deleted (CONTRACT §9: within 1 s). */
import type { Client } from 'graphql-ws';
import { createLocalDemoServer } from '../support/fixtures.js';
import { subscribe, trackedClients, type Sub } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let admin: string;
let owner: { token: string; user: any; email: string; password: string };
let serverId: string;
const clients = trackedClients();

const SUBS: Record<string, string> = {
  consoleOutput: 'subscription($id: ID!) { consoleOutput(serverId: $id) { line } }',
  consoleBatches: 'subscription($id: ID!) { consoleBatches(serverId: $id) { skipped } }',
  serverStatus: 'subscription($id: ID!) { serverStatus(serverId: $id) { status } }',
  serverStats: 'subscription($id: ID!) { serverStats(serverId: $id) { cpu } }',
  serverActivity: 'subscription($id: ID!) { serverActivity(serverId: $id) { event } }',
  serverBackups: 'subscription($id: ID!) { serverBackups(serverId: $id) { status } }',
};

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0 });
  admin = (await p.admin()).token;
  owner = await p.newUser('Owner');
  serverId = await createLocalDemoServer(p, admin, owner.token, 'revoke');
}, 90_000);

afterAll(async () => {
  await clients.disposeAll();
  await p?.stop();
}, 60_000);

const open = (token: string): Client => clients.open(p.url, token);

function all(c: Client, id: string): Record<string, Sub> {
  return Object.fromEntries(Object.entries(SUBS).map(([k, q]) => [k, subscribe(c, q, { id })]));
}

const state = (subs: Record<string, Sub>) =>
  Object.fromEntries(Object.entries(subs).map(([k, s]) => [k, s.done ? `ended ${s.errors.map((e: any) => e.extensions?.code ?? e.code ?? e.message).join(',')}` : 'live']));

async function settle(): Promise<void> {
  await new Promise((r) => setTimeout(r, 1500));
}

test('a subuser losing keys one by one: each subscription ends with its key', async () => {
  const friend = await p.newUser('Friend');
  const keys = ['websocket.connect', 'activity.read', 'backup.read'];
  expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: keys } })).status).toBe(201);
  const subs = all(open(friend.token), serverId);
  await settle();
  expect(state(subs)).toEqual(Object.fromEntries(Object.keys(SUBS).map((k) => [k, 'live'])));

  expect((await p.request('PATCH', `/api/v1/servers/${serverId}/subusers/${friend.user.id}`, { token: owner.token, body: { permissions: ['activity.read', 'backup.read'] } })).status).toBe(200);
  await settle();
  expect(state(subs)).toEqual({
    consoleOutput: 'ended FORBIDDEN',
    consoleBatches: 'ended FORBIDDEN',
    serverStatus: 'ended FORBIDDEN',
    serverStats: 'ended FORBIDDEN',
    serverActivity: 'live',
    serverBackups: 'live',
  });
  expect((await p.request('PATCH', `/api/v1/servers/${serverId}/subusers/${friend.user.id}`, { token: owner.token, body: { permissions: ['backup.read'] } })).status).toBe(200);
  await settle();
  expect(state(subs).serverActivity).toBe('ended FORBIDDEN');
  expect(state(subs).serverBackups).toBe('live');
  expect((await p.request('DELETE', `/api/v1/servers/${serverId}/subusers/${friend.user.id}`, { token: owner.token })).status).toBe(204);
  await settle();
  expect(state(subs).serverBackups).toBe('ended FORBIDDEN');
}, 60_000);

test('removing a subuser who holds every key ends all their subscriptions at once', async () => {
  const friend = await p.newUser('Removed');
  expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['websocket.connect', 'activity.read', 'backup.read'] } })).status).toBe(201);
  const subs = all(open(friend.token), serverId);
  await settle();
  expect(Object.values(state(subs))).toEqual(Array(6).fill('live'));
  expect((await p.request('DELETE', `/api/v1/servers/${serverId}/subusers/${friend.user.id}`, { token: owner.token })).status).toBe(204);
  await settle();
  expect(state(subs)).toEqual(Object.fromEntries(Object.keys(SUBS).map((k) => [k, expect.stringMatching(/^ended/)])));
}, 60_000);

test('a revoked API token closes all its subscriptions', async () => {
  const friend = await p.newUser('Tokened');
  expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['websocket.connect', 'activity.read', 'backup.read'] } })).status).toBe(201);
  const t = await p.request('POST', '/api/v1/users/me/api-tokens', { token: friend.token, body: { name: 'probe' } });
  expect(t.status).toBe(201);
  const secret = t.body.data.token ?? t.body.data.secret;
  const subs = all(open(secret), serverId);
  await settle();
  expect(Object.values(state(subs))).toEqual(Array(6).fill('live'));
  expect((await p.request('DELETE', `/api/v1/users/me/api-tokens/${t.body.data.id}`, { token: friend.token })).status).toBe(204);
  await until(() => Object.values(subs).every((s) => s.done) || null, 8_000, 'all subscriptions to end');
}, 60_000);

test('signing out closes all subscriptions of the session', async () => {
  const friend = await p.newUser('Session');
  expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['websocket.connect', 'activity.read', 'backup.read'] } })).status).toBe(201);
  const subs = all(open(friend.token), serverId);
  await settle();
  expect(Object.values(state(subs))).toEqual(Array(6).fill('live'));
  const out = await p.request('POST', '/api/v1/auth/signout', { token: friend.token });
  expect(out.status).toBeLessThan(300);
  await until(() => Object.values(subs).every((s) => s.done) || null, 8_000, 'all subscriptions to end');
}, 60_000);

test('deleting the server ends every subscription of it', async () => {
  const doomed = await createLocalDemoServer(p, admin, owner.token, 'doomed');
  const friend = await p.newUser('Watcher');
  expect((await p.request('POST', `/api/v1/servers/${doomed}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['websocket.connect', 'activity.read', 'backup.read'] } })).status).toBe(201);
  const mine = all(open(owner.token), doomed);
  const theirs = all(open(friend.token), doomed);
  await settle();
  expect(Object.values(state(mine))).toEqual(Array(6).fill('live'));
  expect((await p.request('DELETE', `/api/v1/servers/${doomed}`, { token: owner.token })).status).toBe(204);
  await until(() => [...Object.values(mine), ...Object.values(theirs)].every((s) => s.done) || null, 8_000, 'all subscriptions to end').catch(() => undefined);
  expect({ mine: state(mine), theirs: state(theirs) }).toEqual({
    mine: expect.not.objectContaining({ consoleOutput: 'live' }),
    theirs: expect.not.objectContaining({ consoleOutput: 'live' }),
  });
  for (const s of [...Object.values(mine), ...Object.values(theirs)]) expect(s.done).toBe(true);
}, 90_000);
