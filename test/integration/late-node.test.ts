/**
 * A node that answers too late: the panel tells the caller NODE_UNAVAILABLE after its wait, and the
 * node, once it runs again, carries out what it was sent. A backup the panel recorded as failed then
 * must not stay on the node (it counts toward no limit and nobody sees it).
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { hasAgentBuild } from '../agent/agent-process.js';
import { expectError } from '../support/fixtures.js';
import { platformWithNodeProcess } from '../support/remote-node.js';
import { until } from '../support/wait.js';

const maybe = hasAgentBuild ? test : test.skip;

const startPlatform = platformWithNodeProcess();

maybe('a backup the node starts after the panel gave up on it is deleted on the node; its record stays failed', async () => {
  const { p, token, nodeId, agent } = await startPlatform({}, 'late', 0, { HEARTBEAT_SECONDS: '1' });
  const admin = { token };
  const demo = (await p.request('GET', '/api/v1/blueprints', { token: admin.token })).body.data.find((b: any) => b.key === 'demo-game');
  const created = await p.request('POST', '/api/v1/servers', { token: admin.token, body: { name: 'late', nodeId, blueprintId: demo.id, memory: 256, cpu: 100, disk: 512 } });
  const id: string = created.body.data.id;
  const status = async () => (await p!.request('GET', `/api/v1/servers/${id}`, { token: admin.token })).body.data.status;
  await until(async () => (await status()) === 'offline', 30_000, 'the install');
  const B = (sub = '') => `/api/v1/servers/${id}/backups${sub}`;

  agent.child.kill('SIGSTOP');
  const late = await p.request('POST', B(), { token: admin.token, body: { name: 'late' } });
  expectError(late, 422, 'NODE_UNAVAILABLE');
  agent.child.kill('SIGCONT');
  const failed = (await p.request('GET', B(), { token: admin.token })).body.data.find((b: any) => b.name === 'late');
  expect(failed.status).toBe('failed');

  // the node takes its requests in order: once a later backup is done, it has dealt with the late one
  await until(async () => (await p!.request('GET', `/api/v1/nodes/${nodeId}`, { token: admin.token })).body.data.status === 'online', 30_000, 'the node online');
  const next = await p.request('POST', B(), { token: admin.token, body: { name: 'next' } });
  expect(next.status).toBe(201);
  await until(async () => (await p!.request('GET', B(`/${next.body.data.id}`), { token: admin.token })).body.data.status === 'completed', 30_000, 'the next backup');
  const manifests = path.join(agent.dataDir, 'agent', 'backups', id, 'manifests');
  const held = () => (existsSync(manifests) ? readdirSync(manifests) : []);
  await until(() => !held().includes(`${failed.id}.json`) || null, 20_000, `the node to drop the backup it made late (it holds ${held().join(', ')})`);
  expect(held()).toEqual([`${next.body.data.id}.json`]);
  expect((await p.request('GET', B(`/${failed.id}`), { token: admin.token })).body.data.status).toBe('failed');

  // a restore is recorded before the node is asked (its report of the end may come before its
  // answer); when the node does not answer, the server is offline again, not left restoring
  agent.child.kill('SIGSTOP');
  expectError(await p.request('POST', B(`/${next.body.data.id}/restore`), { token: admin.token, body: {} }), 422, 'NODE_UNAVAILABLE');
  expect(await status()).toBe('offline');
  agent.child.kill('SIGCONT');
}, 120_000);
