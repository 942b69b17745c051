/**
 * A console feed handed over while Redis hangs under the instance holding it (a TCP proxy that stops
 * forwarding): the other instance takes the feed over and appends the lines of the hang to the shared
 * history from its feed's replay; when Redis answers again, the first instance's held-up append of the
 * same lines lands too. A subscriber that comes later still gets each line once, one by one and in
 * batches. Needs REDIS_URL.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from 'graphql-ws';
import Redis from 'ioredis';
import type { RunningAgent } from '../../src/agent/index.js';
import { ConsoleClient } from '../support/console-client.js';
import { subscribe, trackedClients, type Sub } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { redisOnly } from '../support/redis-only.js';
import { HoldingProxy } from '../support/redis-proxy.js';
import { startRemoteNode } from '../support/remote-node.js';
import { until } from '../support/wait.js';

const { redisUrl: REDIS_URL, describeRedis } = redisOnly('test/scale/console-hang.test.ts', 'to make hang');
const LINES = 'subscription($id: ID!) { consoleOutput(serverId: $id) { line seq } }';
const BATCHES = 'subscription($id: ID!) { consoleBatches(serverId: $id) { lines { line seq } } }';

const linesOf = (s: Sub): { line: string; seq: number }[] => s.items.flatMap((d) => (d.consoleBatches ? d.consoleBatches.lines : [d.consoleOutput]));
const saw = (s: Sub, text: string) => linesOf(s).some((l) => l.line.endsWith(`[Server] ${text}`));
/** The lines a subscriber got more than once. */
const repeated = (s: Sub) => {
  const keys = linesOf(s).map((l) => `${l.seq} ${l.line}`);
  return keys.filter((k, i) => keys.indexOf(k) !== i);
};

describeRedis('a console feed handed over while Redis hangs', () => {
  const target = new URL(REDIS_URL);
  const proxy = new HoldingProxy({ host: target.hostname, port: Number(target.port || 6379) });
  const agentDir = mkdtempSync(path.join(os.tmpdir(), 'hostpanel-agent-'));
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  let a: TestPlatform;
  let b: TestPlatform;
  let agent: RunningAgent | null = null;
  let serverId: string;
  let game: ConsoleClient;
  let holding = false;
  const clients = trackedClients();
  let ca: Client;
  let cb: Client;

  beforeAll(async () => {
    await proxy.open();
    const masterKey = randomBytes(32).toString('base64');
    const viaProxy = Object.assign(new URL(REDIS_URL), { host: `127.0.0.1:${proxy.port}` }).toString();
    a = await startTestPlatform({}, { REDIS_URL: viaProxy, MASTER_KEY: masterKey });
    b = await startTestPlatform({}, { REDIS_URL, MASTER_KEY: masterKey }, { database: a.dbName });
    const admin = await a.admin();
    const remote = await startRemoteNode(a, admin.token, 'hang-node', agentDir);
    agent = remote.agent;
    const demo = (await a.request('GET', '/api/v1/blueprints?limit=100', { token: admin.token })).body.data.find((x: any) => x.key === 'demo-game');
    const body = { name: 'hang', nodeId: remote.nodeId, blueprintId: demo.id, memory: 256, cpu: 100, disk: 512 };
    serverId = (await a.request('POST', '/api/v1/servers', { token: admin.token, body })).body.data.id;
    const status = async () => (await a.request('GET', `/api/v1/servers/${serverId}`, { token: admin.token })).body.data.status;
    await until(async () => (await status()) === 'offline', 20_000, 'the server to be installed');
    expect((await a.request('POST', `/api/v1/servers/${serverId}/start`, { token: admin.token })).status).toBe(200);
    await until(async () => (await status()) === 'running', 20_000, 'the server to run');
    const ticket = (await a.request('GET', `/api/v1/servers/${serverId}/console-token`, { token: admin.token })).body.data;
    game = await ConsoleClient.connect(ticket.socket, ticket.token);
    ca = clients.open(a.url, admin.token);
    cb = clients.open(b.url, admin.token);
    await redis.connect();
  }, 90_000);
  afterAll(async () => {
    if (holding) proxy.release();
    game?.close();
    await clients.disposeAll();
    redis.disconnect();
    await agent?.close();
    await b?.stop();
    await a?.stop();
    await proxy.close();
    rmSync(agentDir, { recursive: true, force: true });
  }, 60_000);

  test('a later subscriber gets each line of the hang once, one by one and in batches', async () => {
    const say = (text: string) => game.send({ type: 'command', data: `say ${text}` });
    const onA = subscribe(ca, LINES, { id: serverId });
    await until(() => a.services.console.hub.upstreamCount === 1, 10_000, 'A to hold the feed');
    const onB = subscribe(cb, LINES, { id: serverId });
    say('before');
    await until(() => saw(onB, 'before'), 10_000, 'B to get a line through Redis');

    proxy.hold();
    holding = true;
    for (const i of [0, 1, 2]) say(`held ${i}`);
    await until(() => saw(onA, 'held 2'), 10_000, 'A to relay the lines (its append waits for Redis)');
    await until(() => b.services.console.hub.upstreamCount === 1 && saw(onB, 'held 2'), 20_000, 'B to take the feed over and relay its replay');
    proxy.release();
    holding = false;
    // A's held-up append lands after B's: the shared history holds the lines of the hang twice
    const historyKey = `hostpanel:${a.dbName}:console-history:${serverId}`;
    await until(async () => (await redis.lrange(historyKey, 0, -1)).filter((raw) => raw.includes('held 2')).length >= 2, 10_000, 'A\'s append to land');

    const late = subscribe(cb, LINES, { id: serverId });
    const lateBatches = subscribe(cb, BATCHES, { id: serverId });
    // onB, late, and the batcher of lateBatches
    await until(() => b.services.console.hub.subscriberCount(serverId) === 3, 10_000, 'the later subscriptions');
    say('after');
    await until(() => saw(late, 'after') && saw(lateBatches, 'after'), 15_000, 'the later subscribers to get a new line');
    expect(saw(late, 'held 0') && saw(lateBatches, 'held 0')).toBe(true);
    expect(repeated(late)).toEqual([]);
    expect(repeated(lateBatches)).toEqual([]);
  }, 90_000);
});
