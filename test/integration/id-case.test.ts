/**
 * A UUID is one id in either case. REST and GraphQL take a server id spelled in upper case as the same
 * server, so everything keyed by it hears the same id: a revocation made through either spelling ends
 * the subuser's subscriptions and console socket (CONTRACT §9), and an activity entry made through
 * either reaches the feed opened with either.
 */
import type { Client } from 'graphql-ws';
import { ConsoleClient } from '../support/console-client.js';
import { createLocalDemoServer } from '../support/fixtures.js';
import { subscribe, trackedClients } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';
import { gql } from '../graphql/gql.js';

let p: TestPlatform;
let owner: { token: string };
let serverId: string;
const clients = trackedClients();

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0 });
  const admin = (await p.admin()).token;
  owner = await p.newUser('Owner');
  serverId = await createLocalDemoServer(p, admin, owner.token, 'upper');
}, 90_000);

afterAll(async () => {
  await clients.disposeAll();
  await p?.stop();
}, 60_000);

const open = (token: string): Client => clients.open(p.url, token);

test('REST accepts the upper-case spelling of a server id as the same server', async () => {
  const r = await p.request('GET', `/api/v1/servers/${serverId.toUpperCase()}`, { token: owner.token });
  expect(r.status).toBe(200);
  expect(r.body.data.id).toBe(serverId);
});

test('removing a subuser through the upper-case server id ends their console subscription (CONTRACT §9 revocation)', async () => {
  const friend = await p.newUser('Friend');
  expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['websocket.connect'] } })).status).toBe(201);
  const sub = subscribe(open(friend.token), 'subscription($id: ID!) { consoleOutput(serverId: $id) { line } }', { id: serverId });
  await until(() => p.services.console.hub.subscriberCount(serverId) >= 1, 10_000, 'the subscription to start');
  const del = await p.request('DELETE', `/api/v1/servers/${serverId.toUpperCase()}/subusers/${friend.user.id}`, { token: owner.token });
  expect(del.status).toBe(204);
  // the REST side already refuses them
  expect((await p.request('GET', `/api/v1/servers/${serverId}`, { token: friend.token })).status).toBe(404);
  await until(() => sub.done || null, 5_000, 'the subscription to end').catch(() => undefined);
  expect({ done: sub.done, codes: sub.errors.map((e: any) => e.extensions?.code) }).toEqual({ done: true, codes: ['FORBIDDEN'] });
}, 30_000);

