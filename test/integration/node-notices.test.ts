/**
 * A node the panel cannot reach when rights are taken away (a partition: its agent runs, its sockets
 * stay open, its heartbeats still arrive) is told after a heartbeat: the revocations are kept in
 * `node_notices` until the node takes them (src/nodes/node-notices.ts). What the change took away
 * closes then; what was granted after it (an SFTP login with the new password) stays; a node that
 * still cannot be reached is not tried at every heartbeat.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Node } from '../../src/entities/Node.js';
import { RETRY_MIN_MS } from '../../src/nodes/node-notices.js';
import { ConsoleClient } from '../support/console-client.js';
import { blueprintsByKey, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { startRemoteNode } from '../support/remote-node.js';
import { connectSftp, type SftpConnection } from '../support/sftp-client.js';
import { sleep, until } from '../support/wait.js';

jest.setTimeout(120_000);

let p: TestPlatform;
let dir: string;
let stopAgent: () => Promise<void>;
let nodeId: string;
let agentPort: number;
const opened: { end(): void }[] = [];

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
  for (const o of opened) o.end();
  await stopAgent?.();
  await p?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** Where the panel is sent while the node "cannot be reached": a port that takes each connection and drops it, counting them. */
async function deadEnd(): Promise<{ port: number; calls: () => number; close(): Promise<void> }> {
  let calls = 0;
  const server = net.createServer((socket) => {
    calls++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { port: (server.address() as net.AddressInfo).port, calls: () => calls, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
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
  const sftpPort = await until(async () => (await p.request('GET', `/api/v1/servers/${serverId}/sftp`, { token: owner.token })).body.data?.port ?? null, 20_000, 'the node to report its SFTP server');

  // two people with a console socket open on the node: one whose password an administrator sets (with an SFTP session too), one the owner removes
  const reset = await p.newUser('Reset');
  const removed = await p.newUser('Removed');
  const sockets: { socket: ConsoleClient; token: string; url: string }[] = [];
  for (const u of [reset, removed]) {
    const share = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: u.email, permissions: ['websocket.connect', 'file.sftp', 'file.read'] } });
    expect(share.status).toBe(201);
    const t = await p.request('GET', `/api/v1/servers/${serverId}/console-token`, { token: u.token });
    expect(t.status).toBe(200);
    const socket = await ConsoleClient.connect(t.body.data.socket, t.body.data.token);
    opened.push({ end: () => socket.ws.terminate() });
    sockets.push({ socket, token: t.body.data.token, url: t.body.data.socket });
  }
  const sftp = (password: string): Promise<SftpConnection> => connectSftp({ port: sftpPort, username: `${reset.email}.${serverId.slice(0, 8)}`, password });
  const track = (c: SftpConnection) => {
    opened.push(c);
    let closed = false;
    void c.closed.then(() => (closed = true));
    return () => closed;
  };
  const oldSessionClosed = track(await sftp(reset.password));

  // the panel loses its way to the node (the sockets, made directly, stay open; heartbeats still arrive)
  const dead = await deadEnd();
  try {
    await p.orm.em.fork().nativeUpdate(Node, { id: nodeId }, { port: dead.port });
    expect((await p.request('PATCH', `/api/v1/admin/users/${reset.user.id}`, { token: admin.token, body: { password: 'a-new-password-9' } })).status).toBe(200);
    expect((await p.request('DELETE', `/api/v1/servers/${serverId}/subusers/${removed.user.id}`, { token: owner.token })).status).toBe(204);
    await until(async () => (await kept()) === 2 || null, 10_000, 'the two revocations to be kept for the node');
    // after the change, on the node that has not heard of it: a login with the new password (the node asks the panel)
    const newSessionClosed = track(await sftp('a-new-password-9'));
    expect(sockets.map((s) => s.socket.closeCode)).toEqual([null, null]);
    expect(oldSessionClosed()).toBe(false);

    // heartbeats every second: a node that cannot be reached is tried once, then after RETRY_MIN_MS (not at each of them)
    const before = dead.calls();
    await sleep(RETRY_MIN_MS - 1_500);
    expect(dead.calls() - before).toBeLessThanOrEqual(1);

    // the way back: a heartbeat after the wait hands the node what it missed
    await p.orm.em.fork().nativeUpdate(Node, { id: nodeId }, { port: agentPort });
    await until(() => sockets.every((s) => s.socket.closeCode !== null) || null, 30_000, 'both console sockets to close');
    expect(sockets.map((s) => s.socket.closeCode)).toEqual([4403, 4403]);
    for (const s of sockets) {
      const again = await ConsoleClient.open(s.url);
      opened.push({ end: () => again.ws.terminate() });
      again.send({ type: 'auth', token: s.token });
      expect((await again.waitFor((m) => m.type === 'error')).data.code).toBe('TOKEN_REVOKED');
    }
    await until(() => oldSessionClosed() || null, 10_000, 'the SFTP session of the old password to end');
    await until(async () => (await kept()) === 0 || null, 10_000, 'the kept revocations to be deleted once taken');
    // the session granted after the change stands
    expect(newSessionClosed()).toBe(false);
  } finally {
    await dead.close();
  }
});
