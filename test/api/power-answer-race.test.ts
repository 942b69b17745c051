/**
 * A power action's answer from the node (the status at that moment) never overwrites a status the
 * node reported meanwhile on its event queue: the node below (a small HTTP server playing a node
 * agent at the registered node's port) reports `running` on its signed queue, waits for the panel's
 * 204, and only then answers the start with `starting`. The server must stay `running`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { deriveNodeKey, signRequest } from '../../src/shared/node-protocol.js';
import { blueprintsByKey, createNode } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

type Answer = { status: number; body?: unknown };
type PowerHandler = (serverId: string, action: string) => Promise<Answer>;

let p: TestPlatform;
let admin: string;
let owner: { token: string };
let node: { id: string; token: string };
let fake: http.Server;
/** What the fake node does with the next power call (set by each test). */
let onPower: PowerHandler = async () => ({ status: 500 });
const powerCalls: { serverId: string; action: string }[] = [];

/** The agent's answer shape for a server (src/agent/server/server.ts state()). */
const stateOf = (id: string, status: string, extra: { exitCode?: number | null; reason?: string | null } = {}) => ({
  data: { id, status, exitCode: extra.exitCode ?? null, reason: extra.reason ?? null, startedAt: null, stats: {} },
});

/** Posts events on the node's signed queue, as its agent does; resolves with the panel's HTTP status. */
async function sendEvents(events: unknown[]): Promise<number> {
  const raw = JSON.stringify({ events });
  const authorization = signRequest(node.id, deriveNodeKey(node.token), 'POST', '/api/agent/v1/events', raw);
  const r = await p.request('POST', '/api/agent/v1/events', { raw, headers: { authorization, 'content-type': 'application/json' } });
  return r.status;
}

const stateEvent = (serverId: string, status: string, extra: Record<string, unknown> = {}) => ({ serverId, status, at: new Date().toISOString(), ...extra });

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The fake node: takes a server's spec (PUT), and answers power calls as `onPower` says. */
function startFakeNode(): Promise<http.Server> {
  const s = http.createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const url = req.url ?? '/';
      let answer: Answer;
      const spec = /^\/api\/servers\/([^/]+)$/.exec(url);
      const power = /^\/api\/servers\/([^/]+)\/power$/.exec(url);
      if (req.method === 'PUT' && spec) answer = { status: 200, body: stateOf(spec[1]!, 'installing') };
      else if (req.method === 'POST' && power) {
        const action = (JSON.parse(body) as { action: string }).action;
        powerCalls.push({ serverId: power[1]!, action });
        answer = await onPower(power[1]!, action);
      } else answer = { status: 404, body: { error: { code: 'NOT_FOUND', message: 'Unknown route', details: {} } } };
      const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
      res.writeHead(answer.status, text ? { 'content-type': 'application/json' } : {});
      res.end(text);
    })().catch((err) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'FAKE_NODE', message: String(err), details: {} } }));
    });
  });
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)));
}

async function statusOf(serverId: string): Promise<{ status: string; lastStopReason: string | null; lastExitCode: number | null }> {
  const r = await p.request('GET', `/api/v1/servers/${serverId}`, { token: owner.token });
  expect(r.status).toBe(200);
  const { status, lastStopReason, lastExitCode } = r.body.data;
  return { status, lastStopReason, lastExitCode };
}

/** A demo-game server on the fake node, its install reported done (offline). */
async function offlineServer(name: string): Promise<string> {
  const blueprints = await blueprintsByKey(p, owner.token);
  const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name, nodeId: node.id, blueprintId: blueprints['demo-game'].id, memory: 64, cpu: 10, disk: 128 } });
  expect(r.status).toBe(201);
  const id: string = r.body.data.id;
  expect(r.body.data.status).toBe('installing');
  expect(await sendEvents([stateEvent(id, 'offline', { exitCode: 0, reason: 'stopped' })])).toBe(204);
  expect((await statusOf(id)).status).toBe('offline');
  return id;
}

beforeAll(async () => {
  p = await startTestPlatform();
  admin = (await p.admin()).token;
  owner = await p.newUser('Owner');
  fake = await startFakeNode();
  node = await createNode(p, admin, { port: (fake.address() as AddressInfo).port });
}, 120_000);
afterAll(async () => {
  await p?.stop();
  await new Promise<void>((r) => (fake ? fake.close(() => r()) : r()));
}, 60_000);

test("the node's `running` event, applied before its answer `starting` to the start, is not overwritten", async () => {
  const id = await offlineServer('Raced');
  let eventStatus = 0;
  onPower = async (serverId, action) => {
    // the process is ready before the start's answer leaves the node: its event is applied first
    eventStatus = await sendEvents([stateEvent(serverId, 'running')]);
    return { status: 200, body: stateOf(serverId, action === 'start' ? 'starting' : 'offline') };
  };
  const r = await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token });
  expect(r.status).toBe(200);
  expect(eventStatus).toBe(204);
  expect(powerCalls.at(-1)).toEqual({ serverId: id, action: 'start' });
  expect((await statusOf(id)).status).toBe('running');
  // the answer to the start says what is recorded
  expect(r.body.data.status).toBe('running');
});

test('without an event meanwhile, the answer is recorded as before', async () => {
  const id = await offlineServer('Plain');
  onPower = async (serverId) => ({ status: 200, body: stateOf(serverId, 'starting') });
  const r = await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token });
  expect([r.status, r.body.data.status]).toEqual([200, 'starting']);
  expect((await statusOf(id)).status).toBe('starting');
});

test("a kill's answer records how the process ended (status, reason and exit code)", async () => {
  const id = await offlineServer('Killed');
  expect(await sendEvents([stateEvent(id, 'running')])).toBe(204);
  onPower = async (serverId) => ({ status: 200, body: stateOf(serverId, 'offline', { reason: 'killed', exitCode: null }) });
  const r = await p.request('POST', `/api/v1/servers/${id}/kill`, { token: owner.token });
  expect(r.status).toBe(200);
  expect([r.body.data.status, r.body.data.lastStopReason, r.body.data.lastExitCode]).toEqual(['offline', 'killed', null]);
  expect(await statusOf(id)).toEqual({ status: 'offline', lastStopReason: 'killed', lastExitCode: null });
});

test("a kill's answer does not overwrite how the node reported the end meanwhile", async () => {
  const id = await offlineServer('Crashed first');
  expect(await sendEvents([stateEvent(id, 'running')])).toBe(204);
  let eventStatus = 0;
  onPower = async (serverId) => {
    // the node reports the end on its queue (and then a start from its console) before it answers the kill
    eventStatus = await sendEvents([stateEvent(serverId, 'offline', { reason: 'crashed', exitCode: 3 }), stateEvent(serverId, 'starting')]);
    return { status: 200, body: stateOf(serverId, 'offline', { reason: 'killed', exitCode: null }) };
  };
  const r = await p.request('POST', `/api/v1/servers/${id}/kill`, { token: owner.token });
  expect([r.status, eventStatus]).toEqual([200, 204]);
  expect(await statusOf(id)).toEqual({ status: 'starting', lastStopReason: 'crashed', lastExitCode: 3 });
  expect([r.body.data.status, r.body.data.lastStopReason, r.body.data.lastExitCode]).toEqual(['starting', 'crashed', 3]);
});
