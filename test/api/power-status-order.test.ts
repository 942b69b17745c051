/**
 * The recorded status follows the node's order of statuses (CONTRACT §3): each status the node
 * reports carries its number (`seq` on a queued event, `statusSeq` in a power action's answer), and the
 * panel keeps the newest. A queued `starting` that arrives after the start's answer `running` does not
 * put the server back, and a power action answers the status right after it (`stopping` after a stop,
 * `offline` after a kill).
 *
 * The first tests run a real server on the local agent, through REST and GraphQL; the others send
 * numbered events and answers from a small HTTP server playing a node agent (a registered node's port).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConsoleBus } from '../../src/console/bus.js';
import { Server } from '../../src/entities/Server.js';
import { deriveNodeKey, signRequest } from '../../src/shared/node-protocol.js';
import { blueprintsByKey, createNode, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { gqlWsClient, subscribe } from '../support/gql-ws.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let token: string;
/** A server on the local agent whose process ignores SIGTERM (a stop lasts the 2 s grace period). */
let id: string;
let fakeNode: { id: string; token: string };
let fake: http.Server;
/** The fake node's answer to the next power call: a status and its number. */
let powerAnswer: { status: string; statusSeq?: number } = { status: 'offline' };

const api = (method: string, sub: string) => p.request(method, `/api/v1${sub}`, { token });

/** The recorded row as the panel's database has it (statusSeq is in no output). */
const row = (serverId: string) => p.orm.em.fork().findOneOrFail(Server, { id: serverId });

/** A fake node: takes a server's spec (PUT) and answers power calls with `powerAnswer`. */
function startFakeNode(): Promise<http.Server> {
  const s = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const m = /^\/api\/servers\/([^/]+)(\/power)?$/.exec(req.url ?? '');
      if (!m) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ error: { code: 'NOT_FOUND', message: 'Unknown route', details: {} } }));
      }
      const state = m[2] ? powerAnswer : { status: 'installing' };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: { id: m[1], exitCode: null, reason: null, startedAt: null, stats: {}, ...state } }));
    });
  });
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)));
}

/** Posts events on the fake node's signed queue, as an agent does; the panel's HTTP status. */
async function sendEvents(events: unknown[]): Promise<number> {
  const raw = JSON.stringify({ events });
  const authorization = signRequest(fakeNode.id, deriveNodeKey(fakeNode.token), 'POST', '/api/agent/v1/events', raw);
  return (await p.request('POST', '/api/agent/v1/events', { raw, headers: { authorization, 'content-type': 'application/json' } })).status;
}

const stateEvent = (serverId: string, status: string, extra: Record<string, unknown> = {}) => ({ serverId, status, at: new Date().toISOString(), ...extra });

/** A demo-game server on the fake node; its id. */
async function fakeNodeServer(name: string): Promise<string> {
  const bps = await blueprintsByKey(p, token);
  const r = await p.request('POST', '/api/v1/servers', { token, body: { name, nodeId: fakeNode.id, blueprintId: bps['demo-game'].id, memory: 64, cpu: 10, disk: 128 } });
  expect(r.status).toBe(201);
  return r.body.data.id;
}

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 2 } as any);
  const admin = await p.admin();
  token = (await p.newUser('owner')).token;
  const bps = await blueprintsByKey(p, token);
  const nodeId = await localNodeId(p, admin.token);
  const r = await p.request('POST', '/api/v1/servers', {
    token,
    body: { name: 'order', nodeId, blueprintId: bps['shell-command'].id, memory: 128, cpu: 50, disk: 256, variables: { COMMAND: 'trap "" TERM; echo ready; while :; do sleep 0.2; done' } },
  });
  expect(r.status).toBe(201);
  id = r.body.data.id;
  await waitForStatus(p, token, id, 'offline');
  fake = await startFakeNode();
  fakeNode = await createNode(p, admin.token, { port: (fake.address() as AddressInfo).port });
}, 120_000);
afterAll(async () => {
  await p?.stop();
  await new Promise<void>((r) => (fake ? fake.close(() => r()) : r()));
}, 60_000);

