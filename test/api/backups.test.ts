/**
 * Backups through the panel with the local node agent and real files: a backup and its progress
 * (REST and the serverBackups subscription), the limit under 20 concurrent requests, restore (only
 * offline) after changes, the `.tar.gz` download, lock and delete, the activity log, and deleting the
 * server deleting its backups on the node.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { list as tarList } from 'tar';
import { blueprintsByKey, expectError, localNodeId, waitForStatus } from '../support/fixtures.js';
import { gqlWsClient, subscribe } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

jest.setTimeout(60_000);

let p: TestPlatform;
let owner: { token: string; user: any; email: string; password: string };
let serverId: string;
const B = (sub = '') => `/api/v1/servers/${serverId}/backups${sub}`;
const F = (sub = '', q = '') => `/api/v1/servers/${serverId}/files${sub}${q ? `?${q}` : ''}`;
const put = (file: string, text: string) => p.request('PUT', F('/contents', `path=${encodeURIComponent(file)}`), { token: owner.token, raw: text, headers: { 'content-type': 'text/plain' } });
const read = async (file: string) => (await p.request('GET', F('/contents', `path=${encodeURIComponent(file)}`), { token: owner.token })).text;

async function completed(id: string): Promise<any> {
  return until(async () => {
    const b = (await p.request('GET', B(`/${id}`), { token: owner.token })).body.data;
    return b?.status !== 'pending' ? b : null;
  }, 30_000, `backup ${id}`);
}

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, backupLimitDefault: 5 });
  const admin = await p.admin();
  owner = await p.newUser('owner');
  const nodeId = await localNodeId(p, admin.token);
  const bps = await blueprintsByKey(p, owner.token);
  const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'world', nodeId, blueprintId: bps['shell-command'].id, memory: 128, cpu: 50, disk: 128, variables: { COMMAND: 'echo ready; exec sleep 600' } } });
  serverId = r.body.data.id;
  expect(r.body.data.backupLimit).toBe(5);
  await waitForStatus(p, owner.token, serverId, 'offline');
  await p.request('POST', F('/directory'), { token: owner.token, body: { path: '/world' } });
  await put('/world/level.dat', 'the world');
  await put('/server.properties', 'motd=hello');
  await put('/debug.log', 'noise');
}, 90_000);
afterAll(async () => {
  await p?.stop();
}, 60_000);

test('a backup: pending with progress, then completed; the subscription follows it; the activity log has it', async () => {
  const ws = gqlWsClient(p.url, owner.token);
  try {
    const sub = subscribe(ws, 'subscription($id: ID!) { serverBackups(serverId: $id) { id status files size } }', { id: serverId });
    await new Promise((r) => setTimeout(r, 300)); // the subscription is registered
    const r = await p.request('POST', B(), { token: owner.token, body: { name: 'First', ignored: ['*.log'] } });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({ name: 'First', status: 'pending', locked: false, ignored: ['*.log'], serverId });
    const done = await completed(r.body.data.id);
    expect(done).toMatchObject({ status: 'completed', files: 2, size: 'the world'.length + 'motd=hello'.length, error: null });
    expect(done.sha256).toMatch(/^[0-9a-f]{64}$/);
    await until(() => sub.items.some((i: any) => i.serverBackups.id === r.body.data.id && i.serverBackups.status === 'completed'), 10_000, 'the completed backup on the subscription');
    sub.stop();
  } finally {
    await ws.dispose();
  }
  const log = await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:backup`, { token: owner.token });
  expect(log.body.data.map((e: any) => e.event)).toEqual(expect.arrayContaining(['server:backup.create', 'server:backup.complete']));
});

test('20 concurrent requests never pass the backup limit', async () => {
  const existing = (await p.request('GET', B(), { token: owner.token })).body.meta.total;
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => p.request('POST', B(), { token: owner.token, body: { name: `burst ${i}` } })));
  const made = answers.filter((a) => a.status === 201);
  expect(made.length).toBe(5 - existing);
  for (const a of answers.filter((x) => x.status !== 201)) expectError(a, 422, 'BACKUP_LIMIT');
  await Promise.all(made.map((a) => completed(a.body.data.id)));
  // room again once some go; a locked one stays
  const list = (await p.request('GET', B('?limit=100'), { token: owner.token })).body.data;
  for (const b of list.filter((x: any) => x.name.startsWith('burst'))) expect((await p.request('DELETE', B(`/${b.id}`), { token: owner.token })).status).toBe(204);
});

test('restore: refused while the server runs; afterwards the files are as they were (truncate removes the rest)', async () => {
  const first = (await p.request('GET', B('?limit=100'), { token: owner.token })).body.data.find((b: any) => b.name === 'First');
  expect((await p.request('POST', `/api/v1/servers/${serverId}/start`, { token: owner.token })).status).toBe(200);
  await waitForStatus(p, owner.token, serverId, 'running');
  expectError(await p.request('POST', B(`/${first.id}/restore`), { token: owner.token, body: {} }), 422, 'INVALID_STATE');
  await p.request('POST', `/api/v1/servers/${serverId}/kill`, { token: owner.token });
  await waitForStatus(p, owner.token, serverId, 'offline');
  await put('/world/level.dat', 'griefed');
  await put('/new.txt', 'added after the backup');
  await p.request('POST', F('/delete'), { token: owner.token, body: { paths: ['/server.properties'] } });
  const r = await p.request('POST', B(`/${first.id}/restore`), { token: owner.token, body: { truncate: true } });
  expect(r.status).toBe(200);
  await until(async () => {
    const log = await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:backup.restore-`, { token: owner.token });
    return log.body.data.length > 0 ? log.body.data[0] : null;
  }, 20_000, 'the end of the restore');
  await waitForStatus(p, owner.token, serverId, 'offline');
  expect(await read('/world/level.dat')).toBe('the world');
  expect(await read('/server.properties')).toBe('motd=hello');
  const names = (await p.request('GET', F('', 'path=/'), { token: owner.token })).body.data.map((e: any) => e.name);
  expect(names).not.toContain('new.txt');
  expect(names).not.toContain('debug.log'); // ignored by the backup, so truncated
});

test('the download is a .tar.gz of the backup', async () => {
  const first = (await p.request('GET', B('?limit=100'), { token: owner.token })).body.data.find((b: any) => b.name === 'First');
  const res = await fetch(`${p.url}${B(`/${first.id}/download`)}`, { headers: { authorization: `Bearer ${owner.token}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-disposition')).toBe(`attachment; filename="First.tar.gz"; filename*=UTF-8''First.tar.gz`);
  const names: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const parser = tarList({ onReadEntry: (e) => void names.push(e.path) });
    parser.on('end', resolve).on('error', reject);
    res.arrayBuffer().then((b) => Readable.from([Buffer.from(b)]).pipe(parser as unknown as NodeJS.WritableStream), reject);
  });
  expect(names.sort()).toEqual(['server.properties', 'world/', 'world/level.dat']);
});

test('a backup named in any language downloads under its name', async () => {
  // the name was cut to ASCII: "Avant la mise à jour" came as "Avant la mise _ jour.tar.gz"
  const made = await p.request('POST', B(), { token: owner.token, body: { name: 'Avant la mise à jour 世界' } });
  expect(made.status).toBe(201);
  await completed(made.body.data.id);
  const res = await fetch(`${p.url}${B(`/${made.body.data.id}/download`)}`, { headers: { authorization: `Bearer ${owner.token}` } });
  expect([res.status, res.headers.get('content-disposition')]).toEqual([200, `attachment; filename="Avant la mise _ jour __.tar.gz"; filename*=UTF-8''Avant%20la%20mise%20%C3%A0%20jour%20%E4%B8%96%E7%95%8C.tar.gz`]);
  await res.arrayBuffer();
  expect((await p.request('DELETE', B(`/${made.body.data.id}`), { token: owner.token })).status).toBe(204);
});

test('a locked backup cannot be deleted; unlocked it can', async () => {
  const first = (await p.request('GET', B('?limit=100'), { token: owner.token })).body.data.find((b: any) => b.name === 'First');
  expect((await p.request('POST', B(`/${first.id}/lock`), { token: owner.token })).body.data.locked).toBe(true);
  expectError(await p.request('DELETE', B(`/${first.id}`), { token: owner.token }), 422, 'INVALID_STATE');
  expect((await p.request('POST', B(`/${first.id}/unlock`), { token: owner.token })).body.data.locked).toBe(false);
  expect((await p.request('DELETE', B(`/${first.id}`), { token: owner.token })).status).toBe(204);
  expectError(await p.request('GET', B(`/${first.id}`), { token: owner.token }), 404, 'NOT_FOUND');
});

test('bad input: names, patterns, a limit of 0, foreign ids', async () => {
  expectError(await p.request('POST', B(), { token: owner.token, body: { name: '' } }), 422, 'VALIDATION_ERROR');
  expectError(await p.request('POST', B(), { token: owner.token, body: { ignored: 'logs/' } }), 422, 'VALIDATION_ERROR');
  // text PostgreSQL cannot store in a JSON column was a 500, and left no record behind either
  // past the limits of an ignore pattern (its matching backtracks): refused at once, not a failed backup later
  for (const bad of ['a\u0000b', 'a\ud800', '*a*a*a*a*a*b', `${'x'.repeat(256)}`]) {
    const r = await p.request('POST', B(), { token: owner.token, body: { ignored: ['ok/', bad] } });
    expectError(r, 422, 'VALIDATION_ERROR');
    expect(Object.keys(r.body.error.details.fields)).toEqual(['ignored.1']);
  }
  expectError(await p.request('GET', B('/not-a-uuid'), { token: owner.token }), 404, 'NOT_FOUND');
  expectError(await p.request('GET', B('/00000000-0000-4000-8000-000000000000'), { token: owner.token }), 404, 'NOT_FOUND');
  expect((await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: owner.token, body: { backupLimit: 0 } })).body.data.backupLimit).toBe(0);
  expectError(await p.request('POST', B(), { token: owner.token, body: {} }), 422, 'BACKUP_LIMIT');
  expectError(await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: owner.token, body: { backupLimit: -1 } }), 422, 'VALIDATION_ERROR');
  await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: owner.token, body: { backupLimit: 5 } });
});

test('a schedule\'s backup task waits for its backup and, at the limit, rotates out the oldest unlocked one', async () => {
  await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: owner.token, body: { backupLimit: 2 } });
  const locked = await p.request('POST', B(), { token: owner.token, body: { name: 'keep me', locked: true } });
  const oldest = await p.request('POST', B(), { token: owner.token, body: { name: 'oldest' } });
  await Promise.all([completed(locked.body.data.id), completed(oldest.body.data.id)]);
  const s = await p.request('POST', `/api/v1/servers/${serverId}/schedules`, { token: owner.token, body: { name: 'nightly backup', cron: '0 3 * * *', tasks: [{ action: 'backup' }, { action: 'command', payload: { command: 'after the backup' } }] } });
  expect(s.status).toBe(201);
  const run = await p.request('POST', `/api/v1/servers/${serverId}/schedules/${s.body.data.id}/run`, { token: owner.token });
  expect(run.status).toBe(201);
  const runs = await until(async () => {
    const r = (await p.request('GET', `/api/v1/servers/${serverId}/schedules/${s.body.data.id}/runs`, { token: owner.token })).body.data;
    return r[0]?.status !== 'running' ? r : null;
  }, 30_000, 'the run');
  // the backup task completed (the command task fails: the server is offline)
  expect(runs[0].tasks[0]).toEqual({ sequence: 1, status: 'completed', error: null });
  const names = (await p.request('GET', B('?limit=100'), { token: owner.token })).body.data.map((b: any) => `${b.name}:${b.status}`);
  expect(names).toContain('keep me:completed');
  expect(names.some((n: string) => n.startsWith('oldest'))).toBe(false);
  expect(names.filter((n: string) => n.startsWith('Scheduled') && n.endsWith(':completed'))).toHaveLength(1);
  const log = await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:backup.delete`, { token: owner.token });
  // the task's entries say which schedule and run made them, and who ran it (they had neither)
  const by = { scheduleId: s.body.data.id, runId: runs[0].id };
  expect(log.body.data[0]).toMatchObject({ actor: { id: owner.user.id }, properties: { rotated: true, name: 'oldest', ...by } });
  const created = await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:backup.create`, { token: owner.token });
  expect(created.body.data[0]).toMatchObject({ actor: { id: owner.user.id }, properties: { name: expect.stringMatching(/^Scheduled /), ...by } });
  await p.request('POST', B(`/${locked.body.data.id}/unlock`), { token: owner.token });
  await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: owner.token, body: { backupLimit: 5 } });
});

test('a backup task at the limit keeps the room it makes: manual backups sent meanwhile never take it', async () => {
  // the task deleted the oldest, a manual backup took the freed place, and the task failed at the limit
  await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: owner.token, body: { backupLimit: 2 } });
  const kept = async () => (await p.request('GET', B('?limit=100'), { token: owner.token })).body.data.filter((b: any) => b.status !== 'failed');
  const s = await p.request('POST', `/api/v1/servers/${serverId}/schedules`, { token: owner.token, body: { name: 'rotate', cron: '0 3 * * *', tasks: [{ action: 'backup' }] } });
  const outcomes: string[] = [];
  for (let round = 0; round < 6; round++) {
    for (const b of await kept()) await p.request('DELETE', B(`/${b.id}`), { token: owner.token });
    for (const name of ['a', 'b']) await completed((await p.request('POST', B(), { token: owner.token, body: { name } })).body.data.id);
    let running = true;
    const manual = async () => {
      while (running) {
        const r = await p.request('POST', B(), { token: owner.token, body: { name: 'manual' } });
        if (r.status === 201) await completed(r.body.data.id);
      }
    };
    const senders = Array.from({ length: 4 }, manual);
    expect((await p.request('POST', `/api/v1/servers/${serverId}/schedules/${s.body.data.id}/run`, { token: owner.token })).status).toBe(201);
    await p.services.scheduleRunner.idle();
    running = false;
    await Promise.all(senders);
    const runs = (await p.request('GET', `/api/v1/servers/${serverId}/schedules/${s.body.data.id}/runs?limit=1`, { token: owner.token })).body.data;
    outcomes.push(`${runs[0].tasks[0].status} ${runs[0].tasks[0].error ?? ''}`.trim());
    await completed((await kept()).find((b: any) => b.name.startsWith('Scheduled'))?.id ?? (await kept())[0].id);
  }
  expect(outcomes).toEqual(Array(6).fill('completed'));
  await p.request('DELETE', `/api/v1/servers/${serverId}/schedules/${s.body.data.id}`, { token: owner.token });
  for (const b of await kept()) await p.request('DELETE', B(`/${b.id}`), { token: owner.token });
  await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: owner.token, body: { backupLimit: 5 } });
});

test('a backup task of a server holding more backups than its limit deletes none of them and fails', async () => {
  // it deleted the oldest, then failed at the limit all the same: a backup lost and none made
  const made = [];
  for (const name of ['one', 'two', 'three']) made.push((await p.request('POST', B(), { token: owner.token, body: { name } })).body.data.id);
  await Promise.all(made.map((id) => completed(id)));
  const kept = async () => (await p.request('GET', B('?limit=100'), { token: owner.token })).body.data.filter((b: any) => b.status !== 'failed').map((b: any) => b.id);
  const before = await kept();
  await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: owner.token, body: { backupLimit: before.length - 1 } });
  const s = await p.request('POST', `/api/v1/servers/${serverId}/schedules`, { token: owner.token, body: { name: 'rotate', cron: '0 3 * * *', tasks: [{ action: 'backup' }] } });
  expect((await p.request('POST', `/api/v1/servers/${serverId}/schedules/${s.body.data.id}/run`, { token: owner.token })).status).toBe(201);
  const runs = await until(async () => {
    const r = (await p.request('GET', `/api/v1/servers/${serverId}/schedules/${s.body.data.id}/runs`, { token: owner.token })).body.data;
    return r[0]?.status !== 'running' ? r : null;
  }, 30_000, 'the run');
  expect(runs[0].tasks[0]).toMatchObject({ status: 'failed', error: expect.stringContaining(`more than its limit of ${before.length - 1}`) });
  expect((await kept()).sort()).toEqual([...before].sort());
  await p.request('DELETE', `/api/v1/servers/${serverId}/schedules/${s.body.data.id}`, { token: owner.token });
  for (const id of made) expect((await p.request('DELETE', B(`/${id}`), { token: owner.token })).status).toBe(204);
  await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: owner.token, body: { backupLimit: 5 } });
});

test('deleting the server deletes its backups on the node', async () => {
  const r = await p.request('POST', B(), { token: owner.token, body: { name: 'last' } });
  await completed(r.body.data.id);
  const store = path.join(p.config.dataDir, 'agent', 'backups', serverId);
  expect(readdirSync(path.join(store, 'manifests')).length).toBeGreaterThan(0);
  expect((await p.request('DELETE', `/api/v1/servers/${serverId}`, { token: owner.token })).status).toBe(204);
  expect(existsSync(store)).toBe(false);
});
