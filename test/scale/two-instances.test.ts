/**
 * Two real gateway instances sharing one PostgreSQL database and one Redis: one rate-limit budget,
 * one upstream console feed per server across both, and subscribers that survive the loss of the
 * instance holding the upstream. Needs REDIS_URL; without it these tests are skipped (and say so).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RunningAgent } from '../../src/agent/index.js';
import { deriveNodeKey, signRequest } from '../../src/shared/node-protocol.js';
import { ConsoleClient } from '../support/console-client.js';
import { CONSOLE_LINES, gqlWsClient, lineTexts, subscribe } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { startRemoteNode } from '../support/remote-node.js';
import { until as waitUntil, sleep } from '../support/wait.js';
import { redisOnly } from '../support/redis-only.js';

const { redisUrl: REDIS_URL, describeRedis } = redisOnly('test/scale/two-instances.test.ts', 'to share between two gateway instances');

describeRedis('two gateway instances with Redis', () => {
  let a: TestPlatform;
  let b: TestPlatform;
  let agent: RunningAgent | null = null;
  const agentDir = mkdtempSync(path.join(os.tmpdir(), 'hostpanel-agent-'));
  const masterKey = randomBytes(32).toString('base64');

  beforeAll(async () => {
    a = await startTestPlatform(
      { rateLimits: { general: 60, auth: 1000, admin: 1000 } },
      { REDIS_URL, MASTER_KEY: masterKey },
    );
    b = await startTestPlatform(
      { rateLimits: { general: 60, auth: 1000, admin: 1000 } },
      { REDIS_URL, MASTER_KEY: masterKey },
      { database: a.dbName },
    );
  }, 60_000);
  afterAll(async () => {
    await agent?.close();
    await b?.stop();
    await a?.stop();
    rmSync(agentDir, { recursive: true, force: true });
  }, 60_000);

  test('one budget across both: the 61st request of the minute is a 429 wherever it lands', async () => {
    const u = await a.newUser();
    for (let i = 0; i < 60; i++) {
      const target = i % 2 === 0 ? a : b;
      const r = await target.request('GET', '/api/v1/users/me', { token: u.token });
      expect(r.status).toBe(200);
      expect(Number(r.headers.get('x-ratelimit-remaining'))).toBe(59 - i);
    }
    const onA = await a.request('GET', '/api/v1/users/me', { token: u.token });
    const onB = await b.request('GET', '/api/v1/users/me', { token: u.token });
    expect(onA.status).toBe(429);
    expect(onB.status).toBe(429);
  });

  test('a signed node request taken by A cannot be replayed to B (the nonces are shared)', async () => {
    const admin = await a.admin();
    const node = await a.request('POST', '/api/v1/nodes', { token: admin.token, body: { name: 'replay-node', fqdn: '127.0.0.1', port: 9, memory: 1024, disk: 1024 } });
    expect(node.status).toBe(201);
    const authorization = signRequest(node.body.data.id, deriveNodeKey(node.body.data.token), 'GET', '/api/agent/v1/servers');
    expect((await a.request('GET', '/api/agent/v1/servers', { headers: { authorization } })).status).toBe(200);
    expect((await b.request('GET', '/api/agent/v1/servers', { headers: { authorization } })).status).toBe(401);
    expect((await a.request('GET', '/api/agent/v1/servers', { headers: { authorization } })).status).toBe(401);
  });

  test('a subscriber on B gets the lines of a server whose single upstream A holds; B survives A stopping', async () => {
    const admin = await a.admin();
    // a node agent of its own (not inside A), reporting to A
    const remote = await startRemoteNode(a, admin.token, 'scale-node', agentDir);
    agent = remote.agent;
    const nodeId = remote.nodeId;
    const bps = await a.request('GET', '/api/v1/blueprints?limit=100', { token: admin.token });
    const demo = bps.body.data.find((x: any) => x.key === 'demo-game');
    const created = await a.request('POST', '/api/v1/servers', {
      token: admin.token,
      body: { name: 'shared', nodeId, blueprintId: demo.id, memory: 256, cpu: 100, disk: 512 },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    for (let i = 0; i < 100; i++) {
      const s = await a.request('GET', `/api/v1/servers/${id}`, { token: admin.token });
      if (s.body.data.status === 'offline') break;
      await sleep(100);
    }

    // real graphql-ws subscribers on both instances
    const ca = gqlWsClient(a.url, admin.token);
    const cb = gqlWsClient(b.url, admin.token);
    const onA = subscribe(ca, CONSOLE_LINES, { id });
    // A takes the upstream first; B's subscribers must not open a second one
    await waitUntil(() => a.services.console.hub.upstreamCount === 1);
    const onB = subscribe(cb, CONSOLE_LINES, { id });
    const onB2 = subscribe(cb, CONSOLE_LINES, { id });
    const seenB = () => lineTexts(onB);

    expect((await a.request('POST', `/api/v1/servers/${id}/start`, { token: admin.token })).status).toBe(200);
    await waitUntil(() => seenB().some((l) => /Done \(/.test(l)), 20_000);
    await waitUntil(() => lineTexts(onA).some((l) => /Done \(/.test(l)), 5_000);
    expect(lineTexts(onB2).some((l) => /Done \(/.test(l))).toBe(true);
    expect(a.services.console.hub.upstreamCount + b.services.console.hub.upstreamCount).toBe(1);

    // A goes away mid-stream: B takes the upstream over and keeps its subscribers fed
    onA.stop();
    await ca.dispose();
    await a.close();
    await waitUntil(() => b.services.console.hub.upstreamCount === 1, 15_000);
    const ticket = await b.request('GET', `/api/v1/servers/${id}/console-token`, { token: admin.token });
    const c = await ConsoleClient.connect(ticket.body.data.socket, ticket.body.data.token);
    c.send({ type: 'command', data: 'say after-failover' });
    await waitUntil(() => seenB().some((l) => l.includes('[Server] after-failover')), 15_000);
    expect(onB.errors).toEqual([]);
    // B's new feed starts with the node's replay of its recent lines: B's subscribers had those already
    expect(seenB().filter((l) => /Done \(/.test(l))).toHaveLength(1);
    expect(seenB().filter((l) => l.includes('[Server] after-failover'))).toHaveLength(1);
    c.close();
    onB.stop();
    onB2.stop();
    await cb.dispose();
    await waitUntil(() => b.services.console.hub.upstreamCount === 0);
  }, 90_000);
});