test('stop answers stopping and kill answers offline, every time', async () => {
  const answers: string[] = [];
  for (let i = 0; i < 12; i++) {
    expect((await api('POST', `/servers/${id}/start`)).status).toBe(200);
    await waitForStatus(p, token, id, 'running');
    const s = await api('POST', `/servers/${id}/stop`);
    const k = await api('POST', `/servers/${id}/kill`);
    answers.push(`${s.body.data.status}/${k.body.data.status}`);
    await waitForStatus(p, token, id, 'offline');
  }
  expect(answers).toEqual(Array(12).fill('stopping/offline'));
}, 120_000);

/** Legal moves of CONTRACT §3: a recorded status never goes back (running → starting, offline → stopping). */
const legal: Record<string, string[]> = {
  offline: ['starting', 'running'],
  starting: ['running', 'stopping', 'offline'],
  running: ['stopping', 'offline'],
  stopping: ['offline'],
};
const badMoves = (seen: string[]): string[] => {
  const out: string[] = [];
  for (let i = 1; i < seen.length; i++) if (seen[i] !== seen[i - 1] && !legal[seen[i - 1]!]?.includes(seen[i]!)) out.push(`${seen[i - 1]}→${seen[i]}`);
  return out;
};

test('the recorded status (REST) and the serverStatus subscription never go backwards over start/stop/kill cycles', async () => {
  const c = gqlWsClient(p.url, token);
  const sub = subscribe(c, 'subscription($id: ID!) { serverStatus(serverId: $id) { status } }', { id });
  const polled: string[] = [];
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const s = (await api('GET', `/servers/${id}`)).body.data.status;
      if (polled.at(-1) !== s) polled.push(s);
    }
  })();
  for (let i = 0; i < 8; i++) {
    await api('POST', `/servers/${id}/start`);
    await waitForStatus(p, token, id, 'running');
    await api('POST', `/servers/${id}/stop`);
    await api('POST', `/servers/${id}/kill`);
    await waitForStatus(p, token, id, 'offline');
  }
  // the node's queue delivers the last events of the cycles meanwhile
  await new Promise((r) => setTimeout(r, 1000));
  polling = false;
  await poller;
  const seen = sub.items.map((d) => d.serverStatus.status);
  sub.stop();
  await c.dispose();
  expect(polled).toContain('running');
  expect(seen).toContain('running');
  expect({ rest: badMoves(polled), graphql: badMoves(seen) }).toEqual({ rest: [], graphql: [] });
}, 120_000);

test('a status that reaches the serverStatus subscription after a newer one (another feed, a reconnect) is not sent', async () => {
  const c = gqlWsClient(p.url, token);
  const sub = subscribe(c, 'subscription($id: ID!) { serverStatus(serverId: $id) { status } }', { id });
  try {
    await api('POST', `/servers/${id}/start`);
    await waitForStatus(p, token, id, 'running');
    await until(() => sub.items.some((d) => d.serverStatus.status === 'running') || null, 10_000, 'running on the subscription');
    // what a second feed of the same node delivers late: the start's "starting", numbered before "running"
    const row = await p.orm.em.fork().findOneOrFail(Server, { id });
    const bus = (p.services.console as unknown as { bus: ConsoleBus }).bus;
    await bus.publish(id, { type: 'status', data: { status: 'starting', seq: row.statusSeq! - 1 } });
    await api('POST', `/servers/${id}/kill`);
    await waitForStatus(p, token, id, 'offline');
    await until(() => sub.items.at(-1)?.serverStatus.status === 'offline' || null, 10_000, 'offline on the subscription');
    const seen = sub.items.map((d) => d.serverStatus.status);
    expect(badMoves(seen)).toEqual([]);
    expect(seen.slice(seen.lastIndexOf('running'))).toEqual(['running', 'offline']);
  } finally {
    sub.stop();
    await c.dispose();
  }
}, 60_000);

