/**
 * The same file rules over REST and SFTP, side by side, with a real panel, agent and files: keys and
 * folder scopes, names that are not UTF-8 (refused both ways, never stored under another name), setuid,
 * renames, links, the disk limit and the root itself.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { connectSftp, type SftpConnection } from '../support/sftp-client.js';
import { sleep, until } from '../support/wait.js';

jest.setTimeout(120_000);
const run = promisify(execFile);

let p: TestPlatform;
let owner: { token: string; user: any; email: string; password: string };
let serverId: string;
let port: number;
const open: SftpConnection[] = [];

const COMMAND = ['mkdir -p data other', 'echo f > data/f.txt', 'ln -s /etc out', 'ln -s data/f.txt inlink', 'echo ready', 'exec sleep 600'].join('; ');
const F = (sub = '', query: Record<string, string> = {}) => `/api/v1/servers/${serverId}/files${sub}?${new URLSearchParams(query)}`;
const put = (file: string, body: string | Buffer, token = owner.token) => p.request('PUT', F('/contents', { path: file }), { token, raw: body, headers: { 'content-type': 'application/octet-stream' } });
const post = (op: string, body: unknown, token = owner.token) => p.request('POST', F(`/${op}`), { token, body });
const list = async (dir: string) => ((await p.request('GET', F('', { path: dir }), { token: owner.token })).body.data ?? []) as any[];
const settled = (op: Promise<unknown>) => op.then(() => 'ok', (e: Error) => `error: ${e.message}`);
const username = (email: string) => `${email}.${serverId.slice(0, 8)}`;
async function connect(email: string, password: string): Promise<SftpConnection> {
  const c = await connectSftp({ port, username: username(email), password });
  open.push(c);
  return c;
}

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, rateLimits: { general: 100_000, auth: 100_000, admin: 100_000 } });
  const admin = (await p.admin()).token;
  owner = await p.newUser('owner');
  const nodeId = await localNodeId(p, admin);
  const bp = await p.request('POST', '/api/v1/admin/blueprints', {
    token: admin,
    body: { key: 'probe-sftp', name: 'Probe', startup: '/bin/sh -c {{COMMAND}}', stop: 'SIGTERM', fileDenylist: ['locked.txt'], variables: [{ key: 'COMMAND', description: 'command', default: 'true', rules: 'required|string|max:4096' }] },
  });
  expect(bp.status).toBe(201);
  const made = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'probe', nodeId, blueprintId: bp.body.data.id, memory: 64, cpu: 20, disk: 128, variables: { COMMAND } } });
  expect(made.status).toBe(201);
  serverId = made.body.data.id;
  await waitForStatus(p, owner.token, serverId, 'offline');
  expect((await p.request('POST', `/api/v1/servers/${serverId}/start`, { token: owner.token })).status).toBe(200);
  await until(async () => (await list('/')).some((e) => e.name === 'inlink') || null, 20_000, 'the links');
  port = (await until(async () => (await p.request('GET', `/api/v1/servers/${serverId}/sftp`, { token: owner.token })).body.data?.port, 20_000, 'the SFTP port')) as number;
}, 120_000);
afterEach(() => {
  for (const c of open.splice(0)) c.end();
});
afterAll(async () => p?.stop(), 60_000);

test('REST: a path query that is not valid UTF-8 (%E9) is 422 INVALID_PATH, and nothing is written', async () => {
  const rest = await p.request('PUT', `/api/v1/servers/${serverId}/files/contents?path=/rest-caf%E9.txt`, { token: owner.token, raw: 'x', headers: { 'content-type': 'text/plain' } });
  const names = (await list('/')).map((e) => e.name).filter((n) => n.startsWith('rest-caf'));
  expect([rest.status, rest.body.error?.code, names]).toEqual([422, 'INVALID_PATH', []]);
});

const openSsh = ['sftp', 'sshpass'].every((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status === 0);
if (!openSsh) console.warn('test/api/sftp-rest-parity.test.ts: OpenSSH sftp or sshpass is not installed; its test of names that are not UTF-8 over SFTP was skipped');

(openSsh ? test : test.skip)('SFTP: a name that is not valid UTF-8 is refused, not stored under another name (U+FFFD)', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'probe-sftp-'));
  let out = '';
  try {
    writeFileSync(path.join(dir, 'one'), 'first file\n');
    writeFileSync(path.join(dir, 'two'), 'second file\n');
    // two different names (Latin-1 caf\xe9 and caf\xe8, as an old client's charset sends them)
    writeFileSync(path.join(dir, 'batch'), Buffer.concat([Buffer.from(`-put ${dir}/one /sftp-caf`), Buffer.from([0xe9]), Buffer.from(`.txt\n-put ${dir}/two /sftp-caf`), Buffer.from([0xe8]), Buffer.from('.txt\n')]));
    const r = await run('sshpass', ['-e', 'sftp', '-P', String(port), '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', '-o', 'BatchMode=no', '-o', 'PubkeyAuthentication=no', '-b', path.join(dir, 'batch'), `${username(owner.email)}@127.0.0.1`], {
      env: { ...process.env, SSHPASS: owner.password },
      timeout: 30_000,
    }).catch((e: { stdout?: string; stderr?: string }) => ({ stdout: e.stdout ?? '', stderr: e.stderr ?? '' }));
    out = `${r.stdout}${r.stderr}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const names = (await list('/')).map((e) => e.name).filter((n) => n.startsWith('sftp-caf'));
  const held = names.length ? (await p.request('GET', F('/contents', { path: `/${names[0]}` }), { token: owner.token })).text : null;
  // both uploads named different byte strings: each is refused (as REST's INVALID_PATH), neither lands as
  // "sftp-caf\uFFFD.txt" (where the second silently replaced the first)
  expect({ names, held }).toEqual({ names: [], held: null });
  expect(out.match(/Permission denied/gi)).toHaveLength(2);
});

test('chmod with setuid: REST refuses it; SFTP never sets it', async () => {
  expect((await put('/suid.sh', '#!/bin/sh\n')).status).toBe(200);
  const rest = await post('chmod', { path: '/suid.sh', mode: '4755' });
  expect(rest.status).toBe(422);
  const c = await connect(owner.email, owner.password);
  const res = await settled(c.chmod('/suid.sh', 0o4755));
  const mode = (await list('/')).find((e) => e.name === 'suid.sh')?.mode;
  expect([res, mode]).not.toEqual(['ok', '4755']);
  expect(mode === '0644' || mode === '0755').toBe(true);
});

test('rename over an existing file and into a folder outside the scope: refused both ways, nothing lost', async () => {
  expect((await put('/data/a.txt', 'A')).status).toBe(200);
  expect((await put('/data/b.txt', 'B')).status).toBe(200);
  const rest = await post('rename', { from: '/data/a.txt', to: '/data/b.txt' });
  expect([rest.status, rest.body.error?.code]).toEqual([422, 'ALREADY_EXISTS']);
  const c = await connect(owner.email, owner.password);
  expect(await settled(c.rename('/data/a.txt', '/data/b.txt'))).toMatch(/^error/);
  expect((await p.request('GET', F('/contents', { path: '/data/b.txt' }), { token: owner.token })).text).toBe('B');
  expect((await p.request('GET', F('/contents', { path: '/data/a.txt' }), { token: owner.token })).text).toBe('A');

  const friend = await p.newUser('scoped-rename');
  const keys = ['file.sftp', 'file.read', 'file.read-content', 'file.create', 'file.update', 'file.delete'];
  expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: keys, paths: ['/data'] } })).status).toBe(201);
  const r2 = await post('rename', { from: '/data/a.txt', to: '/other/a.txt' }, friend.token);
  expect(r2.status).toBe(403);
  const r3 = await post('rename', { from: '/data/a.txt', to: '/data2' }, friend.token);
  expect(r3.status).toBe(403);
  const fc = await connect(friend.email, friend.password);
  expect(await settled(fc.rename('/data/a.txt', '/other/a.txt'))).toMatch(/limited/);
  expect(await settled(fc.rename('/data/a.txt', '/data2'))).toMatch(/limited/);
  expect(await settled(fc.rename('/data', '/other/data'))).toMatch(/limited/);
  expect((await list('/data')).map((e) => e.name)).toEqual(expect.arrayContaining(['a.txt', 'b.txt']));
});

test('links the server made: stat follows inside, lstat shows the link, nothing leads out', async () => {
  const c = await connect(owner.email, owner.password);
  expect((await c.stat('/inlink')).isFile()).toBe(true);
  expect((await c.lstat('/inlink')).isSymbolicLink()).toBe(true);
  expect((await c.lstat('/out')).isSymbolicLink()).toBe(true);
  expect(await settled(c.stat('/out'))).toMatch(/^error/);
  expect(await settled(c.readdir('/out'))).toMatch(/^error/);
  const restList = await p.request('GET', F('', { path: '/out' }), { token: owner.token });
  expect(restList.status).toBe(422);
  expect((await list('/')).find((e) => e.name === 'out')?.type).toBe('symlink');
});

test('names REST refuses (NUL, `..` above the root, over 255 bytes) are refused over SFTP too', async () => {
  const c = await connect(owner.email, owner.password);
  const long = 'x'.repeat(256);
  for (const bad of [`/nul\u0000.txt`, '/../escape.txt', `/${long}`]) {
    const rest = await put(bad, 'x');
    expect([bad, rest.status]).toEqual([bad, 422]);
    expect([bad, await settled(c.writeFile(bad, 'x'))]).toEqual([bad, expect.stringMatching(/^error/)]);
  }
  expect((await list('/')).map((e) => e.name).filter((n) => n.startsWith('nul') || n.startsWith('xxx') || n === 'escape.txt')).toEqual([]);
});

test('the disk limit: after a failed SFTP upload, a REST write sees all the free space', async () => {
  const c = await connect(owner.email, owner.password);
  expect(await settled(c.writeFile('/huge.bin', Buffer.alloc(130 * 1024 * 1024, 1)))).toMatch(/disk limit/i);
  expect((await list('/')).map((e) => e.name)).not.toContain('huge.bin');
  const r = await put('/after.bin', Buffer.alloc(100 * 1024 * 1024, 2));
  expect([r.status, r.body?.error?.code]).toEqual([200, undefined]);
  expect((await post('delete', { paths: ['/after.bin'] })).status).toBe(204);
});

test('each file key allows and refuses the same operations over REST and SFTP (subuser limited to /data)', async () => {
  const sets = [['file.read'], ['file.read-content'], ['file.create'], ['file.update'], ['file.delete']];
  const diffs: string[] = [];
  let n = 0;
  for (const set of sets) {
    const u = await p.newUser(`k${n++}`);
    expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: u.email, permissions: ['file.sftp', ...set], paths: ['/data'] } })).status).toBe(201);
    const c = await connect(u.email, u.password);
    const reset = async () => {
      for (const f of ['/data/m1.txt', '/data/m2.txt']) expect((await put(f, 'm')).status).toBe(200);
      await post('delete', { paths: ['/data/new1.txt', '/data/new2.txt', '/data/r1.txt', '/data/r2.txt', '/data/d1', '/data/d2'].filter(Boolean) }).catch(() => undefined);
      for (const f of ['/data/new1.txt', '/data/new2.txt', '/data/r1.txt', '/data/r2.txt', '/data/d1', '/data/d2']) await post('delete', { paths: [f] });
    };
    await reset();
    const ok = (s: number) => s < 300;
    const pairs: [string, () => Promise<boolean>, () => Promise<boolean>][] = [
      ['list', async () => ok((await p.request('GET', F('', { path: '/data' }), { token: u.token })).status), async () => (await settled(c.readdir('/data'))) === 'ok'],
      ['read', async () => ok((await p.request('GET', F('/download', { path: '/data/m1.txt' }), { token: u.token })).status), async () => (await settled(c.readFile('/data/m2.txt'))) === 'ok'],
      ['create', async () => ok((await put('/data/new1.txt', 'n', u.token)).status), async () => (await settled(c.writeFile('/data/new2.txt', 'n'))) === 'ok'],
      ['update', async () => ok((await put('/data/m1.txt', 'u', u.token)).status), async () => (await settled(c.writeFile('/data/m2.txt', 'u'))) === 'ok'],
      ['mkdir', async () => ok((await post('directory', { path: '/data/d1' }, u.token)).status), async () => (await settled(c.mkdir('/data/d2'))) === 'ok'],
      ['chmod', async () => ok((await post('chmod', { path: '/data/m1.txt', mode: '600' }, u.token)).status), async () => (await settled(c.chmod('/data/m2.txt', 0o600))) === 'ok'],
      ['rename', async () => ok((await post('rename', { from: '/data/m1.txt', to: '/data/r1.txt' }, u.token)).status), async () => (await settled(c.rename('/data/m2.txt', '/data/r2.txt'))) === 'ok'],
      ['delete', async () => ok((await post('delete', { paths: ['/data/m1.txt'] }, u.token)).status), async () => (await settled(c.unlink('/data/m2.txt'))) === 'ok'],
    ];
    for (const [name, rest, sftp] of pairs) {
      await reset();
      const [a, b] = [await rest(), await sftp()];
      if (a !== b) diffs.push(`${set.join('+')} ${name}: REST ${a ? 'allows' : 'refuses'}, SFTP ${b ? 'allows' : 'refuses'}`);
    }
    c.end();
  }
  expect(diffs).toEqual([]);
});

test('narrowing a subuser\u2019s folders reaches a live SFTP session within a second, as it does REST', async () => {
  const u = await p.newUser('narrowed');
  expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: u.email, permissions: ['file.sftp', 'file.read', 'file.read-content'], paths: ['/data'] } })).status).toBe(201);
  const c = await connect(u.email, u.password);
  expect((await c.readFile('/data/f.txt')).toString()).toBe('f\n');
  expect((await p.request('PATCH', `/api/v1/servers/${serverId}/subusers/${u.user.id}`, { token: owner.token, body: { paths: ['/other'] } })).status).toBe(200);
  await sleep(1_500);
  expect((await p.request('GET', F('/contents', { path: '/data/f.txt' }), { token: u.token })).status).toBe(403);
  // the session ended (the client's calls then never answer), or its requests are refused
  expect(await Promise.race([c.closed.then(() => 'error: closed'), settled(c.readFile('/data/f.txt'))])).toMatch(/^error/);
});

test('the disk limit: an SFTP upload cut off mid-way, or uploaded then deleted over SFTP, leaves the space to REST', async () => {
  const call = <T,>(fn: (cb: (err: Error | null | undefined, v?: T) => void) => void) => new Promise<T>((res, rej) => fn((e, v) => (e ? rej(e) : res(v as T))));
  const c = await connect(owner.email, owner.password);
  const h = await call<Buffer>((cb) => c.sftp.open('/cut.bin', 'w', cb));
  const chunk = Buffer.alloc(256 * 1024, 3);
  for (let i = 0; i < 400; i++) await call<void>((cb) => c.sftp.write(h, chunk, 0, chunk.length, i * chunk.length, (e) => cb(e)));
  c.end(); // 100 MiB written, never closed
  await c.closed;
  await sleep(500);
  const r1 = await put('/after-cut.bin', Buffer.alloc(100 * 1024 * 1024, 4));
  expect([r1.status, r1.body?.error?.code]).toEqual([200, undefined]);
  expect((await post('delete', { paths: ['/after-cut.bin'] })).status).toBe(204);
  const d = await connect(owner.email, owner.password);
  await d.writeFile('/up-then-rm.bin', Buffer.alloc(100 * 1024 * 1024, 5));
  await d.unlink('/up-then-rm.bin');
  const r2 = await put('/after-rm.bin', Buffer.alloc(100 * 1024 * 1024, 6));
  expect([r2.status, r2.body?.error?.code]).toEqual([200, undefined]);
  expect((await post('delete', { paths: ['/after-rm.bin'] })).status).toBe(204);
});

test('the root itself and links: chmod, rmdir, rename of / and chmod through a link, compared', async () => {
  const c = await connect(owner.email, owner.password);
  const before = (await list('/data')).find((e) => e.name === 'f.txt')?.mode;
  const out: Record<string, string> = {};
  out.restChmodRoot = String((await post('chmod', { path: '/', mode: '000' })).status);
  out.sftpChmodRoot = (await settled(c.chmod('/', 0o000))).slice(0, 5);
  out.restChmodLink = String((await post('chmod', { path: '/inlink', mode: '600' })).status);
  out.sftpChmodLink = (await settled(c.chmod('/inlink', 0o600))).slice(0, 5);
  out.restDeleteRoot = String((await post('delete', { paths: ['/'] })).status);
  out.sftpRmdirRoot = (await settled(c.rmdir('/'))).slice(0, 5);
  out.restRenameRoot = String((await post('rename', { from: '/', to: '/x' })).status);
  out.sftpRenameRoot = (await settled(c.rename('/', '/x'))).slice(0, 5);
  const rootOk = (await p.request('GET', F('', { path: '/' }), { token: owner.token })).status;
  const after = (await list('/data')).find((e) => e.name === 'f.txt')?.mode;
  // restore in case SFTP changed the root's mode
  await settled(c.chmod('/', 0o755));
  expect({ out, rootOk, fileMode: after }).toEqual({
    out: expect.objectContaining({ sftpChmodRoot: out.restChmodRoot.startsWith('2') ? 'ok' : 'error', sftpChmodLink: out.restChmodLink.startsWith('2') ? 'ok' : 'error', sftpRmdirRoot: 'error', sftpRenameRoot: 'error' }),
    rootOk: 200,
    fileMode: before,
  });
  expect(out).toEqual(expect.objectContaining({ restDeleteRoot: expect.stringMatching(/^4/), restRenameRoot: expect.stringMatching(/^4/) }));
});

test('rename of a folder onto an existing empty folder is refused both ways (ALREADY_EXISTS), nothing replaced', async () => {
  for (const d of ['/e1', '/e2', '/e3', '/e4']) expect((await post('directory', { path: d })).status).toBe(201);
  expect((await put('/e1/keep.txt', 'k')).status).toBe(200);
  expect((await put('/e3/keep.txt', 'k')).status).toBe(200);
  const rest = await post('rename', { from: '/e1', to: '/e2' });
  const c = await connect(owner.email, owner.password);
  const sftp = await settled(c.rename('/e3', '/e4'));
  const names = (await list('/')).map((e) => e.name).filter((n) => /^e\d$/.test(n));
  expect({ rest: [rest.status, rest.body.error?.code], sftp: sftp.slice(0, 5), names }).toEqual({ rest: [422, 'ALREADY_EXISTS'], sftp: 'error', names: ['e1', 'e2', 'e3', 'e4'] });
});

test('a subuser limited to a folder: relative paths are under the home realpath(".") answers, for every request', async () => {
  const u = await p.newUser('relative');
  expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: u.email, permissions: ['file.sftp', 'file.read', 'file.read-content', 'file.create', 'file.update', 'file.delete'], paths: ['/data'] } })).status).toBe(201);
  const c = await connect(u.email, u.password);
  expect(await c.realpath('.')).toBe('/data');
  expect(await c.realpath('rel.txt')).toBe('/data/rel.txt');
  expect((await c.readFile('f.txt')).toString()).toBe('f\n');
  expect((await c.stat('f.txt')).isFile()).toBe(true);
  await c.writeFile('rel.txt', 'relative\n');
  await c.mkdir('sub');
  await c.rename('rel.txt', 'sub/moved.txt');
  await c.chmod('sub/moved.txt', 0o600);
  expect((await c.readdir('sub')).map((e) => e.filename)).toEqual(['moved.txt']);
  expect((await p.request('GET', F('/contents', { path: '/data/sub/moved.txt' }), { token: owner.token })).text).toBe('relative\n');
  await c.unlink('sub/moved.txt');
  await c.rmdir('sub');
  expect((await list('/data')).map((e) => e.name)).toEqual(expect.not.arrayContaining(['sub', 'rel.txt']));
  expect((await list('/')).map((e) => e.name)).toEqual(expect.not.arrayContaining(['sub', 'rel.txt']));
  // the owner's home is the root
  const o = await connect(owner.email, owner.password);
  expect(await o.realpath('.')).toBe('/');
  expect((await o.readFile('data/f.txt')).toString()).toBe('f\n');
});

test('a folder made and a mode changed over SFTP are in the activity log, as the file manager\u2019s are', async () => {
  const c = await connect(owner.email, owner.password);
  await c.mkdir('/sftp-made');
  expect((await put('/act.txt', 'x')).status).toBe(200);
  await c.chmod('/act.txt', 0o600);
  const entries = await until(async () => {
    const r = await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:file&limit=100`, { token: owner.token });
    const sftp = r.body.data.filter((e: any) => e.properties.via === 'sftp' && ['/sftp-made', '/act.txt'].includes(e.properties.paths?.[0]));
    return sftp.length >= 2 ? sftp : null;
  }, 15_000, 'the SFTP entries');
  expect(entries.map((e: any) => [e.event, e.properties.path, e.properties.count, e.actor?.id]).sort()).toEqual([
    ['server:file.chmod', '/act.txt', 1, owner.user.id],
    ['server:file.create-directory', '/sftp-made', 1, owner.user.id],
  ]);
});
