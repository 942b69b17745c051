/**
 * A GraphQL subscriber that stops reading is disconnected once its unsent data passes the limit
 * (close 1013 "client too slow"), so it cannot make the gateway's memory grow, while a subscriber
 * that keeps reading goes on receiving lines. Real demo server, real sockets.
 */
import WebSocket from 'ws';
import { consoleCommander } from '../support/console-commander.js';
import { blueprintsByKey, localNodeId, waitForStatus } from '../support/fixtures.js';
import { gqlWsClient, subscribe } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until, within } from '../support/wait.js';

const LIMIT = 64 * 1024;
let p: TestPlatform;
let owner: { token: string };
let serverId: string;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 3, subscriberMaxBufferedBytes: LIMIT });
  const admin = await p.admin();
  owner = await p.newUser('Owner');
  const nodeId = await localNodeId(p, admin.token);
  const demo = (await blueprintsByKey(p, owner.token))['demo-game'];
  const created = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'flood', nodeId, blueprintId: demo.id } });
  serverId = created.body.data.id;
  await waitForStatus(p, owner.token, serverId, 'offline');
  await p.request('POST', `/api/v1/servers/${serverId}/start`, { token: owner.token });
  await waitForStatus(p, owner.token, serverId, 'running');
}, 90_000);

afterAll(async () => {
  await p?.request('POST', `/api/v1/servers/${serverId}/kill`, { token: owner.token });
  await p?.stop();
}, 60_000);

/** A graphql-ws subscriber spoken by hand, so that its socket can be paused (never read). */
async function rawSubscriber(query: string, variables: Record<string, unknown>): Promise<{ ws: WebSocket; closed: Promise<number> }> {
  const ws = new WebSocket(p.url.replace(/^http/, 'ws') + '/graphql', 'graphql-transport-ws');
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${owner.token}` } }));
  await new Promise<void>((resolve) => ws.once('message', () => resolve())); // connection_ack
  ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query, variables } }));
  return { ws, closed };
}

test('a stalled GraphQL subscriber is disconnected (1013); one that reads keeps receiving', async () => {
  const Q = 'subscription($id: ID!) { consoleOutput(serverId: $id) { line } }';
  const client = gqlWsClient(p.url, owner.token);
  const live = subscribe(client, Q, { id: serverId });
  const stalled = await rawSubscriber(Q, { id: serverId });
  await until(() => p.services.console.hub.upstreamCount === 1, 10_000, 'the upstream feed');
  (stalled.ws as unknown as { _socket: { pause(): void } })._socket.pause();

  const node = consoleCommander(p, owner.token, serverId);
  // flood until the live subscriber has had 16 MB (far more than the kernel's socket buffers hold):
  // the gateway wrote the same lines to the stalled socket, however slow this machine is. The live
  // subscriber sets the pace: the next command goes once it has most of the last one's lines (or after
  // 2 s: the node may drop some), so that it is never far behind. It reads in this same process, and
  // a flood sent faster than a loaded process reads it made it a slow client too (closed with 1013).
  const flooded = 4_000;
  const deadline = Date.now() + 75_000;
  while (live.items.length < flooded && !live.done && Date.now() < deadline) {
    const before = live.items.length;
    await node.send('spam 250 4000'); // about 1 MB of output
    await until(() => live.items.length >= before + 200 || live.done, 2_000).catch(() => undefined);
  }
  expect(live.errors).toEqual([]);
  expect(live.items.length).toBeGreaterThanOrEqual(flooded);
  (stalled.ws as unknown as { _socket: { resume(): void } })._socket.resume();
  const code = await within(stalled.closed, 20_000, -1);
  expect(code).toBe(1013);

  await node.send('say still-flowing');
  await until(() => live.items.some((d) => String(d.consoleOutput.line).endsWith('[Server] still-flowing')), 20_000, 'the live subscriber to get the line after the flood');
  expect(live.errors).toEqual([]);
  live.stop();
  await client.dispose();
  node.close();
}, 130_000);
