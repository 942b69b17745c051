/**
 * Console subscriptions over graphql-ws against a real running demo server on the local agent:
 * real lines, status changes of start/stop, stats, one upstream for many subscribers, and refusal
 * of a non-owner.
 */
import type { Client } from 'graphql-ws';
import { createLocalDemoServer, waitForStatus } from '../support/fixtures.js';
import { subscribe, trackedClients, type Sub } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { gql } from './gql.js';
import { until, sleep } from '../support/wait.js';

let p: TestPlatform;
let owner: { token: string };
let stranger: { token: string };
let serverId: string;
const clients = trackedClients();

const client = (token: string): Client => clients.open(p.url, token);

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 3 });
  const admin = await p.admin();
  owner = await p.newUser('Owner');
  stranger = await p.newUser('Stranger');
  const nodes = await p.request('GET', '/api/v1/nodes', { token: admin.token });
  const nodeId = nodes.body.data.find((n: any) => n.name === 'local').id;
  const bps = await p.request('GET', '/api/v1/blueprints?limit=100', { token: owner.token });
  const demo = bps.body.data.find((b: any) => b.key === 'demo-game');
  const created = await gql(
    p,
    'mutation($i: CreateServerInput!) { createServer(input: $i) { id status } }',
    { i: { name: 'subscribed', nodeId, blueprintId: demo.id, memory: 256, cpu: 100, disk: 512 } },
    { token: owner.token },
  );
  serverId = created.body.data.createServer.id;
  for (let i = 0; i < 100; i++) {
    const s = await p.request('GET', `/api/v1/servers/${serverId}`, { token: owner.token });
    if (s.body.data.status === 'offline') break;
    await sleep(100);
  }
}, 60_000);

afterAll(async () => {
  await clients.disposeAll();
  await p?.stop();
}, 60_000);

