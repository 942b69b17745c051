/**
 * What hangs off a server, node, blueprint or subuser when it goes away: live sessions end, the API
 * keeps its documented codes (no 500s), lists, counts and the activity log stay readable, files and
 * rows are cleaned up, and names, keys and emails can be used again.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { connectSftp } from '../support/sftp-client.js';
import { ConsoleClient } from '../support/console-client.js';
import { blueprintsByKey, createLocalShellServer, createNode, expectError, localNodeId, waitForStatus } from '../support/fixtures.js';
import { gqlWsClient, subscribe } from '../support/gql-ws.js';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { startRemoteNode } from '../support/remote-node.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { sleep, until } from '../support/wait.js';

jest.setTimeout(90_000);

let p: TestPlatform;
let admin: { token: string; user: any };
let owner: { token: string; user: any; email: string; password: string };
let friend: { token: string; user: any; email: string; password: string };
let nodeId: string;
let bps: Record<string, any>;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0 });
  admin = await p.admin();
  owner = await p.newUser('owner');
  friend = await p.newUser('friend');
  nodeId = await localNodeId(p, admin.token);
  bps = await blueprintsByKey(p, owner.token);
}, 90_000);
afterAll(async () => {
  await p?.stop();
}, 60_000);

const makeServer = (name: string, command = 'echo ready; exec sleep 600'): Promise<string> => createLocalShellServer(p, admin.token, owner.token, name, command);

test('deleting a server ends a subuser\u2019s console socket and GraphQL subscription, removes its schedules, and leaves lists, stats and the activity log readable', async () => {
  const id = await makeServer('doomed');
  expect((await p.request('POST', `/api/v1/servers/${id}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['websocket.connect', 'schedule.create', 'schedule.read', 'activity.read', 'backup.create', 'backup.delete'] } })).status).toBe(201);
  const sched = await p.request('POST', `/api/v1/servers/${id}/schedules`, { token: friend.token, body: { name: 'every minute', cron: '* * * * *', tasks: [{ action: 'backup', payload: {} }] } });
  expect(sched.status).toBe(201);
  await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token });
  await waitForStatus(p, owner.token, id, 'running');

  const tok = await p.request('GET', `/api/v1/servers/${id}/console-token`, { token: friend.token });
  expect(tok.status).toBe(200);
  const con = await ConsoleClient.connect(tok.body.data.socket, tok.body.data.token);
  await con.next('auth_success');
  const ws = gqlWsClient(p.url, friend.token);
  const sub = subscribe(ws, 'subscription($id: ID!) { serverStatus(serverId: $id) { status } }', { id });
  await sleep(500);
  try {
    expect((await p.request('DELETE', `/api/v1/servers/${id}`, { token: owner.token })).status).toBe(204);
    await con.waitClosed(5_000);
    await until(() => sub.done, 5_000, 'the subscription to end');
  } finally {
    con.close();
    await ws.dispose();
  }
  expectError(await p.request('GET', `/api/v1/servers/${id}`, { token: friend.token }), 404, 'NOT_FOUND');
  expectError(await p.request('GET', `/api/v1/servers/${id}/schedules/${sched.body.data.id}`, { token: owner.token }), 404, 'NOT_FOUND');
  expectError(await p.request('DELETE', `/api/v1/servers/${id}`, { token: owner.token }), 404, 'NOT_FOUND');
  const listed = await p.request('GET', '/api/v1/servers', { token: friend.token });
  expect(listed.status).toBe(200);
  expect(listed.body.data.map((s: any) => s.id)).not.toContain(id);
  expect(listed.body.meta.total).toBe(listed.body.data.length);
  expect((await p.request('GET', '/api/v1/admin/stats', { token: admin.token })).status).toBe(200);
  const act = await p.request('GET', `/api/v1/admin/activity?serverId=${id}&limit=100`, { token: admin.token });
  expect(act.status).toBe(200);
  expect(act.body.data.map((e: any) => e.event)).toContain('server:delete');
  expect((await p.request('GET', '/api/v1/users/me/activity', { token: friend.token })).status).toBe(200);
  // the name again
  const again = await makeServer('doomed');
  expect(again).not.toBe(id);
  expect((await p.request('DELETE', `/api/v1/servers/${again}`, { token: owner.token })).status).toBe(204);
});

test('deleting a server while a backup is pending: no 500, the backup disappears, the backup events do not break the log', async () => {
  const id = await makeServer('backing', 'head -c 60000000 /dev/urandom > big.bin; echo ready; exec sleep 600');
  await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token });
  await waitForStatus(p, owner.token, id, 'running');
  await until(async () => (await p.request('GET', `/api/v1/servers/${id}/files?path=/`, { token: owner.token })).body.data?.some((e: any) => e.name === 'big.bin'), 20_000, 'big file');
  const b = await p.request('POST', `/api/v1/servers/${id}/backups`, { token: owner.token, body: { name: 'slow' } });
  expect(b.status).toBe(201);
  expect((await p.request('DELETE', `/api/v1/servers/${id}`, { token: owner.token })).status).toBe(204);
  expectError(await p.request('GET', `/api/v1/servers/${id}/backups/${b.body.data.id}`, { token: owner.token }), 404, 'NOT_FOUND');
  await sleep(3000);
  expect(existsSync(path.join(p.config.dataDir, 'agent', 'backups', id))).toBe(false);
  expect(existsSync(path.join(p.config.dataDir, 'agent', 'servers', id))).toBe(false);
  const act = await p.request('GET', `/api/v1/admin/activity?serverId=${id}&limit=100`, { token: admin.token });
  expect(act.status).toBe(200);
  expect((await p.request('GET', '/api/v1/admin/stats', { token: admin.token })).status).toBe(200);
});

test('an upload in flight when its server is deleted does not answer 500 and leaves no files behind', async () => {
  const id = await makeServer('uploading');
  const boundary = 'XyZboundary';
  const big = Buffer.alloc(5 * 1024 * 1024, 97);
  let sent = 0;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="up.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const body = new ReadableStream({
    async pull(ctrl) {
      if (sent === 0) ctrl.enqueue(head);
      if (sent >= big.length) {
        ctrl.enqueue(tail);
        ctrl.close();
        return;
      }
      ctrl.enqueue(big.subarray(sent, sent + 256 * 1024));
      sent += 256 * 1024;
      await sleep(100);
    },
  });
  const upload = fetch(`${p.url}/api/v1/servers/${id}/files/upload?path=/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
    duplex: 'half',
  } as any).then(async (r) => ({ status: r.status, text: await r.text() }), (e) => ({ status: 0, text: String(e) }));
  await sleep(700);
  expect((await p.request('DELETE', `/api/v1/servers/${id}`, { token: owner.token })).status).toBe(204);
  const r = await upload;
  expect(r.status).not.toBe(500);
  expect(r.status).not.toBe(201);
  await sleep(1000);
  expect(existsSync(path.join(p.config.dataDir, 'agent', 'servers', id))).toBe(false);
});

test('deleting a server while its install script runs stops the script: nothing comes back on disk', async () => {
  const bp = await p.request('POST', '/api/v1/admin/blueprints', { token: admin.token, body: { key: `slow-install-${Date.now()}`, name: 'Slow install', startup: 'sleep 600', stop: 'SIGTERM', install: 'sleep 4; echo late > late.txt; mkdir -p later', defaults: { memory: 64, cpu: 10, disk: 128 } } });
  expect(bp.status).toBe(201);
  const s = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'installing', nodeId, blueprintId: bp.body.data.id, memory: 64, cpu: 10, disk: 128 } });
  expect(s.status).toBe(201);
  const id = s.body.data.id;
  await sleep(1000);
  expect((await p.request('GET', `/api/v1/servers/${id}`, { token: owner.token })).body.data.status).toBe('installing');
  expect((await p.request('DELETE', `/api/v1/servers/${id}`, { token: owner.token })).status).toBe(204);
  await sleep(6000);
  expect(existsSync(path.join(p.config.dataDir, 'agent', 'servers', id))).toBe(false);
  expect((await p.request('DELETE', `/api/v1/admin/blueprints/${bp.body.data.id}`, { token: admin.token })).status).toBe(204);
});

test('a custom blueprint: delete refused while used (422 INVALID_STATE), then deleted, its key reusable', async () => {
  const key = `probe-bp-${Date.now()}`;
  const mk = () => p.request('POST', '/api/v1/admin/blueprints', { token: admin.token, body: { key, name: 'Probe', startup: 'sleep 600', stop: 'SIGTERM', defaults: { memory: 64, cpu: 10, disk: 128 } } });
  const bp = await mk();
  expect(bp.status).toBe(201);
  const s = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'bp-user', nodeId, blueprintId: bp.body.data.id, memory: 64, cpu: 10, disk: 128 } });
  expect(s.status).toBe(201);
  expectError(await p.request('DELETE', `/api/v1/admin/blueprints/${bp.body.data.id}`, { token: admin.token }), 422, 'INVALID_STATE');
  await until(async () => (await p.request('GET', `/api/v1/servers/${s.body.data.id}`, { token: owner.token })).body.data?.status !== 'installing', 20_000, 'installed');
  expect((await p.request('DELETE', `/api/v1/servers/${s.body.data.id}`, { token: owner.token })).status).toBe(204);
  expect((await p.request('DELETE', `/api/v1/admin/blueprints/${bp.body.data.id}`, { token: admin.token })).status).toBe(204);
  expectError(await p.request('GET', `/api/v1/blueprints/${bp.body.data.id}`, { token: owner.token }), 404, 'NOT_FOUND');
  const list = await p.request('GET', '/api/v1/blueprints?limit=100', { token: owner.token });
  expect(list.body.data.map((b: any) => b.id)).not.toContain(bp.body.data.id);
  expect(list.body.meta.total).toBe(list.body.data.length);
  expect((await mk()).status).toBe(201);
});

test('a node that went away: its server is force-deleted, then the node deleted; name reusable; lists and stats consistent', async () => {
  const name = `gone-${Date.now()}`;
  const node = await createNode(p, admin.token, { name });
  const rot = await p.request('POST', `/api/v1/admin/nodes/${node.id}/token`, { token: admin.token });
  expect(rot.status).toBe(201);
  const s = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'orphan', nodeId: node.id, blueprintId: bps['demo-game'].id, memory: 64, cpu: 10, disk: 128 } });
  expect(s.status).toBe(201);
  await p.request('POST', `/api/v1/servers/${s.body.data.id}/schedules`, { token: owner.token, body: { name: 'x', cron: '* * * * *', tasks: [{ action: 'backup', payload: {} }] } });
  expect((await p.request('POST', `/api/v1/servers/${s.body.data.id}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['websocket.connect'] } })).status).toBe(201);
  expectError(await p.request('DELETE', `/api/v1/nodes/${node.id}`, { token: admin.token }), 422, 'NODE_HAS_SERVERS');
  expectError(await p.request('DELETE', `/api/v1/servers/${s.body.data.id}`, { token: owner.token }), 422, 'NODE_UNAVAILABLE');
  expectError(await p.request('DELETE', `/api/v1/servers/${s.body.data.id}?force=true`, { token: owner.token }), 403, 'FORBIDDEN');
  expect((await p.request('DELETE', `/api/v1/servers/${s.body.data.id}?force=true`, { token: admin.token })).status).toBe(204);
  expect((await p.request('DELETE', `/api/v1/nodes/${node.id}`, { token: admin.token })).status).toBe(204);
  expectError(await p.request('GET', `/api/v1/nodes/${node.id}`, { token: admin.token }), 404, 'NOT_FOUND');
  expectError(await p.request('GET', `/api/v1/nodes/${node.id}/stats`, { token: admin.token }), 404, 'NOT_FOUND');
  expectError(await p.request('POST', `/api/v1/admin/nodes/${node.id}/token`, { token: admin.token }), 404, 'NOT_FOUND');
  const nodes = await p.request('GET', '/api/v1/nodes?limit=100', { token: admin.token });
  expect(nodes.body.data.map((n: any) => n.id)).not.toContain(node.id);
  expect(nodes.body.meta.total).toBe(nodes.body.data.length);
  const stats = await p.request('GET', '/api/v1/admin/stats', { token: admin.token });
  expect(stats.status).toBe(200);
  expect((await p.request('GET', `/api/v1/admin/activity?event=node:delete`, { token: admin.token })).status).toBe(200);
  const again = await p.request('POST', '/api/v1/nodes', { token: admin.token, body: { name, fqdn: '127.0.0.1', port: 1, memory: 8192, disk: 65536, cpuCores: 4 } });
  expect(again.status).toBe(201);
  expect((await p.request('DELETE', `/api/v1/nodes/${again.body.data.id}`, { token: admin.token })).status).toBe(204);
});

test('rotating the token of a node with a live server and console: the API keeps its codes; the node can be emptied and deleted', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'probe-lifecycle-node-'));
  const remote = await startRemoteNode(p, admin.token, `rot-${Date.now()}`, dir);
  try {
    const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'on-remote', nodeId: remote.nodeId, blueprintId: bps['shell-command'].id, memory: 64, cpu: 10, disk: 128, variables: { COMMAND: 'echo ready; exec sleep 600' } } });
    expect(r.status).toBe(201);
    const id = r.body.data.id;
    await waitForStatus(p, owner.token, id, 'offline');
    await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token });
    await waitForStatus(p, owner.token, id, 'running');
    const tok = await p.request('GET', `/api/v1/servers/${id}/console-token`, { token: owner.token });
    const con = await ConsoleClient.connect(tok.body.data.socket, tok.body.data.token);
    await con.next('auth_success');
    const rot = await p.request('POST', `/api/v1/admin/nodes/${remote.nodeId}/token`, { token: admin.token });
    expect(rot.status).toBe(201);
    // the agent still holds the old token: every call the panel makes to it is refused -> NODE_UNAVAILABLE, never 500
    const answers: Record<string, number> = {};
    answers.get = (await p.request('GET', `/api/v1/servers/${id}`, { token: owner.token })).status;
    answers.list = (await p.request('GET', '/api/v1/servers', { token: owner.token })).status;
    answers.stop = (await p.request('POST', `/api/v1/servers/${id}/stop`, { token: owner.token })).status;
    answers.files = (await p.request('GET', `/api/v1/servers/${id}/files?path=/`, { token: owner.token })).status;
    answers.backup = (await p.request('POST', `/api/v1/servers/${id}/backups`, { token: owner.token, body: {} })).status;
    answers.stats = (await p.request('GET', `/api/v1/nodes/${remote.nodeId}/stats`, { token: admin.token })).status;
    answers.token = (await p.request('GET', `/api/v1/servers/${id}/console-token`, { token: owner.token })).status;
    answers.adminStats = (await p.request('GET', '/api/v1/admin/stats', { token: admin.token })).status;
    const del = await p.request('DELETE', `/api/v1/servers/${id}`, { token: owner.token });
    answers.del = del.status;
    expect(Object.values(answers).filter((s) => s >= 500)).toEqual([]);
    expect(del.status).toBe(422);
    con.close();
    expect((await p.request('DELETE', `/api/v1/servers/${id}?force=true`, { token: admin.token })).status).toBe(204);
    expect((await p.request('DELETE', `/api/v1/nodes/${remote.nodeId}`, { token: admin.token })).status).toBe(204);
    const nodes = await p.request('GET', '/api/v1/nodes?limit=100', { token: admin.token });
    expect(nodes.body.data.map((n: any) => n.id)).not.toContain(remote.nodeId);
    await sleep(2000);
    expect((await p.request('GET', '/api/v1/admin/stats', { token: admin.token })).status).toBe(200);
  } finally {
    await remote.agent.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('deleting a server ends the SFTP sessions on it (owner and subuser) and nothing written afterwards lands on disk', async () => {
  const id = await makeServer('sftp-doomed');
  const sub = await p.newUser('sftp-sub');
  expect((await p.request('POST', `/api/v1/servers/${id}/subusers`, { token: owner.token, body: { email: sub.email, permissions: ['file.sftp', 'file.read', 'file.create', 'file.update'] } })).status).toBe(201);
  const details = await until(async () => {
    const r = await p.request('GET', `/api/v1/servers/${id}/sftp`, { token: owner.token });
    return r.body.data?.port ? r.body.data : null;
  }, 20_000, 'sftp port');
  const a = await connectSftp({ port: details.port, username: `${owner.email}.${id.slice(0, 8)}`, password: owner.password });
  const b = await connectSftp({ port: details.port, username: `${sub.email}.${id.slice(0, 8)}`, password: sub.password });
  try {
    await a.writeFile('/before.txt', 'x');
    expect((await p.request('DELETE', `/api/v1/servers/${id}`, { token: owner.token })).status).toBe(204);
    const late = await Promise.allSettled([a.writeFile('/after.txt', 'late'), b.mkdir('/afterdir')]);
    const ended = await Promise.all([a.closed, b.closed].map((c) => Promise.race([c.then(() => true), sleep(2000).then(() => false)])));
    expect({ ended, late: late.map((x) => x.status) }).toEqual({ ended: [true, true], late: ['rejected', 'rejected'] });
    expect(existsSync(path.join(p.config.dataDir, 'agent', 'servers', id))).toBe(false);
  } finally {
    a.end();
    b.end();
  }
});

test('owner cannot be changed through PATCH; a removed subuser can be added again; stats count what lists show', async () => {
  const id = await makeServer('owned');
  const other = await p.newUser('other');
  const patch = await p.request('PATCH', `/api/v1/servers/${id}`, { token: owner.token, body: { ownerId: other.user.id } });
  expect([200, 422]).toContain(patch.status);
  expect((await p.request('GET', `/api/v1/servers/${id}`, { token: owner.token })).body.data.ownerId).toBe(owner.user.id);
  expectError(await p.request('GET', `/api/v1/servers/${id}`, { token: other.token }), 404, 'NOT_FOUND');
  const add = () => p.request('POST', `/api/v1/servers/${id}/subusers`, { token: owner.token, body: { email: other.email, permissions: ['websocket.connect'] } });
  expect((await add()).status).toBe(201);
  expect((await p.request('DELETE', `/api/v1/servers/${id}/subusers/${other.user.id}`, { token: owner.token })).status).toBe(204);
  expectError(await p.request('DELETE', `/api/v1/servers/${id}/subusers/${other.user.id}`, { token: owner.token }), 404, 'NOT_FOUND');
  expectError(await p.request('GET', `/api/v1/servers/${id}`, { token: other.token }), 404, 'NOT_FOUND');
  expect((await add()).status).toBe(201);
  const subs = await p.request('GET', `/api/v1/servers/${id}/subusers`, { token: owner.token });
  expect(subs.body.meta.total).toBe(1);
  expect((await p.request('DELETE', `/api/v1/servers/${id}`, { token: owner.token })).status).toBe(204);
  const all = await p.request('GET', '/api/v1/servers?limit=100', { token: admin.token });
  const stats = await p.request('GET', '/api/v1/admin/stats', { token: admin.token });
  const total = stats.body.data.servers?.total ?? stats.body.data.servers;
  expect(total).toBe(all.body.meta.total);
  expect((await p.request('GET', '/api/v1/servers', { token: other.token })).body.meta.total).toBe(0);
});

test('deleting a schedule while its run waits between tasks: the tasks left are not performed', async () => {
  const id = await makeServer('sched-del', 'echo ready; exec cat');
  await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token });
  await waitForStatus(p, owner.token, id, 'running');
  const s = await p.request('POST', `/api/v1/servers/${id}/schedules`, { token: owner.token, body: { name: 'two steps', cron: '0 0 1 1 *', enabled: false, tasks: [
    { action: 'command', payload: { command: 'say first' } },
    { action: 'command', payload: { command: 'say second' }, offsetSeconds: 5 },
  ] } });
  expect(s.status).toBe(201);
  expect((await p.request('POST', `/api/v1/servers/${id}/schedules/${s.body.data.id}/run`, { token: owner.token })).status).toBeLessThan(300);
  await sleep(1000);
  expect((await p.request('DELETE', `/api/v1/servers/${id}/schedules/${s.body.data.id}`, { token: owner.token })).status).toBe(204);
  await sleep(7000);
  const act = await p.request('GET', `/api/v1/servers/${id}/activity?event=server:console.command&limit=100`, { token: owner.token });
  const cmds = act.body.data.map((e: any) => e.properties.command);
  await p.request('DELETE', `/api/v1/servers/${id}`, { token: owner.token });
  expect(cmds).toContain('say first');
  expect(cmds).not.toContain('say second');
});

test('a console token from before a subuser was removed and re-added with fewer keys does not bring the old keys back', async () => {
  const id = await makeServer('readd', 'echo ready; exec cat');
  await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token });
  await waitForStatus(p, owner.token, id, 'running');
  const sub = await p.newUser('readd');
  const add = (permissions: string[]) => p.request('POST', `/api/v1/servers/${id}/subusers`, { token: owner.token, body: { email: sub.email, permissions } });
  expect((await add(['websocket.connect', 'control.console', 'control.stop'])).status).toBe(201);
  const old = await p.request('GET', `/api/v1/servers/${id}/console-token`, { token: sub.token });
  expect((await p.request('DELETE', `/api/v1/servers/${id}/subusers/${sub.user.id}`, { token: owner.token })).status).toBe(204);
  await sleep(1100);
  expect((await add(['websocket.connect'])).status).toBe(201);
  await sleep(500);
  const c = await ConsoleClient.open(old.body.data.socket);
  try {
    c.send({ type: 'auth', token: old.body.data.token });
    await c.waitFor((m) => m.type === 'auth_success' || m.type === 'error', 5_000).catch(() => null);
    if (c.closed) return; // refused: fine
    c.send({ type: 'command', data: 'say sneaky' });
    c.send({ type: 'power', data: 'kill' });
    await sleep(1500);
    const log = await p.request('GET', `/api/v1/servers/${id}/activity?actorId=${sub.user.id}&limit=100`, { token: owner.token });
    expect(log.body.data.map((e: any) => e.event).filter((e: string) => e.startsWith('server:console') || e.startsWith('server:power'))).toEqual([]);
    expect((await p.request('GET', `/api/v1/servers/${id}`, { token: owner.token })).body.data.status).toBe('running');
  } finally {
    c.close();
    await p.request('DELETE', `/api/v1/servers/${id}`, { token: owner.token });
  }
});

test('an email given up by one account can be taken by a new one, which gets none of the old account\u2019s access', async () => {
  const id = await makeServer('email-reuse');
  const a = await p.newUser('email-a');
  expect((await p.request('POST', `/api/v1/servers/${id}/subusers`, { token: owner.token, body: { email: a.email, permissions: ['websocket.connect', 'file.sftp', 'file.read'] } })).status).toBe(201);
  const oldEmail = a.email;
  const newEmail = `moved-${Date.now()}@example.com`;
  expect((await p.request('PATCH', '/api/v1/users/me', { token: a.token, body: { email: newEmail, currentPassword: a.password } })).status).toBe(200);
  const b = await p.request('POST', '/api/v1/auth/signup', { body: { email: oldEmail.toUpperCase(), password: 'another-password-1', name: 'B' } });
  expect(b.status).toBe(201);
  expectError(await p.request('GET', `/api/v1/servers/${id}`, { token: b.body.data.token }), 404, 'NOT_FOUND');
  const subs = await p.request('GET', `/api/v1/servers/${id}/subusers`, { token: owner.token });
  expect(subs.body.data.map((x: any) => x.email)).toEqual([newEmail]);
  const details = await until(async () => {
    const r = await p.request('GET', `/api/v1/servers/${id}/sftp`, { token: a.token });
    return r.body.data?.port ? r.body.data : null;
  }, 20_000, 'sftp port');
  expect(details.username).toBe(`${newEmail}.${id.slice(0, 8)}`);
  await expect(connectSftp({ port: details.port, username: `${oldEmail}.${id.slice(0, 8)}`, password: 'another-password-1' })).rejects.toThrow();
  await expect(connectSftp({ port: details.port, username: `${oldEmail}.${id.slice(0, 8)}`, password: a.password })).rejects.toThrow();
  const c = await connectSftp({ port: details.port, username: details.username, password: a.password });
  c.end();
  expect((await p.request('DELETE', `/api/v1/servers/${id}`, { token: owner.token })).status).toBe(204);
});
