/**
 * A panel restart loses nothing: state changes that happen on a node while the panel is down are
 * queued by the agent and reach the database once the panel is back. A node that comes back gets
 * the servers created while it was away.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RunningAgent } from '../../src/agent/index.js';
import { Node } from '../../src/entities/Node.js';
import { ConsoleClient } from '../support/console-client.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { startRemoteNode } from '../support/remote-node.js';
import { freePort, until } from '../support/wait.js';



let first: TestPlatform | null = null;
let second: TestPlatform | null = null;
let agent: RunningAgent | null = null;
const agentDir = mkdtempSync(path.join(os.tmpdir(), 'hostpanel-agent-'));

afterAll(async () => {
  await agent?.close();
  await second?.stop();
  await first?.stop();
  rmSync(agentDir, { recursive: true, force: true });
}, 60_000);

test('events queued while the panel is down are applied after it restarts', async () => {
  const port = await freePort();
  const env = { MASTER_KEY: randomBytes(32).toString('base64') };
  first = await startTestPlatform({ port }, env);
  const admin = await first.admin();
  const remote = await startRemoteNode(first, admin.token, 'remote', agentDir);
  agent = remote.agent;
  const nodeId = remote.nodeId;

  const bps = await first.request('GET', '/api/v1/blueprints', { token: admin.token });
  const demo = bps.body.data.find((b: any) => b.key === 'demo-game');
  const created = await first.request('POST', '/api/v1/servers', {
    token: admin.token,
    body: { name: 'survivor', nodeId, blueprintId: demo.id, memory: 256, cpu: 100, disk: 512 },
  });
  const id = created.body.data.id;
  const status = async (p: TestPlatform) => (await p.request('GET', `/api/v1/servers/${id}`, { token: admin.token })).body.data.status;
  await until(async () => (await status(first!)) === 'offline');
  await first.request('POST', `/api/v1/servers/${id}/start`, { token: admin.token });
  await until(async () => (await status(first!)) === 'running');
  const ticket = (await first.request('GET', `/api/v1/servers/${id}/console-token`, { token: admin.token })).body.data;

  // the panel goes down (its database stays); the server is killed meanwhile through the console
  const dbName = first.dbName;
  await first.close();
  const c = await ConsoleClient.connect(ticket.socket, ticket.token);
  c.send({ type: 'power', data: 'kill' });
  await c.waitFor((m) => m.type === 'status' && m.data.status === 'offline');
  c.close();

  second = await startTestPlatform({ port }, env, { database: dbName });
  const admin2 = await second.admin();
  await until(async () => (await second!.request('GET', `/api/v1/servers/${id}`, { token: admin2.token })).body.data.status === 'offline', 30_000);
  const record = (await second.request('GET', `/api/v1/servers/${id}`, { token: admin2.token })).body.data;
  expect(record.lastStopReason).toBe('killed');
}, 90_000);

test('a server created while its node could not be reached is pushed to it when the node is back', async () => {
  const p = await startTestPlatform();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hostpanel-agent-'));
  let a: RunningAgent | null = null;
  try {
    const admin = await p.admin();
    const remote = await startRemoteNode(p, admin.token, 'flaky', dir, { heartbeatSeconds: 1 });
    a = remote.agent;
    const nodeId = remote.nodeId;
    const em = p.orm.em.fork();
    await until(async () => (await p.request('GET', `/api/v1/nodes/${nodeId}`, { token: admin.token })).body.data.status === 'online');

    // the panel cannot reach the agent (wrong address): the push of the new server fails
    await em.nativeUpdate(Node, { id: nodeId }, { port: await freePort() });
    const bps = await p.request('GET', '/api/v1/blueprints', { token: admin.token });
    const demo = bps.body.data.find((b: any) => b.key === 'demo-game');
    const created = await p.request('POST', '/api/v1/servers', {
      token: admin.token,
      body: { name: 'late', nodeId, blueprintId: demo.id, memory: 256, cpu: 100, disk: 512 },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    expect((await p.request('GET', `/api/v1/nodes/${nodeId}`, { token: admin.token })).body.data.status).toBe('offline');

    // the address is right again: the next heartbeat brings the node back and the server reaches it
    await em.nativeUpdate(Node, { id: nodeId }, { port: a.port });
    await until(async () => (await p.request('GET', `/api/v1/servers/${id}`, { token: admin.token })).body.data.status === 'offline', 20_000);
    expect((await p.request('POST', `/api/v1/servers/${id}/start`, { token: admin.token })).status).toBe(200);
    await until(async () => (await p.request('GET', `/api/v1/servers/${id}`, { token: admin.token })).body.data.status === 'running', 20_000);
  } finally {
    await a?.close();
    await p.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}, 90_000);