test('a subscriber of serverActivity gets an entry made through the upper-case server id', async () => {
  const sub = subscribe(open(owner.token), 'subscription($id: ID!) { serverActivity(serverId: $id) { event } }', { id: serverId });
  // a first entry through the canonical id shows the feed is live
  expect((await p.request('POST', `/api/v1/servers/${serverId}/files/directory`, { token: owner.token, body: { path: 'lower' } })).status).toBe(201);
  await until(() => sub.items.length >= 1 || null, 10_000, 'the first entry');
  expect((await p.request('POST', `/api/v1/servers/${serverId.toUpperCase()}/files/directory`, { token: owner.token, body: { path: 'upper' } })).status).toBe(201);
  // REST lists both entries
  const listed = await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:file`, { token: owner.token });
  expect(listed.body.data.filter((e: any) => e.event === 'server:file.create-directory')).toHaveLength(2);
  await until(() => sub.items.length >= 2 || null, 5_000, 'the second entry').catch(() => undefined);
  expect(sub.items.map((d) => d.serverActivity.event)).toEqual(['server:file.create-directory', 'server:file.create-directory']);
}, 30_000);

test('a serverActivity subscription opened with the upper-case id gets the server\'s entries', async () => {
  const sub = subscribe(open(owner.token), 'subscription($id: ID!) { serverActivity(serverId: $id) { event serverId } }', { id: serverId.toUpperCase() });
  await new Promise((r) => setTimeout(r, 500));
  expect(sub.errors).toEqual([]);
  expect((await p.request('POST', `/api/v1/servers/${serverId}/files/directory`, { token: owner.token, body: { path: 'lower-2' } })).status).toBe(201);
  await until(() => sub.items.length >= 1 || null, 5_000, 'the entry').catch(() => undefined);
  expect(sub.items.map((d) => d.serverActivity.event)).toEqual(['server:file.create-directory']);
}, 30_000);

test('a subuser removed through the upper-case id (GraphQL deleteSubuser) gets no console lines afterwards', async () => {
  const friend = await p.newUser('Friend2');
  expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['websocket.connect'] } })).status).toBe(201);
  const theirs = subscribe(open(friend.token), 'subscription($id: ID!) { consoleOutput(serverId: $id) { line } }', { id: serverId });
  const mine = subscribe(open(owner.token), 'subscription($id: ID!) { consoleOutput(serverId: $id) { line } }', { id: serverId });
  await until(() => p.services.console.hub.subscriberCount(serverId) >= 2, 10_000, 'both subscriptions to start');
  const del = await gql(p, 'mutation($s: ID!, $u: ID!) { deleteSubuser(serverId: $s, userId: $u) }', { s: serverId.toUpperCase(), u: friend.user.id }, { token: owner.token });
  expect(del.body).toEqual({ data: { deleteSubuser: true } });
  await new Promise((r) => setTimeout(r, 1500));
  const seenAtRemoval = theirs.items.length;
  expect((await p.request('POST', `/api/v1/servers/${serverId}/start`, { token: owner.token })).status).toBe(200);
  await until(() => mine.items.some((d) => /Done \(/.test(d.consoleOutput.line)) || null, 30_000, 'the owner to see the server start');
  await p.request('POST', `/api/v1/servers/${serverId}/kill`, { token: owner.token });
  const after = theirs.items.slice(seenAtRemoval).map((d) => d.consoleOutput.line);
  expect(after).toEqual([]);
}, 60_000);

test('removing a subuser through the upper-case id closes their node console socket (4403), as through the canonical id', async () => {
  const friend = await p.newUser('Friend3');
  expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['websocket.connect'] } })).status).toBe(201);
  const t = await p.request('GET', `/api/v1/servers/${serverId}/console-token`, { token: friend.token });
  expect(t.status).toBe(200);
  const socket = await ConsoleClient.connect(t.body.data.socket, t.body.data.token);
  try {
    expect((await p.request('DELETE', `/api/v1/servers/${serverId.toUpperCase()}/subusers/${friend.user.id}`, { token: owner.token })).status).toBe(204);
    await until(() => socket.closeCode !== null || null, 5_000, 'the socket to close').catch(() => undefined);
    expect(socket.closeCode).toBe(4403);
  } finally {
    socket.ws.terminate();
  }
}, 30_000);

test('a subuser added through the upper-case server id reaches the serverActivity subscribers (as GET /activity lists it)', async () => {
  const sub = subscribe(open(owner.token), 'subscription($id: ID!) { serverActivity(serverId: $id) { event } }', { id: serverId });
  // a folder a second until the feed delivers one: an entry recorded before the subscription is attached reaches no one
  let made = 0;
  await until(
    async () => {
      if (sub.items.length) return true;
      expect((await p.request('POST', `/api/v1/servers/${serverId}/files/directory`, { token: owner.token, body: { path: `live-check-${++made}` } })).status).toBe(201);
      return null;
    },
    15_000,
    'the feed to be live',
    1_000,
  );
  const friend = await p.newUser('Friend5');
  expect((await p.request('POST', `/api/v1/servers/${serverId.toUpperCase()}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['file.read'] } })).status).toBe(201);
  const listed = await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:subuser.create`, { token: owner.token });
  expect(listed.body.data.some((e: any) => e.properties.userId === friend.user.id)).toBe(true);
  await until(() => sub.items.some((d) => d.serverActivity.event === 'server:subuser.create') || null, 5_000, 'the entry').catch(() => undefined);
  expect(sub.items.map((d) => d.serverActivity.event)).toContain('server:subuser.create');
}, 30_000);