test('consoleOutput and serverStatus carry a real server’s lines and the status changes of start/stop', async () => {
  const c = client(owner.token);
  const lines = subscribe(c, 'subscription($id: ID!) { consoleOutput(serverId: $id) { serverId line stream ts } }', { id: serverId });
  const statuses = subscribe(c, 'subscription($id: ID!) { serverStatus(serverId: $id) { serverId status } }', { id: serverId });
  const stats = subscribe(c, 'subscription($id: ID!) { serverStats(serverId: $id) { cpu memory uptime } }', { id: serverId });
  await until(() => p.services.console.hub.upstreamCount === 1, 10_000, 'the upstream feed');

  try {
    const started = await gql(p, 'mutation($id: ID!) { startServer(id: $id) { status } }', { id: serverId }, { token: owner.token });
    expect(['starting', 'running']).toContain(started.body.data.startServer.status);
    await until(() => lines.items.some((d) => /Done \(/.test(d.consoleOutput.line)), 20_000, 'the ready line');
    expect(lines.items[0].consoleOutput).toMatchObject({ serverId, stream: expect.any(String), ts: expect.any(String) });
    await until(() => statuses.items.some((d) => d.serverStatus.status === 'running'), 10_000, 'running');
    await until(() => stats.items.length > 0, 10_000, 'a stats event');
    // the first stats of a run are measured ones (the agent pushes none before its first poll)
    expect(stats.items[0].serverStats.memory).toBeGreaterThan(0);

    await gql(p, 'mutation($id: ID!) { stopServer(id: $id) { status } }', { id: serverId }, { token: owner.token });
    await until(() => statuses.items.some((d) => d.serverStatus.status === 'offline'), 20_000, 'offline');
    const seen = statuses.items.map((d) => d.serverStatus.status);
    expect(seen.indexOf('stopping')).toBeGreaterThan(seen.indexOf('running'));
  } finally {
    // a failure here leaves the next tests a stopped server and no feed
    lines.stop();
    statuses.stop();
    stats.stop();
    await gql(p, 'mutation($id: ID!) { killServer(id: $id) { status } }', { id: serverId }, { token: owner.token });
    await waitForStatus(p, owner.token, serverId, 'offline', 20_000);
  }
  await until(() => p.services.console.hub.upstreamCount === 0, 10_000, 'the upstream to close');
});

test('many subscribers on one server share a single upstream; a late one gets the history first', async () => {
  const subs: Sub[] = [];
  for (let i = 0; i < 25; i++) {
    subs.push(subscribe(client(owner.token), 'subscription($id: ID!) { consoleOutput(serverId: $id) { line } }', { id: serverId }));
  }
  await until(() => p.services.console.hub.upstreamCount === 1, 10_000, 'the upstream feed');
  await gql(p, 'mutation($id: ID!) { startServer(id: $id) { status } }', { id: serverId }, { token: owner.token });
  await until(() => subs.every((s) => s.items.some((d) => /Done \(/.test(d.consoleOutput.line))), 20_000, 'every subscriber to see the ready line');
  expect(p.services.console.hub.upstreamCount).toBe(1);

  const late = subscribe(client(owner.token), 'subscription($id: ID!) { consoleOutput(serverId: $id) { line } }', { id: serverId });
  await until(() => late.items.some((d) => /Done \(/.test(d.consoleOutput.line)), 5_000, 'history for the late subscriber');

  await gql(p, 'mutation($id: ID!) { killServer(id: $id) { status } }', { id: serverId }, { token: owner.token });
  for (const s of [...subs, late]) s.stop();
  await until(() => p.services.console.hub.upstreamCount === 0, 10_000, 'the upstream to close after the last subscriber');
});

test('subscribers of the same events with different selections each get their own shape (results shared only between identical operations)', async () => {
  await waitForStatus(p, owner.token, serverId, 'offline', 20_000);
  const q = (selection: string) => `subscription($id: ID!) { consoleOutput(serverId: $id) { ${selection} } }`;
  const a1 = subscribe(client(owner.token), q('line'), { id: serverId });
  const a2 = subscribe(client(owner.token), q('line'), { id: serverId });
  const b = subscribe(client(owner.token), q('text: line stream ts'), { id: serverId });
  await until(() => p.services.console.hub.upstreamCount === 1, 10_000, 'the upstream feed');
  await gql(p, 'mutation($id: ID!) { startServer(id: $id) { status } }', { id: serverId }, { token: owner.token });
  const ready = (s: Sub, key: string) => s.items.find((d) => /Done \(/.test(String(d.consoleOutput?.[key] ?? '')));
  await until(() => !!ready(a1, 'line') && !!ready(a2, 'line') && !!ready(b, 'text'), 20_000, 'the ready line for every subscriber');
  await gql(p, 'mutation($id: ID!) { killServer(id: $id) { status } }', { id: serverId }, { token: owner.token });
  expect(Object.keys(ready(a1, 'line').consoleOutput)).toEqual(['line']);
  expect(ready(a2, 'line')).toEqual(ready(a1, 'line'));
  expect(Object.keys(ready(b, 'text').consoleOutput).sort()).toEqual(['stream', 'text', 'ts']);
  expect(ready(b, 'text').consoleOutput.text).toBe(ready(a1, 'line').consoleOutput.line);
  for (const s of [a1, a2, b]) s.stop();
  await until(() => p.services.console.hub.upstreamCount === 0, 10_000, 'the upstream to close');
});

test('a non-owner cannot subscribe (NOT_FOUND, like REST)', async () => {
  const sub = subscribe(client(stranger.token), 'subscription($id: ID!) { consoleOutput(serverId: $id) { line } }', { id: serverId });
  await until(() => sub.done || sub.errors.length > 0, 10_000, 'the refusal');
  expect(sub.items).toEqual([]);
  expect(sub.errors[0].extensions?.code ?? sub.errors[0].message).toMatch(/NOT_FOUND/);
  expect(p.services.console.hub.upstreamCount).toBe(0);
});

test('identical lines printed in the same instant all arrive (no loss by text)', async () => {
  const admin = await p.admin();
  const nodes = await p.request('GET', '/api/v1/nodes', { token: admin.token });
  const nodeId = nodes.body.data.find((n: any) => n.name === 'local').id;
  const bps = await p.request('GET', '/api/v1/blueprints?limit=100', { token: owner.token });
  const shell = bps.body.data.find((b: any) => b.key === 'shell-command');
  const created = await p.request('POST', '/api/v1/servers', {
    token: owner.token,
    body: { name: 'echoes', nodeId, blueprintId: shell.id, variables: { COMMAND: 'yes same | head -n 300; sleep 30' } },
  });
  expect(created.status).toBe(201);
  const id = created.body.data.id;
  await until(async () => (await p.request('GET', `/api/v1/servers/${id}`, { token: owner.token })).body.data.status === 'offline', 20_000, 'installed');
  const lines = subscribe(client(owner.token), 'subscription($id: ID!) { consoleOutput(serverId: $id) { line } }', { id });
  await until(() => p.services.console.hub.upstreamCount >= 1, 10_000, 'the upstream feed');
  await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token });
  const same = () => lines.items.filter((d) => d.consoleOutput.line === 'same').length;
  await until(() => same() >= 300, 15_000, `300 "same" lines (got ${same()})`);
  expect(same()).toBe(300);
  await p.request('POST', `/api/v1/servers/${id}/kill`, { token: owner.token });
  lines.stop();
});

test('a new upstream feed does not repeat the lines its subscribers already got from the history', async () => {
  // the earlier tests ran the server, so the gateway holds a history of its lines, and the node will
  // replay its own recent lines to the new upstream feed when it connects
  await waitForStatus(p, owner.token, serverId, 'offline', 20_000);
  await until(() => p.services.console.hub.upstreamCount === 0, 10_000, 'no upstream feed');
  const since = Date.now();
  const s = subscribe(client(owner.token), 'subscription($id: ID!) { consoleOutput(serverId: $id) { line stream ts } }', { id: serverId });
  await until(() => p.services.console.hub.upstreamCount === 1, 10_000, 'the upstream feed');
  await gql(p, 'mutation($id: ID!) { startServer(id: $id) { status } }', { id: serverId }, { token: owner.token });
  // the node replays before it sends live lines, so once this start's ready line is here, the replay is too
  await until(() => s.items.some((d) => /Done \(/.test(d.consoleOutput.line) && Date.parse(d.consoleOutput.ts) >= since), 20_000, 'the new ready line');
  await gql(p, 'mutation($id: ID!) { killServer(id: $id) { status } }', { id: serverId }, { token: owner.token });
  const keys = s.items.map((d) => `${d.consoleOutput.ts} ${d.consoleOutput.stream} ${d.consoleOutput.line}`);
  const old = s.items.filter((d) => Date.parse(d.consoleOutput.ts) < since).length;
  expect(old).toBeGreaterThan(0);
  const repeated = keys.filter((k, i) => keys.indexOf(k) !== i);
  expect(repeated).toEqual([]);
  s.stop();
  await until(() => p.services.console.hub.upstreamCount === 0, 10_000, 'the upstream to close');
});

test('deleting a server completes its subscriptions and ends its upstream feed (no retries for a server that is gone)', async () => {
  const id = await createLocalDemoServer(p, (await p.admin()).token, owner.token, 'doomed');
  const c = client(owner.token);
  const lines = subscribe(c, 'subscription($id: ID!) { consoleOutput(serverId: $id) { line } }', { id });
  const statuses = subscribe(c, 'subscription($id: ID!) { serverStatus(serverId: $id) { status } }', { id });
  await until(() => p.services.console.hub.upstreamCount === 1, 10_000, 'the upstream feed');
  await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token });
  await until(() => lines.items.some((d) => /Done \(/.test(d.consoleOutput.line)), 20_000, 'the ready line');

  expect((await p.request('DELETE', `/api/v1/servers/${id}`, { token: owner.token })).status).toBe(204);
  await until(() => lines.done && statuses.done, 15_000, 'both subscriptions to complete');
  expect([...lines.errors, ...statuses.errors]).toEqual([]);
  await until(() => p.services.console.hub.upstreamCount === 0, 10_000, 'the upstream feed to end');
}, 60_000);

test('serverStatus starts with the current status, also when joining a console that is already open', async () => {
  const c = client(owner.token);
  const lines = subscribe(c, 'subscription($id: ID!) { consoleOutput(serverId: $id) { line } }', { id: serverId });
  await until(() => p.services.console.hub.upstreamCount === 1, 10_000, 'the upstream feed');
  await gql(p, 'mutation($id: ID!) { startServer(id: $id) { status } }', { id: serverId }, { token: owner.token });
  await waitForStatus(p, owner.token, serverId, 'running');

  // the feed is open and the node will not repeat the status: the joiner still learns it at once
  const joiner = subscribe(c, 'subscription($id: ID!) { serverStatus(serverId: $id) { status } }', { id: serverId });
  await until(() => joiner.items.length > 0, 10_000, 'the current status');
  expect(joiner.items[0].serverStatus.status).toBe('running');

  await gql(p, 'mutation($id: ID!) { stopServer(id: $id) { status } }', { id: serverId }, { token: owner.token });
  await until(() => joiner.items.some((d) => d.serverStatus.status === 'offline'), 20_000, 'offline');
  const seen = joiner.items.map((d) => d.serverStatus.status);
  expect(seen.filter((s, i) => i > 0 && s === seen[i - 1])).toEqual([]); // changes only
  joiner.stop();
  lines.stop();
  await until(() => p.services.console.hub.upstreamCount === 0, 10_000, 'the upstream to close');
}, 60_000);
