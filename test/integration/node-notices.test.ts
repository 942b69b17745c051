/**
 * A node the panel cannot reach when rights are taken away (a partition: its agent runs, its sockets
 * stay open, its heartbeats still arrive) is told after its next heartbeat: the revocations are kept
 * in `node_notices` until the node takes them (src/nodes/node-notices.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Node } from '../../src/entities/Node.js';
import { ConsoleClient } from '../support/console-client.js';
import { blueprintsByKey, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { startRemoteNode } from '../support/remote-node.js';
import { until } from '../support/wait.js';

jest.setTimeout(90_000);

let p: TestPlatform;
let dir: string;
let stopAgent: () => Promise<void>;
let nodeId: string;
let agentPort: number;
const opened: ConsoleClient[] = [];

beforeAll(async () => {
  p = await startTestPlatform({ rateLimits: { general: 100_000, auth: 100_000, admin: 100_000 } });
  dir = mkdtempSync(path.join(os.tmpdir(), 'node-notices-'));
  const admin = await p.admin();
  const remote = await startRemoteNode(p, admin.token, 'far', dir, { heartbeatSeconds: 1 });
  nodeId = remote.nodeId;
  agentPort = remote.agent.port;
  stopAgent = () => remote.agent.close({ stopServers: true });
}, 90_000);

afterAll(async () => {
  for (const c of opened) c.ws.terminate();
  await stopAgent?.();
  await p?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

const kept = async () => Number((await p.orm.em.fork().getConnection().execute('select count(*)::int as n from node_notices where node_id = ?', [nodeId]))[0].n);

test('an account change and a subuser removal made while the node cannot be reached close the sockets there once it heartbeats again', async () => {
  const admin = await p.admin();
  const owner = await p.newUser('Owner');
  const bps = await blueprintsByKey(p, owner.token);
  const created = await p.request('POST', '/api/v1/servers', {
    token: owner.token,
    body: { name: 'far', nodeId, blueprintId: bps['shell-command'].id, memory: 64, cpu: 10, disk: 128, variables: { COMMAND: 'echo ready; exec sleep 600' } },
  });
  expect(created.status).toBe(201);
  const serverId: string = created.body.data.id;
  await waitForStatus(p, owner.token, serverId, 'offline');

  // two people with a console socket open on the node: one whose account an administrator resets, one the owner removes
  const reset = await p.newUser('Reset');
  const removed = await p.newUser('Removed');
  const sockets: { socket: ConsoleClient; token: string; url: string }[] = [];
  for (const u of [reset, removed]) {
    const share = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: u.email, permissions: ['websocket.connect'] } });
    expect(share.status).toBe(201);
    const t = await p.request('GET', `/api/v1/servers/${serverId}/console-token`, { token: u.token });
    expect(t.status).toBe(200);
    const socket = await ConsoleClient.connect(t.body.data.socket, t.body.data.token);
    opened.push(socket);
    sockets.push({ socket, token: t.body.data.token, url: t.body.data.socket });
  }

  // the panel loses its way to the node (the sockets, made directly, stay open)
  await p.orm.em.fork().nativeUpdate(Node, { id: nodeId }, { port: await closedPort() });
  expect((await p.request('PATCH', `/api/v1/admin/users/${reset.user.id}`, { token: admin.token, body: { password: 'a-new-password-9' } })).status).toBe(200);
  expect((await p.request('DELETE', `/api/v1/servers/${serverId}/subusers/${removed.user.id}`, { token: owner.token })).status).toBe(204);
  await until(async () => (await kept()) === 2 || null, 10_000, 'the two revocations to be kept for the node');
  expect(sockets.map((s) => s.socket.closeCode)).toEqual([null, null]);

  // the way back: the next heartbeat hands the node what it missed
  await p.orm.em.fork().nativeUpdate(Node, { id: nodeId }, { port: agentPort });
  await until(() => sockets.every((s) => s.socket.closeCode !== null) || null, 15_000, 'both console sockets to close');
  expect(sockets.map((s) => s.socket.closeCode)).toEqual([4403, 4403]);
  for (const s of sockets) {
    const again = await ConsoleClient.open(s.url);
    opened.push(again);
    again.send({ type: 'auth', token: s.token });
    expect((await again.waitFor((m) => m.type === 'error')).data.code).toBe('TOKEN_REVOKED');
  }
  await until(async () => (await kept()) === 0 || null, 10_000, 'the kept revocations to be deleted once taken');
});
