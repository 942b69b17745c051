/**
 * The gateway's upstream feed renews its console token before it expires, without noise: with a
 * short token lifetime the node says `token_expiring` as soon as a token is accepted, and the feed
 * used to renew at once, in a loop, relaying every renewal's auth_success as a status event.
 */
import { createLocalDemoServer } from '../support/fixtures.js';
import { subscribe, trackedClients } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until, sleep } from '../support/wait.js';

let p: TestPlatform;
const clients = trackedClients();

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 3, consoleTokenTtlSeconds: 10 });
}, 60_000);
afterAll(async () => {
  await clients.disposeAll();
  await p?.stop();
}, 60_000);

test('with 10 s console tokens, a feed outlives several renewals and relays one status per real change', async () => {
  const owner = await p.newUser('Owner');
  const id = await createLocalDemoServer(p, (await p.admin()).token, owner.token, 'renewed');

  const c = clients.open(p.url, owner.token);
  const statuses = subscribe(c, 'subscription($id: ID!) { serverStatus(serverId: $id) { status } }', { id });
  await until(() => statuses.items.length > 0, 10_000, 'the first status');
  // two and a half token lifetimes: the feed must renew (else the node closes it) and stay quiet
  await sleep(25_000);
  expect(statuses.items.map((d) => d.serverStatus.status)).toEqual(['offline']);
  expect(p.services.console.hub.upstreamCount).toBe(1);

  await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token });
  await until(() => statuses.items.some((d) => d.serverStatus.status === 'running'), 20_000, 'running, through the renewed feed');
  expect(statuses.errors).toEqual([]);
}, 90_000);