test("the node's number of the recorded status is kept (as a number) and is in no output", async () => {
  const before = (await row(id)).statusSeq;
  expect(typeof before).toBe('number');
  const r = await api('POST', `/servers/${id}/start`);
  expect(r.body.data.status).toBe('running');
  const after = (await row(id)).statusSeq;
  expect(typeof after).toBe('number');
  expect(after!).toBeGreaterThan(before!);
  expect(Object.keys(r.body.data)).not.toContain('statusSeq');
  expect(Object.keys((await api('GET', `/servers/${id}`)).body.data)).not.toContain('statusSeq');
  const g = await p.request('POST', '/graphql', { token, body: { query: '{ __type(name: "Server") { fields { name } } }' } });
  expect(g.body.data.__type.fields.map((f: { name: string }) => f.name)).not.toContain('statusSeq');
  await api('POST', `/servers/${id}/kill`);
  await waitForStatus(p, token, id, 'offline');
}, 60_000);

test('a queued event older than the recorded status does not change it; how a process ended is recorded all the same', async () => {
  const sid = await fakeNodeServer('stale event');
  expect(await sendEvents([stateEvent(sid, 'offline', { seq: 100, exitCode: 0 })])).toBe(204);
  expect(await sendEvents([stateEvent(sid, 'running', { seq: 300 })])).toBe(204);
  // sent late: the start's `starting`, and a crash the node reported before the start
  expect(await sendEvents([stateEvent(sid, 'starting', { seq: 200 })])).toBe(204);
  expect(await sendEvents([stateEvent(sid, 'offline', { seq: 150, reason: 'crashed', exitCode: 3 })])).toBe(204);
  const got = (await api('GET', `/servers/${sid}`)).body.data;
  expect([got.status, got.lastStopReason, got.lastExitCode, got.crashCount]).toEqual(['running', 'crashed', 3, 1]);
  expect((await row(sid)).statusSeq).toBe(300);
  // in one batch, the newest stands whatever the order
  expect(await sendEvents([stateEvent(sid, 'offline', { seq: 500 }), stateEvent(sid, 'stopping', { seq: 400 })])).toBe(204);
  expect((await api('GET', `/servers/${sid}`)).body.data.status).toBe('offline');
  expect((await row(sid)).statusSeq).toBe(500);
  // an agent that predates the numbers: its events are applied as sent
  expect(await sendEvents([stateEvent(sid, 'running')])).toBe(204);
  expect((await api('GET', `/servers/${sid}`)).body.data.status).toBe('running');
  // a number more than a minute below the recorded one is another clock (the node's set back, its
  // agent moved): recorded, or the server would keep its status until that clock caught up
  expect(await sendEvents([stateEvent(sid, 'offline', { seq: 600 })])).toBe(204);
  expect(await sendEvents([stateEvent(sid, 'starting', { seq: 600 - 120_000_000 + 1_000_000_000 })])).toBe(204);
  expect(await sendEvents([stateEvent(sid, 'running', { seq: 5_000 })])).toBe(204);
  expect([(await api('GET', `/servers/${sid}`)).body.data.status, (await row(sid)).statusSeq]).toEqual(['running', 5_000]);
});

test("a power action's answer is recorded only over an older status", async () => {
  const sid = await fakeNodeServer('numbered answer');
  expect(await sendEvents([stateEvent(sid, 'running', { seq: 1000 })])).toBe(204);
  // the stop's answer `stopping` is older than the `running` recorded (it cannot be in practice: made up)
  powerAnswer = { status: 'stopping', statusSeq: 900 };
  let r = await api('POST', `/servers/${sid}/stop`);
  expect([r.status, r.body.data.status]).toEqual([200, 'running']);
  expect((await row(sid)).statusSeq).toBe(1000);
  powerAnswer = { status: 'stopping', statusSeq: 1100 };
  r = await api('POST', `/servers/${sid}/stop`);
  expect([r.status, r.body.data.status]).toEqual([200, 'stopping']);
  expect((await row(sid)).statusSeq).toBe(1100);
  // the events queued before the answer arrive after it
  expect(await sendEvents([stateEvent(sid, 'running', { seq: 1050 })])).toBe(204);
  expect((await api('GET', `/servers/${sid}`)).body.data.status).toBe('stopping');
});
