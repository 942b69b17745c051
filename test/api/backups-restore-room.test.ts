/**
 * Backups and the disk limit's room, and the ignore file, through the panel with the local node agent
 * and real files.
 * - A restore refused for DISK_LIMIT, followed at once by one with `truncate`: the truncate's deletes
 *   make the room the backup's file needs (the disk budget measures again after them), so the restore
 *   completes. It was: the budget, measured before the deletes and kept for a few seconds, refused
 *   the file, and the server was left with neither its files nor the backup's.
 * - `.hostpanelignore`: a missing one means no patterns; one past 64 KiB fails the backup naming it
 *   (it was silently ignored: everything was backed up).
 */
import { createHash } from 'node:crypto';
import { blueprintsByKey, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

jest.setTimeout(120_000);

let p: TestPlatform;
let owner: { token: string; user: any; email: string; password: string };
let nodeId: string;
let bps: Record<string, any>;
const B = (sid: string, sub = '') => `/api/v1/servers/${sid}/backups${sub}`;
const F = (sid: string, sub = '', q = '') => `/api/v1/servers/${sid}/files${sub}${q ? `?${q}` : ''}`;
const put = (sid: string, file: string, text: string) => p.request('PUT', F(sid, '/contents', `path=${encodeURIComponent(file)}`), { token: owner.token, raw: text, headers: { 'content-type': 'text/plain' } });
const names = async (sid: string) => ((await p.request('GET', F(sid, '', 'path=/'), { token: owner.token })).body.data as any[]).map((e) => e.name).sort();
const sha = async (sid: string, file: string) => {
  const r = await fetch(p.url + F(sid, '/download', `path=${encodeURIComponent(file)}`), { headers: { authorization: `Bearer ${owner.token}` } });
  if (r.status !== 200) return `status ${r.status}`;
  return createHash('sha256').update(Buffer.from(await r.arrayBuffer())).digest('hex');
};

async function newServer(name: string, command: string): Promise<string> {
  const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name, nodeId, blueprintId: bps['shell-command'].id, memory: 128, cpu: 50, disk: 128, variables: { COMMAND: command } } });
  expect(r.status).toBe(201);
  await waitForStatus(p, owner.token, r.body.data.id, 'offline');
  return r.body.data.id;
}

/** Runs `script` as the server's process (it ends by making `done`), then stops the server. */
async function runScript(sid: string, script: string): Promise<void> {
  expect((await put(sid, '/make.sh', script)).status).toBeLessThan(300);
  await p.request('POST', `/api/v1/servers/${sid}/start`, { token: owner.token });
  await waitForStatus(p, owner.token, sid, 'running');
  await until(async () => ((await names(sid)).includes('done') ? true : null), 30_000, 'script');
  await p.request('POST', `/api/v1/servers/${sid}/kill`, { token: owner.token });
  await waitForStatus(p, owner.token, sid, 'offline');
  expect((await p.request('POST', F(sid, '/delete'), { token: owner.token, body: { paths: ['/done', '/make.sh'] } })).status).toBeLessThan(300);
}

async function backup(sid: string, body: any = {}): Promise<any> {
  const r = await p.request('POST', B(sid), { token: owner.token, body });
  expect(r.status).toBe(201);
  return until(async () => {
    const b = (await p.request('GET', B(sid, `/${r.body.data.id}`), { token: owner.token })).body.data;
    return b?.status !== 'pending' ? b : null;
  }, 30_000, 'backup');
}

/** Restores, and returns the restore's end as the activity log has it (the `n`th restore of the server). */
async function restore(sid: string, id: string, truncate: boolean, n: number): Promise<{ event: string; error?: string }> {
  expect((await p.request('POST', B(sid, `/${id}/restore`), { token: owner.token, body: { truncate } })).status).toBe(200);
  await waitForStatus(p, owner.token, sid, 'offline');
  const log = await until(async () => {
    const l = (await p.request('GET', `/api/v1/servers/${sid}/activity?event=server:backup.restore-&limit=10`, { token: owner.token })).body.data;
    return l.length >= n ? l : null;
  }, 20_000, 'restore end');
  return { event: log[0].event, error: log[0].properties?.error };
}

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, backupLimitDefault: 5 });
  const admin = await p.admin();
  owner = await p.newUser('owner');
  nodeId = await localNodeId(p, admin.token);
  bps = await blueprintsByKey(p, owner.token);
}, 120_000);
afterAll(async () => {
  await p?.stop();
}, 60_000);

test('a restore refused for the disk limit, then one with truncate: the deletes make room and the backup comes back whole', async () => {
  const sid = await newServer('room', 'sh ./make.sh; echo ready; exec sleep 600');
  // 80 MB in a 128 MiB limit: the backup's a.bin and the server's b.bin do not fit together
  await runScript(sid, 'head -c 80000000 /dev/urandom > a.bin; touch done');
  const A = await sha(sid, '/a.bin');
  expect(A).toMatch(/^[0-9a-f]{64}$/);
  const b = await backup(sid, { name: 'a' });
  expect(b.status).toBe('completed');
  expect((await p.request('POST', F(sid, '/delete'), { token: owner.token, body: { paths: ['/a.bin'] } })).status).toBeLessThan(300);
  await runScript(sid, 'head -c 80000000 /dev/urandom > b.bin; touch done');
  const B2 = await sha(sid, '/b.bin');

  // without truncate: a.bin does not fit beside b.bin; the restore fails naming it, b.bin is kept
  const first = await restore(sid, b.id, false, 1);
  expect(first.event).toBe('server:backup.restore-fail');
  expect(first.error).toContain('/a.bin');
  expect(await sha(sid, '/b.bin')).toBe(B2);

  // at once with truncate: b.bin goes, and a.bin then fits
  const second = await restore(sid, b.id, true, 2);
  expect(second).toEqual({ event: 'server:backup.restore-complete', error: undefined });
  expect(await names(sid)).toEqual(['a.bin']);
  expect(await sha(sid, '/a.bin')).toBe(A);
});

test('.hostpanelignore: missing means no patterns, a small one is used, one past 64 KiB fails the backup naming it', async () => {
  const sid = await newServer('ignore', 'echo ready; exec sleep 600');
  expect((await put(sid, '/keep.txt', 'keep')).status).toBeLessThan(300);
  expect((await put(sid, '/huge.dump', 'x'.repeat(1000))).status).toBeLessThan(300);

  // no ignore file: everything
  expect(await backup(sid)).toMatchObject({ status: 'completed', files: 2 });
  // a small one: *.dump left out (keep.txt and .hostpanelignore itself)
  expect((await put(sid, '/.hostpanelignore', '*.dump\n')).status).toBeLessThan(300);
  expect(await backup(sid)).toMatchObject({ status: 'completed', files: 2 });
  // past 64 KiB: the backup fails, naming the file and what to do (it was: ignored, huge.dump backed up)
  expect((await put(sid, '/.hostpanelignore', `*.dump\n${'# padding comment line\n'.repeat(4000)}`)).status).toBeLessThan(300);
  const big = await backup(sid);
  expect(big.status).toBe('failed');
  expect(big.error).toContain('.hostpanelignore');
  expect(big.error).toContain('64 KiB');
  // the patterns given in the request are used instead of the file: the backup goes on
  expect(await backup(sid, { ignored: ['*.dump', '.hostpanelignore'] })).toMatchObject({ status: 'completed', files: 1 });
});
