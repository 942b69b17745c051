/**
 * REDIS_URL set, but Redis is not there (down, restarting, a wrong address): the gateway keeps serving
 * as a single instance. Rate limits fall back to in-process counts (src/http/rate-limit.ts) and console
 * events to local delivery (src/console/redis-bus.ts). Needs no Redis: it points at a port where
 * nothing listens, so it runs in every pass.
 */
import { gqlWsClient, lineTexts, subscribe, CONSOLE_LINES } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { freePort, until, sleep } from '../support/wait.js';

let p: TestPlatform;

/** A port where nothing listens. */
const deadPort = freePort;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 3 }, { REDIS_URL: `redis://127.0.0.1:${await deadPort()}` });
}, 60_000);
afterAll(async () => p?.stop());

test('the API answers, with rate-limit headers, and a GraphQL console subscriber gets the lines of a server it starts', async () => {
  const owner = await p.newUser('Owner');
  const me = await p.request('GET', '/api/v1/users/me', { token: owner.token });
  expect(me.status).toBe(200);
  expect(Number(me.headers.get('x-ratelimit-remaining'))).toBeGreaterThan(0);

  const nodeId = (await p.request('GET', '/api/v1/users/me/nodes', { token: owner.token })).body.data[0].id;
  const demo = (await p.request('GET', '/api/v1/blueprints?limit=100', { token: owner.token })).body.data.find((b: any) => b.key === 'demo-game');
  const created = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'no redis', nodeId, blueprintId: demo.id, memory: 256, disk: 512 } });
  expect(created.status).toBe(201);
  const serverId = created.body.data.id;
  await until(async () => (await p.request('GET', `/api/v1/servers/${serverId}`, { token: owner.token })).body.data.status === 'offline', 20_000);

  const client = gqlWsClient(p.url, owner.token);
  try {
    const sub = subscribe(client, CONSOLE_LINES, { id: serverId });
    await sleep(500); // subscribed before the server starts
    expect((await p.request('POST', `/api/v1/servers/${serverId}/start`, { token: owner.token })).status).toBe(200);
    await until(() => lineTexts(sub).some((l) => /Done \(/.test(l)) || sub.done, 20_000);
    expect(sub.errors).toEqual([]);
    expect(lineTexts(sub).some((l) => /Done \(/.test(l))).toBe(true);
    // a later subscriber gets the recent lines first (the history this instance kept)
    const late = subscribe(client, CONSOLE_LINES, { id: serverId });
    await until(() => lineTexts(late).some((l) => /Done \(/.test(l)) || late.done, 10_000);
    expect(late.errors).toEqual([]);
  } finally {
    await client.dispose();
  }
  await p.request('POST', `/api/v1/servers/${serverId}/kill`, { token: owner.token });
}, 60_000);
