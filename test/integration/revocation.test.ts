/**
 * Revocation reaches live connections: a subuser who loses `websocket.connect` (or is removed) has
 * their GraphQL console subscription ended with FORBIDDEN and their node console socket closed
 * (4403) within a second; their console token issued before the change is refused afterwards.
 */
import { ConsoleClient } from '../support/console-client.js';
import { createLocalDemoServer } from '../support/fixtures.js';
import { subscribe, trackedClients } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let owner: { token: string };
let friend: { token: string; user: any; email: string };
let serverId: string;
const clients = trackedClients();
const sockets: ConsoleClient[] = [];

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0 });
  const admin = await p.admin();
  owner = await p.newUser('Owner');
  friend = await p.newUser('Friend');
  serverId = await createLocalDemoServer(p, admin.token, owner.token, 'shared');
}, 60_000);

afterAll(async () => {
  await clients.disposeAll();
  for (const s of sockets) s.ws.terminate();
  await p?.stop();
}, 60_000);

async function share(permissions: string[]): Promise<void> {
  const r = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions } });
  expect(r.status).toBe(201);
}

async function openConsole(): Promise<{ socket: ConsoleClient; token: string; url: string }> {
  const t = await p.request('GET', `/api/v1/servers/${serverId}/console-token`, { token: friend.token });
  expect(t.status).toBe(200);
  const socket = await ConsoleClient.connect(t.body.data.socket, t.body.data.token);
  sockets.push(socket);
  return { socket, token: t.body.data.token, url: t.body.data.socket };
}

test('removing keys ends the live subscription and closes the console socket within a second', async () => {
  await share(['websocket.connect', 'control.console']);
  const c = clients.open(p.url, friend.token);
  const sub = subscribe(c, 'subscription($id: ID!) { consoleOutput(serverId: $id) { line } }', { id: serverId });
  await until(() => p.services.console.hub.subscriberCount(serverId) === 1, 10_000, 'the subscription to start');
  const { socket, token, url } = await openConsole();

  const r = await p.request('PATCH', `/api/v1/servers/${serverId}/subusers/${friend.user.id}`, { token: owner.token, body: { permissions: ['control.console'] } });
  expect(r.status).toBe(200);
  await until(() => sub.done && socket.closeCode !== null, 5_000, 'the subscription and socket to end');
  expect(sub.errors.map((e: any) => e.extensions?.code)).toContain('FORBIDDEN');
  expect(socket.closeCode).toBe(4403);

  // the token issued before the change no longer opens a socket
  const again = await ConsoleClient.open(url);
  sockets.push(again);
  again.send({ type: 'auth', token });
  const err = await again.waitFor((m) => m.type === 'error');
  expect(err.data.code).toBe('TOKEN_REVOKED');
  // and no new token is issued without websocket.connect
  expect((await p.request('GET', `/api/v1/servers/${serverId}/console-token`, { token: friend.token })).status).toBe(403);
});

test('a new token after regaining the key works; deleting the subuser closes it again', async () => {
  const r = await p.request('PATCH', `/api/v1/servers/${serverId}/subusers/${friend.user.id}`, { token: owner.token, body: { permissions: ['websocket.connect'] } });
  expect(r.status).toBe(200);
  const { socket } = await openConsole();
  // commands need control.console, which the token no longer carries
  socket.send({ type: 'command', data: 'help' });
  const denied = await socket.waitFor((m) => m.type === 'error');
  expect(denied.data.code).toBe('FORBIDDEN');
  expect((await p.request('DELETE', `/api/v1/servers/${serverId}/subusers/${friend.user.id}`, { token: owner.token })).status).toBe(204);
  await until(() => socket.closeCode !== null, 5_000, 'the socket to close');
  expect(socket.closeCode).toBe(4403);
});

test('commands and power actions typed on the node console channel reach the activity log', async () => {
  const r = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['websocket.connect', 'control.console', 'control.start', 'activity.read'] } });
  expect(r.status).toBe(201);
  const { socket } = await openConsole();
  socket.send({ type: 'power', data: 'start' });
  await socket.waitFor((m) => m.type === 'status' && m.data.status === 'running', 30_000);
  socket.send({ type: 'command', data: 'say from the console' });
  await socket.waitFor((m) => m.type === 'console_output' && String(m.data.line).includes('from the console'));
  let entries: any[] = [];
  await until(async () => {
    entries = (await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:&limit=100`, { token: friend.token })).body.data;
    return entries.some((e) => e.event === 'server:console.command');
  }, 10_000, 'the command in the activity log');
  const command = entries.find((e) => e.event === 'server:console.command');
  expect(command).toMatchObject({ serverId, actor: { id: friend.user.id, email: friend.email }, properties: { command: 'say from the console', via: 'console' } });
  expect(command.ip).toMatch(/127\.0\.0\.1|::1/);
  expect(entries.find((e) => e.event === 'server:power.start')).toMatchObject({ actor: { id: friend.user.id } });
  await p.request('POST', `/api/v1/servers/${serverId}/kill`, { token: owner.token });
});
