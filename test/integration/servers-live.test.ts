/**
 * The panel and its local node agent together, running real processes of the built-in blueprints:
 * power actions through REST, state reaching the database, the console channel, limits and crashes.
 */
import { ConsoleClient } from '../support/console-client.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { sleep } from '../support/wait.js';

let p: TestPlatform;
let admin: { token: string };
let owner: { token: string; user: any };
let stranger: { token: string };
let nodeId: string;
const blueprints: Record<string, any> = {};

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 3 });
  admin = await p.admin();
  owner = await p.newUser('Owner');
  stranger = await p.newUser('Stranger');
  const nodes = await p.request('GET', '/api/v1/nodes', { token: admin.token });
  nodeId = nodes.body.data.find((n: any) => n.name === 'local').id;
  const bps = await p.request('GET', '/api/v1/blueprints?limit=100', { token: owner.token });
  for (const b of bps.body.data) blueprints[b.key] = b;
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

async function createServer(blueprintKey: string, extra: Record<string, unknown> = {}) {
  const bp = blueprints[blueprintKey];
  const r = await p.request('POST', '/api/v1/servers', {
    token: owner.token,
    body: { name: `${blueprintKey} test`, nodeId, blueprintId: bp.id, memory: 256, cpu: 100, disk: 512, ...extra },
  });
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`);
  return r.body.data;
}

async function getServer(id: string) {
  return (await p.request('GET', `/api/v1/servers/${id}`, { token: owner.token })).body.data;
}

async function waitStatus(id: string, status: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    last = await getServer(id);
    if (last.status === status) return last;
    await sleep(100);
  }
  throw new Error(`server ${id} did not reach ${status}; last: ${JSON.stringify(last)}`);
}

async function power(id: string, action: string, token = owner.token) {
  return p.request('POST', `/api/v1/servers/${id}/${action}`, { token });
}

async function openConsole(id: string) {
  const t = await p.request('GET', `/api/v1/servers/${id}/console-token`, { token: owner.token });
  expect(t.status).toBe(200);
  return ConsoleClient.connect(t.body.data.socket, t.body.data.token);
}

test('demo game: start → running after its ready line → say hello echoes → stop via stop command → offline', async () => {
  const s = await createServer('demo-game');
  await waitStatus(s.id, 'offline');
  const started = await power(s.id, 'start');
  expect(started.status).toBe(200);
  expect(['starting', 'running']).toContain(started.body.data.status);
  const running = await waitStatus(s.id, 'running');
  expect(running.status).toBe('running');

  const c = await openConsole(s.id);
  // history first: the ready line was printed before we connected
  await c.waitFor((m) => m.type === 'console_output' && /Done \(/.test(m.data.line));
  const mark = c.messages.length;
  c.send({ type: 'command', data: 'say hello' });
  await c.waitFor((m) => m.type === 'console_output' && m.data.line.includes('[Server] hello'), 10_000, mark);

  const stopped = await power(s.id, 'stop');
  expect(stopped.status).toBe(200);
  await c.waitFor((m) => m.type === 'status' && m.data.status === 'offline');
  const off = await waitStatus(s.id, 'offline');
  expect(off.lastExitCode).toBe(0);
  c.close();
});

test('start on running and stop on offline are no-op 200s; kill ends the process at once', async () => {
  const s = await createServer('demo-game');
  await waitStatus(s.id, 'offline');
  expect((await power(s.id, 'stop')).status).toBe(200);
  await power(s.id, 'start');
  await waitStatus(s.id, 'running');
  const again = await power(s.id, 'start');
  expect(again.status).toBe(200);
  expect(again.body.data.status).toBe('running');
  const killed = await power(s.id, 'kill');
  expect(killed.status).toBe(200);
  // the answer already tells how the process ended (it used to lack the reason until the event landed)
  expect(killed.body.data).toMatchObject({ status: 'offline', lastStopReason: 'killed' });
  const off = await waitStatus(s.id, 'offline', 5000);
  expect(off.lastStopReason).toBe('killed');
});

test('a crash is detected and recorded with its exit code', async () => {
  const s = await createServer('demo-game');
  await waitStatus(s.id, 'offline');
  await power(s.id, 'start');
  await waitStatus(s.id, 'running');
  const c = await openConsole(s.id);
  c.send({ type: 'command', data: 'crash 3' });
  const off = await waitStatus(s.id, 'offline');
  expect(off.lastExitCode).toBe(3);
  expect(off.lastStopReason).toBe('crashed');
  expect(off.crashCount).toBe(1);
  expect(off.lastCrashAt).toEqual(expect.any(String));
  c.close();
});

test('a process over its memory limit is stopped and the reason recorded', async () => {
  const s = await createServer('demo-game', { memory: 64 });
  await waitStatus(s.id, 'offline');
  await power(s.id, 'start');
  await waitStatus(s.id, 'running');
  const c = await openConsole(s.id);
  c.send({ type: 'command', data: 'eat 300' });
  const off = await waitStatus(s.id, 'offline', 20_000);
  expect(off.lastStopReason).toBe('memory_limit');
  c.close();
});

test('restart works from offline and from running', async () => {
  const s = await createServer('demo-game');
  await waitStatus(s.id, 'offline');
  expect((await power(s.id, 'restart')).status).toBe(200);
  await waitStatus(s.id, 'running');
  const c = await openConsole(s.id);
  const mark = c.messages.length;
  expect((await power(s.id, 'restart')).status).toBe(200);
  await c.waitFor((m) => m.type === 'status' && m.data.status === 'stopping', 10_000, mark);
  await c.waitFor((m) => m.type === 'status' && m.data.status === 'running', 20_000, mark);
  await waitStatus(s.id, 'running');
  await power(s.id, 'kill');
  await waitStatus(s.id, 'offline');
  c.close();
});

test('every built-in blueprint installs, starts to running and stops', async () => {
  const keys = Object.keys(blueprints).filter((k) => blueprints[k].builtin);
  expect(keys.length).toBeGreaterThanOrEqual(3);
  for (const key of keys) {
    const s = await createServer(key);
    await waitStatus(s.id, 'offline', 60_000);
    await power(s.id, 'start');
    await waitStatus(s.id, 'running');
    await power(s.id, 'stop');
    const off = await waitStatus(s.id, 'offline', 20_000);
    expect(off.status).toBe('offline');
  }
}, 180_000);

test('console tokens and power are the owner’s (or an admin’s) only', async () => {
  const s = await createServer('demo-game');
  expect((await p.request('GET', `/api/v1/servers/${s.id}/console-token`, { token: stranger.token })).status).toBe(404);
  expect((await power(s.id, 'start', stranger.token)).status).toBe(404);
  expect((await p.request('GET', `/api/v1/servers/${s.id}/console-token`)).status).toBe(401);
  const t = await p.request('GET', `/api/v1/servers/${s.id}/console-token`, { token: admin.token });
  expect(t.status).toBe(200);
  expect(t.body.data.socket).toMatch(/^ws:\/\/.+:\d+\/console$/);
  expect(new Date(t.body.data.expiresAt).getTime()).toBeLessThanOrEqual(Date.now() + 600_000 + 1000);
});

test('node stats are live figures from the agent', async () => {
  const r = await p.request('GET', `/api/v1/nodes/${nodeId}/stats`, { token: admin.token });
  expect(r.status).toBe(200);
  expect(r.body.data.online).toBe(true);
  expect(r.body.data.cpu.cores).toBeGreaterThan(0);
  expect(r.body.data.memory.total).toBeGreaterThan(0);
  expect(r.body.data.uptime).toEqual(expect.any(Number));
  expect((await p.request('GET', `/api/v1/nodes/${nodeId}/stats`, { token: owner.token })).status).toBe(403);
  const node = await p.request('GET', `/api/v1/nodes/${nodeId}`, { token: admin.token });
  expect(node.body.data.status).toBe('online');
  expect(node.body.data.lastSeenAt).toEqual(expect.any(String));
});

test('with the agent stopped, lists still answer and power actions fail fast with NODE_UNAVAILABLE', async () => {
  const s = (await p.request('GET', '/api/v1/servers?limit=1', { token: owner.token })).body.data[0];
  await p.agent()!.close();
  const t0 = Date.now();
  const list = await p.request('GET', '/api/v1/servers', { token: owner.token });
  const listMs = Date.now() - t0;
  expect(list.status).toBe(200);
  expect(listMs).toBeLessThan(1000); // never waits on an agent
  const t1 = Date.now();
  const r = await power(s.id, 'start');
  expect(Date.now() - t1).toBeLessThan(2500);
  expect(r.status).toBe(422);
  expect(r.body.error.code).toBe('NODE_UNAVAILABLE');
  const stats = await p.request('GET', `/api/v1/nodes/${nodeId}/stats`, { token: admin.token });
  expect(stats.body.data).toMatchObject({ online: false, uptime: null, memory: { total: null, used: null } });
});
