/**
 * The GraphQL sockets share one budget of unsent data: with several stalled subscribers, each is
 * closed (1013) once it holds more than its share of the total, long before its own (much larger)
 * limit, so that many slow viewers together cannot take the gateway's memory. Real demo server, real
 * sockets.
 */
import WebSocket from 'ws';
import { consoleCommander } from '../support/console-commander.js';
import { blueprintsByKey, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { within, sleep } from '../support/wait.js';

const STALLED = 4;
let p: TestPlatform;
let owner: { token: string };
let serverId: string;

beforeAll(async () => {
  // each socket alone may hold 256 MiB; all of them together 1 MiB
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 3, subscriberMaxBufferedBytes: 256 * 1024 * 1024, subscriberSendBudgetBytes: 1024 * 1024 });
  const admin = await p.admin();
  owner = await p.newUser('Owner');
  const nodeId = await localNodeId(p, admin.token);
  const demo = (await blueprintsByKey(p, owner.token))['demo-game'];
  const created = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'budget', nodeId, blueprintId: demo.id } });
  serverId = created.body.data.id;
  await waitForStatus(p, owner.token, serverId, 'offline');
  await p.request('POST', `/api/v1/servers/${serverId}/start`, { token: owner.token });
  await waitForStatus(p, owner.token, serverId, 'running');
}, 90_000);

afterAll(async () => {
  await p?.request('POST', `/api/v1/servers/${serverId}/kill`, { token: owner.token });
  await p?.stop();
}, 60_000);

async function stalledSubscriber(): Promise<{ closed: Promise<number>; resume: () => void }> {
  const ws = new WebSocket(p.url.replace(/^http/, 'ws') + '/graphql', 'graphql-transport-ws');
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${owner.token}` } }));
  await new Promise<void>((resolve) => ws.once('message', () => resolve()));
  ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription($id: ID!) { consoleOutput(serverId: $id) { line } }', variables: { id: serverId } } }));
  await sleep(200);
  (ws as unknown as { _socket: { pause(): void } })._socket.pause();
  return { closed, resume: () => (ws as unknown as { _socket: { resume(): void } })._socket.resume() };
}

test('stalled subscribers are closed at their share of the shared budget', async () => {
  const closed = await Promise.all(Array.from({ length: STALLED }, () => stalledSubscriber()));
  const node = consoleCommander(p, owner.token, serverId);
  // about 40 MB of output to each, far below 256 MiB and past what the kernel's buffers of a loopback
  // connection can take (Linux lets a receive buffer grow to tcp_rmem's maximum, 32 MiB here, and a
  // send buffer to 4 MiB): with 12 MB, a busy machine's kernel once took it all, and no socket held
  // anything unsent
  for (let i = 0; i < 40; i++) {
    await node.send('spam 250 4000');
    await sleep(150);
  }
  // reading again, each finds the close frame behind what was sent before it
  for (const c of closed) c.resume();
  const codes = await Promise.all(closed.map((c) => within(c.closed, 20_000, -1)));
  expect(codes).toEqual(Array(STALLED).fill(1013));
  node.close();
}, 90_000);
