/**
 * A node whose agent is not root: the panel's user learns why a server does not start, and what to
 * do, through the API (422 INVALID_STATE, details.agentCode SERVER_NOT_ISOLATED).
 */
import { hasAgentBuild, NOBODY } from '../agent/agent-process.js';
import { platformWithNodeProcess } from '../support/remote-node.js';
import { until } from '../support/wait.js';

const maybe = hasAgentBuild ? test : test.skip;

const startPlatform = platformWithNodeProcess();

maybe('starting a server on a node whose agent cannot isolate it answers 422 with the reason and what to do', async () => {
  const { p, token, nodeId } = await startPlatform({}, 'unprivileged', NOBODY);
  const admin = { token };

  const bps = await p.request('GET', '/api/v1/blueprints', { token: admin.token });
  const demo = bps.body.data.find((b: any) => b.key === 'demo-game');
  const created = await p.request('POST', '/api/v1/servers', {
    token: admin.token,
    body: { name: 'refused', nodeId, blueprintId: demo.id, memory: 256, cpu: 100, disk: 512 },
  });
  expect(created.status).toBe(201);
  const id = created.body.data.id;
  const record = async () => (await p!.request('GET', `/api/v1/servers/${id}`, { token: admin.token })).body.data;
  await until(async () => (await record()).status === 'offline', 30_000, 'the refused install to be reported');
  expect((await record()).lastStopReason).toBe('not_isolated');

  const start = await p.request('POST', `/api/v1/servers/${id}/start`, { token: admin.token });
  expect(start.status).toBe(422);
  expect(start.body.error.code).toBe('INVALID_STATE');
  expect(start.body.error.details.agentCode).toBe('SERVER_NOT_ISOLATED');
  expect(start.body.error.message).toMatch(/as root/);
  expect(start.body.error.message).toMatch(/ALLOW_UNISOLATED_SERVERS=true/);
}, 90_000);
