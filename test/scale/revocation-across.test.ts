/**
 * Revocation across gateway instances: a subuser's subscriptions held by instance B end when the
 * owner takes their keys away through instance A (the access event travels on the Redis bus), also
 * when A or B could not reach Redis at that moment, and the activity entry recorded on A reaches B's
 * serverActivity subscribers. Each instance reaches Redis through a proxy that can cut it off. Needs
 * REDIS_URL.
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { blueprintsByKey, createNode } from '../support/fixtures.js';
import { subscribe, trackedClients, type Sub } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { redisOnly } from '../support/redis-only.js';
import { CuttableProxy } from '../support/redis-proxy.js';
import { until } from '../support/wait.js';

const { redisUrl: REDIS_URL, describeRedis } = redisOnly('test/scale/revocation-across.test.ts', 'to carry access changes between two gateway instances');
const STATUS = 'subscription($id: ID!) { serverStatus(serverId: $id) { status } }';
const ACTIVITY = 'subscription($id: ID!) { serverActivity(serverId: $id) { event actor { email } } }';

describeRedis('revocation across two gateway instances', () => {
  const target = new URL(REDIS_URL);
  const proxyA = new CuttableProxy({ host: target.hostname, port: Number(target.port || 6379) });
  const proxyB = new CuttableProxy({ host: target.hostname, port: Number(target.port || 6379) });
  let a: TestPlatform;
  let b: TestPlatform;
  let nodeId: string;
  const clients = trackedClients();

  beforeAll(async () => {
    await proxyA.open();
    await proxyB.open();
    const masterKey = randomBytes(32).toString('base64');
    const via = (proxy: CuttableProxy) => Object.assign(new URL(REDIS_URL), { host: `127.0.0.1:${proxy.port}` }).toString();
    a = await startTestPlatform({}, { REDIS_URL: via(proxyA), MASTER_KEY: masterKey });
    b = await startTestPlatform({}, { REDIS_URL: via(proxyB), MASTER_KEY: masterKey }, { database: a.dbName });
    nodeId = (await createNode(a, (await a.admin()).token)).id;
  }, 60_000);
  afterAll(async () => {
    await clients.disposeAll();
    await b?.stop();
    await a?.stop();
    await proxyA.close();
    await proxyB.close();
  }, 60_000);

  /** A server of a new owner, shared with a new subuser; on B the subuser watches its status and activity, the owner its activity. */
  async function sharedAndWatchedOnB(name: string) {
    const owner = await a.newUser('owner');
    const friend = await a.newUser('friend');
    const bp = (await blueprintsByKey(a, owner.token))['shell-command'].id;
    const server = (await a.request('POST', '/api/v1/servers', { token: owner.token, body: { name, nodeId, blueprintId: bp, memory: 64, cpu: 10, disk: 128 } })).body.data;
    const body = { email: friend.email, permissions: ['websocket.connect', 'activity.read'] };
    expect((await a.request('POST', `/api/v1/servers/${server.id}/subusers`, { token: owner.token, body })).status).toBe(201);
    const onB = clients.open(b.url, friend.token);
    const ownerOnB = clients.open(b.url, owner.token);
    const friendSubs = [subscribe(onB, STATUS, { id: server.id }), subscribe(onB, ACTIVITY, { id: server.id })];
    const ownerFeed = subscribe(ownerOnB, ACTIVITY, { id: server.id });
    await until(() => friendSubs[0]!.items.length > 0 && b.services.console.hub.subscriberCount(server.id) === 1, 10_000, 'the subscriptions on B');
    const takeAway = async () => {
      const r = await a.request('PATCH', `/api/v1/servers/${server.id}/subusers/${friend.user.id}`, { token: owner.token, body: { permissions: [] } });
      expect(r.status).toBe(200);
    };
    return { server, owner, friendSubs, ownerFeed, takeAway };
  }

  /** The subuser's subscriptions on B have ended with FORBIDDEN. */
  async function endedForbidden(subs: Sub[]): Promise<void> {
    await until(() => subs.every((s) => s.done), 15_000, 'the subscriptions on B to end');
    for (const s of subs) expect(s.errors.map((e: any) => e.extensions?.code)).toEqual(['FORBIDDEN']);
  }

  test('a subscription on B ends when A takes the key away; A\'s activity reaches B', async () => {
    const { owner, friendSubs, ownerFeed: feed, takeAway } = await sharedAndWatchedOnB('across');
    await takeAway();
    await endedForbidden(friendSubs);
    await until(() => feed.items.some((i) => i.serverActivity.event === 'server:subuser.update'), 5_000, 'the activity entry on B');
    expect(feed.items.find((i) => i.serverActivity.event === 'server:subuser.update').serverActivity.actor.email).toBe(owner.email);
  });

  test('the keys taken away on A while A cannot reach Redis end the subscriptions on B once it can', async () => {
    const { friendSubs, takeAway } = await sharedAndWatchedOnB('a-cut-off');
    await proxyA.cut();
    await until(() => proxyA.refused >= 2, 10_000, 'A to try to reconnect');
    await takeAway();
    proxyA.restore();
    await endedForbidden(friendSubs);
  });

  test('the keys taken away while B cannot reach Redis end the subscriptions on B once it can', async () => {
    const { server, friendSubs, takeAway } = await sharedAndWatchedOnB('b-cut-off');
    const watcher = new Redis(REDIS_URL);
    try {
      const access: string[] = [];
      watcher.on('pmessage', (_p: string, _ch: string, raw: string) => raw.includes('"access"') && access.push(raw));
      await watcher.psubscribe(`hostpanel:${a.dbName}:*:console:${server.id}`);
      await proxyB.cut();
      await until(() => proxyB.refused >= 2, 10_000, 'B to try to reconnect');
      await takeAway();
      // the access event went out through Redis while B was not there to hear it
      await until(() => access.length > 0, 10_000, 'A to publish the access event');
      proxyB.restore();
      await endedForbidden(friendSubs);
    } finally {
      watcher.disconnect();
    }
  });
});
