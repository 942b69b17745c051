/**
 * Two gateway instances whose Redis goes away mid-stream and comes back (cut and restored through a
 * TCP proxy in front of the machine's Redis): while it is away each instance feeds its own console
 * subscribers; once it is back they settle on one upstream feed again and both sides get every new
 * line. Needs REDIS_URL; without it the test is skipped (and says so).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RunningAgent } from '../../src/agent/index.js';
import { ConsoleClient } from '../support/console-client.js';
import { CONSOLE_LINES, gqlWsClient, lineTexts, subscribe } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { startRemoteNode } from '../support/remote-node.js';
import { until, sleep } from '../support/wait.js';
import { redisOnly } from '../support/redis-only.js';
import { CuttableProxy } from '../support/redis-proxy.js';

const { redisUrl: REDIS_URL, describeRedis } = redisOnly('test/scale/redis-outage.test.ts', 'to cut and restore');
const LINES_WITH_TS = 'subscription($id: ID!) { consoleOutput(serverId: $id) { line ts } }';

describeRedis('Redis goes away and comes back under two gateway instances', () => {
  let a: TestPlatform;
  let b: TestPlatform;
  let agent: RunningAgent | null = null;
  const agentDir = mkdtempSync(path.join(os.tmpdir(), 'hostpanel-agent-'));
  const target = new URL(REDIS_URL);
  const proxy = new CuttableProxy({ host: target.hostname, port: Number(target.port || 6379) });

  beforeAll(async () => {
    await proxy.open();
    const env = { REDIS_URL: `redis://127.0.0.1:${proxy.port}`, MASTER_KEY: randomBytes(32).toString('base64') };
    a = await startTestPlatform({}, env);
    b = await startTestPlatform({}, env, { database: a.dbName });
  }, 60_000);
  afterAll(async () => {
    await agent?.close();
    await b?.stop();
    await a?.stop();
    await proxy.close();
    rmSync(agentDir, { recursive: true, force: true });
  }, 60_000);

  test('each instance feeds its own subscribers while Redis is away; one feed again once it is back', async () => {
    const admin = await a.admin();
    const remote = await startRemoteNode(a, admin.token, 'outage-node', agentDir);
    agent = remote.agent;
    const demo = (await a.request('GET', '/api/v1/blueprints?limit=100', { token: admin.token })).body.data.find((x: any) => x.key === 'demo-game');
    const created = await a.request('POST', '/api/v1/servers', {
      token: admin.token,
      body: { name: 'outage', nodeId: remote.nodeId, blueprintId: demo.id, memory: 256, cpu: 100, disk: 512 },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    await until(async () => (await a.request('GET', `/api/v1/servers/${id}`, { token: admin.token })).body.data.status === 'offline', 20_000);
    expect((await a.request('POST', `/api/v1/servers/${id}/start`, { token: admin.token })).status).toBe(200);
    await until(async () => (await a.request('GET', `/api/v1/servers/${id}`, { token: admin.token })).body.data.status === 'running', 20_000);
    const ticket = (await a.request('GET', `/api/v1/servers/${id}/console-token`, { token: admin.token })).body.data;
    const game = await ConsoleClient.connect(ticket.socket, ticket.token);
    const say = (text: string) => game.send({ type: 'command', data: `say ${text}` });
    const saw = (s: ReturnType<typeof subscribe>, text: string) => lineTexts(s).some((l) => l.includes(`[Server] ${text}`));

    const ca = gqlWsClient(a.url, admin.token);
    const cb = gqlWsClient(b.url, admin.token);
    /** Lines a subscriber got more than once (same time stamp and text). */
    const repeated = (s: ReturnType<typeof subscribe>) => {
      const keys = s.items.map((d) => `${d.consoleOutput.ts} ${d.consoleOutput.line}`);
      return keys.filter((k, i) => keys.indexOf(k) !== i);
    };
    try {
      const onA = subscribe(ca, LINES_WITH_TS, { id });
      await until(() => a.services.console.hub.upstreamCount === 1);
      const earlyOnB = subscribe(cb, LINES_WITH_TS, { id }); // gets its lines from A, through Redis
      say('before');
      await until(() => saw(onA, 'before') && saw(earlyOnB, 'before'), 10_000, 'A and B to see the line said before the outage');

      await proxy.cut();
      const onB = subscribe(cb, CONSOLE_LINES, { id }); // subscribes while Redis is away
      await until(() => b.services.console.hub.upstreamCount === 1, 15_000, 'B to open a feed of its own');
      say('during');
      await until(() => saw(onA, 'during') && saw(onB, 'during'), 15_000, 'both to see the line said during the outage');

      proxy.restore();
      await until(() => a.services.console.hub.upstreamCount + b.services.console.hub.upstreamCount === 1, 20_000, 'one upstream feed again');
      say('after');
      await until(() => saw(onA, 'after') && saw(onB, 'after'), 15_000, 'both to see the line said after the outage');
      // B's own feed replayed lines B's early subscriber had got through Redis, and after the outage
      // both feeds ran until the election closed one: still, no subscriber got a line twice
      for (let i = 0; i < 10; i++) {
        say(`settling ${i}`);
        await sleep(300);
      }
      await until(() => saw(onA, 'settling 9') && saw(earlyOnB, 'settling 9'), 15_000, 'the last settling line');
      expect(repeated(onA)).toEqual([]);
      expect(repeated(earlyOnB)).toEqual([]);
      expect(onA.errors).toEqual([]);
      expect(onB.errors).toEqual([]);
      onA.stop();
      onB.stop();
      earlyOnB.stop();
    } finally {
      game.close();
      await ca.dispose();
      await cb.dispose();
    }
  }, 120_000);
});
