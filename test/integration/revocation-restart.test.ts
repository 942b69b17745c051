/**
 * A console token issued before a subuser lost their keys stays refused after the node agent
 * restarts (tokens live up to 10 minutes; revocations were kept in the agent's memory only).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startAgent, type RunningAgent } from '../../src/agent/index.js';
import { Node } from '../../src/entities/Node.js';
import { ConsoleClient } from '../support/console-client.js';
import { blueprintsByKey, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform | null = null;
let agent: RunningAgent | null = null;
const agentDir = mkdtempSync(path.join(os.tmpdir(), 'hostpanel-agent-restart-'));

afterAll(async () => {
  await agent?.close();
  await p?.stop();
  rmSync(agentDir, { recursive: true, force: true });
}, 60_000);

/** The node's first answer to `token` on a new console socket. */
async function authAnswer(url: string, token: string): Promise<{ type: string; data?: any }> {
  const c = await ConsoleClient.open(url);
  try {
    c.send({ type: 'auth', token });
    return await c.waitFor((m) => m.type === 'error' || m.type === 'auth_success');
  } finally {
    c.close();
  }
}

test('a console token issued before its holder was removed from the server stays refused after the agent restarts', async () => {
  p = await startTestPlatform();
  const platform = p;
  const admin = await platform.admin();
  const owner = await platform.newUser('Owner');
  const friend = await platform.newUser('Friend');
  const reg = await platform.request('POST', '/api/v1/nodes', { token: admin.token, body: { name: 'restarting', fqdn: '127.0.0.1', port: 5000, memory: 4096, disk: 8192 } });
  const nodeId: string = reg.body.data.id;
  const start = async () => {
    agent = await startAgent({ panelUrl: platform.url, nodeId, nodeToken: reg.body.data.token, port: 0, sftpPort: 0, host: '127.0.0.1', dataDir: agentDir, stopGraceSeconds: 2 });
    await platform.orm.em.fork().nativeUpdate(Node, { id: nodeId }, { port: agent.port });
    return `ws://127.0.0.1:${agent.port}/console`;
  };
  await start();
  const bps = await blueprintsByKey(platform, admin.token);
  const created = await platform.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 's', nodeId, blueprintId: bps['shell-command'].id, memory: 128, cpu: 50, disk: 256, variables: { COMMAND: 'exec sleep 600' } } });
  const id: string = created.body.data.id;
  await waitForStatus(platform, owner.token, id, 'offline');
  const shared = await platform.request('POST', `/api/v1/servers/${id}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['websocket.connect', 'control.console', 'control.start'] } });
  expect(shared.status).toBe(201);
  const ticket = (await platform.request('GET', `/api/v1/servers/${id}/console-token`, { token: friend.token })).body.data;
  const kept = (await platform.request('GET', `/api/v1/servers/${id}/console-token`, { token: owner.token })).body.data;

  expect((await platform.request('DELETE', `/api/v1/servers/${id}/subusers/${friend.user.id}`, { token: owner.token })).status).toBe(204);
  expect((await authAnswer(ticket.socket, ticket.token)).data?.code).toBe('TOKEN_REVOKED');

  await agent!.close({ stopServers: false });
  const url = await start();
  expect((await authAnswer(url, ticket.token)).data?.code).toBe('TOKEN_REVOKED');
  // the owner's token, issued before the restart too, is not touched
  expect((await authAnswer(url, kept.token)).type).toBe('auth_success');
}, 120_000);
