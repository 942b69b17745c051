/**
 * Revocation across gateway instances: a subuser's console subscription held by instance B ends
 * when the owner removes their key through instance A (the access event travels on the Redis bus),
 * and the activity entry recorded on A reaches B's serverActivity subscribers. Needs REDIS_URL.
 */
import { randomBytes } from 'node:crypto';
import type { Client } from 'graphql-ws';
import { blueprintsByKey, createNode } from '../support/fixtures.js';
import { gqlWsClient, subscribe } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { redisOnly } from '../support/redis-only.js';
import { until } from '../support/wait.js';

const { redisUrl: REDIS_URL, describeRedis } = redisOnly('test/scale/revocation-across.test.ts', 'to carry access changes between two gateway instances');

describeRedis('revocation across two gateway instances', () => {
  let a: TestPlatform;
  let b: TestPlatform;
  const clients: Client[] = [];

  beforeAll(async () => {
    const masterKey = randomBytes(32).toString('base64');
    a = await startTestPlatform({}, { REDIS_URL, MASTER_KEY: masterKey });
    b = await startTestPlatform({}, { REDIS_URL, MASTER_KEY: masterKey }, { database: a.dbName });
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await b?.stop();
    await a?.stop();
  }, 60_000);

  test('a subscription on B ends when A takes the key away; A\'s activity reaches B', async () => {
    const admin = await a.admin();
    const owner = await a.newUser('owner');
    const friend = await a.newUser('friend');
    const node = await createNode(a, admin.token);
    const bp = (await blueprintsByKey(a, owner.token))['shell-command'].id;
    const server = (await a.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'across', nodeId: node.id, blueprintId: bp, memory: 64, cpu: 10, disk: 128 } })).body.data;
    expect((await a.request('POST', `/api/v1/servers/${server.id}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['websocket.connect'] } })).status).toBe(201);

    const onB = gqlWsClient(b.url, friend.token);
    const ownerOnB = gqlWsClient(b.url, owner.token);
    clients.push(onB, ownerOnB);
    const status = subscribe(onB, 'subscription($id: ID!) { serverStatus(serverId: $id) { status } }', { id: server.id });
    const feed = subscribe(ownerOnB, 'subscription($id: ID!) { serverActivity(serverId: $id) { event actor { email } } }', { id: server.id });
    await until(() => status.items.length > 0 && b.services.console.hub.subscriberCount(server.id) === 1, 10_000, 'the subscription on B');

    expect((await a.request('PATCH', `/api/v1/servers/${server.id}/subusers/${friend.user.id}`, { token: owner.token, body: { permissions: [] } })).status).toBe(200);
    await until(() => status.done, 5_000, 'the subscription on B to end');
    expect(status.errors.map((e: any) => e.extensions?.code)).toEqual(['FORBIDDEN']);
    await until(() => feed.items.some((i) => i.serverActivity.event === 'server:subuser.update'), 5_000, 'the activity entry on B');
    expect(feed.items.find((i) => i.serverActivity.event === 'server:subuser.update').serverActivity.actor.email).toBe(owner.email);
  });
});
