/**
 * SFTP through the local node agent, with real clients (the ssh2 package's, and OpenSSH's `sftp` in
 * batch mode where it is installed) and real files: logins checked by the panel, every operation,
 * the file manager's escapes (links the server's own process makes, `..`, a directory swapped for a
 * link during requests), keys and folder scopes, the disk limit mid-upload, the activity log, and
 * sessions ending when access is taken away or the password changes.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { blueprintsByKey, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { Client } from 'ssh2';
import { connectSftp, type SftpConnection } from '../support/sftp-client.js';
import { sleep, until } from '../support/wait.js';

jest.setTimeout(60_000);
const run = promisify(execFile);

let p: TestPlatform;
let owner: { token: string; user: any; email: string; password: string };
let nodeId: string;
let serverId: string;
let port: number;
const open: SftpConnection[] = [];

async function makeServer(name: string, command: string, disk = 128): Promise<string> {
  const bps = await blueprintsByKey(p, owner.token);
  const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name, nodeId, blueprintId: bps['shell-command'].id, memory: 128, cpu: 50, disk, variables: { COMMAND: command } } });
  expect(r.status).toBe(201);
  const id = r.body.data.id as string;
  await waitForStatus(p, owner.token, id, 'offline');
  expect((await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token })).status).toBe(200);
  return id;
}

const username = (email: string, id = serverId) => `${email}.${id.slice(0, 8)}`;
async function connect(email: string, password: string, id = serverId): Promise<SftpConnection> {
  const c = await connectSftp({ port, username: username(email, id), password });
  open.push(c);
  return c;
}
const F = (sub = '', query = '') => `/api/v1/servers/${serverId}/files${sub}${query ? `?${query}` : ''}`;
const contents = async (file: string) => (await p.request('GET', F('/contents', `path=${encodeURIComponent(file)}`), { token: owner.token })).text;
const failsWith = async (op: Promise<unknown>, pattern: RegExp) => {
  const err = await op.then(() => null, (e: Error) => e);
  expect(err?.message).toMatch(pattern);
};

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, rateLimits: { general: 100_000, auth: 100_000, admin: 100_000 } });
  const admin = await p.admin();
  owner = await p.newUser('owner');
  nodeId = await localNodeId(p, admin.token);
  serverId = await makeServer('sftp', 'ln -s / root; ln -s /etc/passwd p; mkdir -p data; echo ready; exec sleep 600');
  await until(async () => (await p.request('GET', F('', 'path=/'), { token: owner.token })).body.data?.some((e: any) => e.name === 'p'), 20_000, 'the links');
  const details = await until(async () => {
    const r = await p.request('GET', `/api/v1/servers/${serverId}/sftp`, { token: owner.token });
    return r.body.data?.port ? r.body.data : null;
  }, 20_000, 'the node to report its SFTP server');
  port = details.port;
}, 90_000);
afterEach(() => {
  for (const c of open.splice(0)) c.end();
});
afterAll(async () => {
  await p?.stop();
}, 60_000);

test('the connection details: the username, and the fingerprint of the key the server shows', async () => {
  const r = await p.request('GET', `/api/v1/servers/${serverId}/sftp`, { token: owner.token });
  expect(r.body.data).toMatchObject({ host: expect.any(String), port, username: username(owner.email) });
  const c = await connect(owner.email, owner.password);
  expect(r.body.data.fingerprint).toBe(c.fingerprint);
  const admin = await p.admin();
  const node = await p.request('GET', `/api/v1/nodes/${nodeId}`, { token: admin.token });
  expect(node.body.data).toMatchObject({ sftpPort: port, sftpFingerprint: c.fingerprint });
});

test('logins: a wrong password, an unknown server or account is refused; both outcomes are in the activity log', async () => {
  await failsWith(connectSftp({ port, username: username(owner.email), password: 'wrong-password' }), /authentication/i);
  await failsWith(connectSftp({ port, username: `${owner.email}.00000000`, password: owner.password }), /authentication/i);
  await failsWith(connectSftp({ port, username: 'nobody@example.com.' + serverId.slice(0, 8), password: 'x' }), /authentication/i);
  await failsWith(connectSftp({ port, username: owner.email, password: owner.password }), /authentication/i);
  // PostgreSQL's text cannot hold NUL: such a name is refused like any other wrong one
  await failsWith(connectSftp({ port, username: username(`${owner.email}\u0000`), password: owner.password }), /authentication/i);
  const c = await connect(owner.email, owner.password);
  expect(await c.realpath('.')).toBe('/');
  const log = await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:sftp`, { token: owner.token });
  const events = log.body.data.map((e: any) => e.event);
  expect(events).toContain('server:sftp.login');
  expect(events).toContain('server:sftp.login-failed');
  expect(log.body.data.map((e: any) => e.properties.username)).toContain(username(`${owner.email}\uFFFD`));
  expect(JSON.stringify(log.body.data)).not.toContain(owner.password);
});

test('a client gets 3 password tries per connection whatever it tries first; a throttled login is in the activity log', async () => {
  // OpenSSH's client sends `none` first: it counted as a try, and such clients got 2
  const tries = (passwords: string[]) =>
    new Promise<boolean>((resolve) => {
      const client = new Client();
      const methods = [{ type: 'none' as const, username: username(owner.email) }, ...passwords.map((password) => ({ type: 'password' as const, username: username(owner.email), password }))];
      client.on('ready', () => (client.end(), resolve(true)));
      client.on('error', () => resolve(false));
      client.connect({ host: '127.0.0.1', port, username: username(owner.email), authHandler: (_left: unknown, _partial: unknown, next: (m: unknown) => void) => next(methods.shift() ?? false) } as never);
    });
  expect(await tries(['wrong-1', 'wrong-2', owner.password])).toBe(true);
  expect(await tries(['wrong-1', 'wrong-2', 'wrong-3', owner.password])).toBe(false);
  // past 10 failures in a row an account is throttled: those refusals are recorded too (they were not)
  const locked = await p.newUser('throttled');
  expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: locked.email, permissions: ['file.sftp'] } })).status).toBe(201);
  for (let i = 0; i < 11; i++) await failsWith(connectSftp({ port, username: username(locked.email), password: `wrong ${i}` }), /authentication/i);
  const log = await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:sftp.login-failed&limit=100`, { token: owner.token });
  const mine = log.body.data.filter((e: any) => e.properties.username === username(locked.email));
  expect(mine).toHaveLength(11);
  expect(mine[0].properties.reason).toBe('rate-limited');
});

test('every operation, checked through the REST file manager', async () => {
  const c = await connect(owner.email, owner.password);
  await c.mkdir('/data/world');
  const big = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
  await c.writeFile('/data/world/level.dat', big);
  await c.writeFile('data/notes.txt', 'hello over sftp\n');
  expect(Buffer.from(await c.readFile('/data/world/level.dat')).equals(big)).toBe(true);
  expect(await contents('/data/notes.txt')).toBe('hello over sftp\n');
  const names = (await c.readdir('/data')).map((e) => e.filename).sort();
  expect(names).toEqual(['notes.txt', 'world']);
  const st = await c.stat('/data/world/level.dat');
  expect(st.isFile()).toBe(true);
  expect(st.size).toBe(big.length);
  expect((await c.stat('/data/world')).isDirectory()).toBe(true);
  await c.chmod('/data/notes.txt', 0o600);
  expect((await c.stat('/data/notes.txt')).mode & 0o777).toBe(0o600);
  await c.rename('/data/notes.txt', '/data/renamed.txt');
  await c.symlink('renamed.txt', '/data/link');
  expect(await c.readlink('/data/link')).toBe('renamed.txt');
  expect((await c.lstat('/data/link')).isSymbolicLink()).toBe(true);
  expect((await c.readFile('/data/link')).toString()).toBe('hello over sftp\n');
  // mistakes get their reason, not an internal error naming the worker's descriptors
  await failsWith(c.readlink('/data/renamed.txt'), /^\/data\/renamed\.txt is not a symlink\.$/);
  await failsWith(c.rename('/data', '/data/world/data'), /^\/data cannot be moved into itself/);
  await failsWith(c.rmdir('/data/world'), /not empty/i);
  await c.unlink('/data/world/level.dat');
  await c.rmdir('/data/world');
  await c.unlink('/data/link');
  const list = await p.request('GET', F('', 'path=/data'), { token: owner.token });
  expect(list.body.data.map((e: any) => e.name)).toEqual(['renamed.txt']);
  expect(list.body.data[0].mode).toBe('0600');
  // a second upload replaces the file whole
  await c.writeFile('/data/renamed.txt', 'v2');
  expect(await contents('/data/renamed.txt')).toBe('v2');
});

test('escapes: links the server made, `..`, absolute and outward link targets are refused', async () => {
  const c = await connect(owner.email, owner.password);
  expect(await c.realpath('/..')).toBe('/');
  expect(await c.realpath('../../etc')).toBe('/etc');
  await failsWith(c.readFile('/p'), /outside|permission/i);
  await failsWith(c.readFile('/root/etc/passwd'), /outside|permission/i);
  await failsWith(c.readdir('/root'), /outside|permission/i);
  await failsWith(c.stat('/root/etc'), /outside|permission/i);
  await failsWith(c.writeFile('/root/tmp/escaped', 'x'), /outside|permission/i);
  await failsWith(c.mkdir('/root/tmp/escaped-dir'), /outside|permission/i);
  await failsWith(c.chmod('/p', 0o777), /symlink|outside|permission/i);
  await failsWith(c.rename('/root/etc/hostname', '/h'), /outside|permission/i);
  await failsWith(c.unlink('/root/etc/hostname'), /outside|permission/i);
  await failsWith(c.symlink('../../../etc/shadow', '/data/out'), /outside|permission/i);
  // an absolute target is the server's root, written relative to the link
  await c.symlink('/data', '/data-link');
  expect(await c.readlink('/data-link')).toBe('data');
  await c.unlink('/data-link');
  // the links themselves are listed, never followed out
  const root = await c.readdir('/');
  expect(root.find((e) => e.filename === 'root')?.longname.startsWith('l')).toBe(true);
  expect(readFileSync('/etc/passwd', 'utf8')).toContain('root:');
});

test('a directory swapped for a link to / in a tight loop never lets a request out', async () => {
  const swapId = await makeServer('swap', 'mkdir -p swap work; echo inside > swap/file; echo ready; while true; do mv swap swap.real; ln -s / swap; rm swap; mv swap.real swap; done');
  try {
    const c = await connect(owner.email, owner.password, swapId);
    await until(async () => (await c.readdir('/').catch(() => [])).length > 0, 20_000, 'the swapping server');
    const outside: string[] = [];
    const until2 = Date.now() + 4_000;
    while (Date.now() < until2) {
      const results = await Promise.allSettled([
        c.readdir('/swap'),
        c.readFile('/swap/file'),
        c.readFile('/swap/etc/hostname'),
        c.writeFile('/swap/tmp/escaped-sftp', 'x'),
        c.chmod('/swap/etc/hostname', 0o777),
        c.rename('/swap/etc/hostname', '/work/h'),
        c.stat('/swap/etc/passwd'),
      ]);
      const [list, file, hostname, , , , passwd] = results;
      if (list.status === 'fulfilled' && list.value.some((e) => e.filename === 'etc')) outside.push('listed /');
      if (file.status === 'fulfilled' && file.value.toString() !== 'inside\n') outside.push('read another file');
      if (hostname.status === 'fulfilled') outside.push('read /etc/hostname');
      if (passwd.status === 'fulfilled') outside.push('stat /etc/passwd');
    }
    expect(outside).toEqual([]);
    expect(() => readFileSync('/tmp/escaped-sftp')).toThrow();
    expect(readFileSync('/etc/hostname').length).toBeGreaterThan(0);
  } finally {
    await p.request('DELETE', `/api/v1/servers/${swapId}`, { token: owner.token });
  }
});

test('the disk limit holds mid-upload and leaves nothing half-written', async () => {
  const smallId = await makeServer('small', 'echo ready; exec sleep 600', 128);
  try {
    const c = await connect(owner.email, owner.password, smallId);
    await failsWith(c.writeFile('/big.bin', Buffer.alloc(130 * 1024 * 1024, 1)), /disk limit/i);
    expect((await c.readdir('/')).map((e) => e.filename)).not.toContain('big.bin');
    await c.writeFile('/small.bin', Buffer.alloc(1024, 1));
    expect((await c.stat('/small.bin')).size).toBe(1024);
  } finally {
    await p.request('DELETE', `/api/v1/servers/${smallId}`, { token: owner.token });
  }
});

test('a file open for writing over SFTP does not stop a save in the web file manager', async () => {
  // the open file used to hold all of the server's free disk until it closed: the save got DISK_LIMIT
  const c = await connect(owner.email, owner.password, serverId);
  const call = <T,>(fn: (cb: (err: Error | null | undefined, v?: T) => void) => void) => new Promise<T>((res, rej) => fn((e, v) => (e ? rej(e) : res(v as T))));
  const handle = await call<Buffer>((cb) => c.sftp.open('/open-upload.bin', 'w', cb));
  await call<void>((cb) => c.sftp.write(handle, Buffer.alloc(64 * 1024, 7), 0, 64 * 1024, 0, cb));
  const save = await p.request('PUT', `/api/v1/servers/${serverId}/files/contents?path=/saved.txt`, { token: owner.token, raw: 'saved', headers: { 'content-type': 'application/octet-stream' } });
  expect(save.status).toBe(200);
  await call<void>((cb) => c.sftp.close(handle, cb));
  expect((await c.stat('/open-upload.bin')).size).toBe(64 * 1024);
  c.end();
});

test('subusers: file.sftp is needed, each operation needs its key, and folder scopes hold', async () => {
  const friend = await p.newUser('friend');
  const add = (permissions: string[], paths?: string[]) =>
    p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions, ...(paths ? { paths } : {}) } });
  const patch = (permissions: string[], paths?: string[]) =>
    p.request('PATCH', `/api/v1/servers/${serverId}/subusers/${friend.user.id}`, { token: owner.token, body: { permissions, ...(paths ? { paths } : {}) } });
  // a stranger to the server, then a subuser without file.sftp
  await failsWith(connectSftp({ port, username: username(friend.email), password: friend.password }), /authentication/i);
  expect((await add(['file.read'])).status).toBe(201);
  await failsWith(connectSftp({ port, username: username(friend.email), password: friend.password }), /authentication/i);
  // reading only
  expect((await patch(['file.sftp', 'file.read', 'file.read-content'])).status).toBe(200);
  await p.request('PUT', F('/contents', 'path=/data/shared.txt'), { token: owner.token, raw: 'shared', headers: { 'content-type': 'text/plain' } });
  let c = await connect(friend.email, friend.password);
  expect((await c.readFile('/data/shared.txt')).toString()).toBe('shared');
  await failsWith(c.writeFile('/data/new.txt', 'x'), /file\.create|permission/i);
  await failsWith(c.writeFile('/data/shared.txt', 'x'), /file\.update|permission/i);
  await failsWith(c.unlink('/data/shared.txt'), /file\.delete|permission/i);
  await failsWith(c.mkdir('/data/d'), /file\.create|permission/i);
  c.end();
  // scoped to /data: home is /data, the rest of the server is out of reach
  expect((await patch(['file.sftp', 'file.read', 'file.read-content', 'file.create', 'file.delete'], ['/data'])).status).toBe(200);
  c = await connect(friend.email, friend.password);
  expect(await c.realpath('.')).toBe('/data');
  await c.writeFile('/data/mine.txt', 'mine');
  await c.unlink('/data/mine.txt');
  await failsWith(c.readdir('/'), /limited|permission/i);
  await failsWith(c.writeFile('/outside.txt', 'x'), /limited|permission/i);
  await failsWith(c.readFile('/p'), /limited|permission|outside/i);
  // a link leading out of the folders is refused: through one to /, the whole server was theirs
  await failsWith(c.symlink('/', '/data/root'), /limited to \/data/);
  await failsWith(c.symlink('..', '/data/up'), /limited to \/data/);
  await failsWith(c.symlink('../data-link', '/data/sideways'), /limited to \/data/);
  await c.symlink('shared.txt', '/data/alias');
  expect(await c.readlink('/data/alias')).toBe('shared.txt');
  expect((await c.readdir('/data')).map((e) => e.filename)).toContain('alias');
  await c.unlink('/data/alias');
});

test('taking access away, removing the subuser or changing the password ends live sessions within a second', async () => {
  const friend = await p.newUser('revoked');
  const add = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['file.sftp', 'file.read'] } });
  expect(add.status).toBe(201);
  const timed = async (c: SftpConnection, change: () => Promise<unknown>) => {
    const started = Date.now();
    await change();
    await Promise.race([c.closed, sleep(1_000).then(() => Promise.reject(new Error('the session outlived the change by a second')))]);
    return Date.now() - started;
  };
  let c = await connect(friend.email, friend.password);
  await timed(c, () => p.request('PATCH', `/api/v1/servers/${serverId}/subusers/${friend.user.id}`, { token: owner.token, body: { permissions: ['file.read'] } }));
  await p.request('PATCH', `/api/v1/servers/${serverId}/subusers/${friend.user.id}`, { token: owner.token, body: { permissions: ['file.sftp', 'file.read'] } });
  c = await connect(friend.email, friend.password);
  await timed(c, () => p.request('DELETE', `/api/v1/servers/${serverId}/subusers/${friend.user.id}`, { token: owner.token }));
  // the owner's own sessions end when their password changes; the new password works
  const other = await p.newUser('changes-password');
  const otherServer = await makeServer('pw', 'echo ready; exec sleep 600');
  await p.request('POST', `/api/v1/servers/${otherServer}/subusers`, { token: owner.token, body: { email: other.email, permissions: ['file.sftp', 'file.read'] } });
  c = await connect(other.email, other.password, otherServer);
  const newPassword = other.password + '-new';
  await timed(c, () => p.request('PATCH', '/api/v1/users/me', { token: other.token, body: { password: newPassword, currentPassword: other.password } }));
  await failsWith(connectSftp({ port, username: username(other.email, otherServer), password: other.password }), /authentication/i);
  c = await connect(other.email, newPassword, otherServer);
  expect(await c.realpath('.')).toBe('/');
  await p.request('DELETE', `/api/v1/servers/${otherServer}`, { token: owner.token });
});

test('a login the panel answered just before the subuser was removed does not open a session', async () => {
  // the grant on its way when the agent heard of the removal was used all the same: the session had
  // the old rights for as long as it lasted
  const friend = await p.newUser('removed while logging in');
  expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['file.sftp', 'file.read'] } })).status).toBe(201);
  const service = p.services.sftp;
  const real = service.login.bind(service);
  let answered!: () => void;
  const held = new Promise<void>((r) => (answered = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let first = true;
  // the panel's answer waits (once) until the subuser is removed: the order the race can take
  service.login = async (...args: Parameters<typeof real>) => {
    const grant = await real(...args);
    if (first) {
      first = false;
      answered();
      await gate;
    }
    return grant;
  };
  try {
    const login = connectSftp({ port, username: username(friend.email), password: friend.password }).then((c) => (c.end(), 'opened'), () => 'refused');
    await held;
    expect((await p.request('DELETE', `/api/v1/servers/${serverId}/subusers/${friend.user.id}`, { token: owner.token })).status).toBe(204);
    await sleep(500); // the node hears of it (the panel tells it in the background, within milliseconds)
    release();
    expect(await login).toBe('refused');
  } finally {
    service.login = real;
  }
});

test('uploads, deletes and renames are in the activity log, batched, with via: sftp', async () => {
  const c = await connect(owner.email, owner.password);
  await c.mkdir('/batch');
  for (let i = 0; i < 5; i++) await c.writeFile(`/batch/f${i}.txt`, `file ${i}`);
  await c.rename('/batch/f0.txt', '/batch/g0.txt');
  for (let i = 1; i < 5; i++) await c.unlink(`/batch/f${i}.txt`);
  c.end();
  const entries = await until(async () => {
    const r = await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:file`, { token: owner.token });
    const sftp = r.body.data.filter((e: any) => e.properties?.via === 'sftp' && JSON.stringify(e.properties).includes('/batch/'));
    return ['delete', 'upload', 'rename'].every((kind) => sftp.some((e: any) => e.event === `server:file.${kind}`)) ? sftp : null;
  }, 10_000, 'the batched entries');
  // typed as the file manager's entries (test/api/sftp-activity-types.test.ts)
  const upload = entries.find((e: any) => e.event === 'server:file.upload' && e.properties.paths.includes('/batch/f0.txt'));
  expect(upload).toMatchObject({ actor: { id: owner.user.id, email: owner.email }, properties: { count: 5, paths: ['/batch/f0.txt', '/batch/f1.txt', '/batch/f2.txt', '/batch/f3.txt', '/batch/f4.txt'] } });
  expect(entries.find((e: any) => e.event === 'server:file.rename').properties).toEqual({ via: 'sftp', count: 1, from: '/batch/f0.txt', to: '/batch/g0.txt', renames: [{ from: '/batch/f0.txt', to: '/batch/g0.txt' }] });
  expect(entries.find((e: any) => e.event === 'server:file.delete').properties).toEqual({ via: 'sftp', count: 4, paths: ['/batch/f1.txt', '/batch/f2.txt', '/batch/f3.txt', '/batch/f4.txt'] });
});

const haveOpenSsh = spawnSync('sftp', ['-V']).error === undefined && spawnSync('sshpass', ['-V']).error === undefined;
if (!haveOpenSsh) console.warn('[tests] SKIPPED: the OpenSSH sftp client test needs `sftp` (openssh-client) and `sshpass` (apt-get install openssh-client sshpass)');
(haveOpenSsh ? test : test.skip)('OpenSSH\u2019s own sftp client uploads, lists, downloads and deletes in batch mode', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sftp-batch-'));
  try {
    writeFileSync(path.join(dir, 'up.txt'), 'through openssh\n');
    writeFileSync(path.join(dir, 'private.txt'), 'mode kept\n', { mode: 0o640 });
    const lines = ['mkdir /openssh', `put ${dir}/up.txt /openssh/up.txt`, `put -p ${dir}/private.txt /openssh/private.txt`, `put -p ${dir}/private.txt /openssh/private.txt`, 'ln -s up.txt /openssh/link', 'ls -l /openssh'];
    writeFileSync(path.join(dir, 'batch'), [...lines, `get /openssh/up.txt ${dir}/down.txt`, 'rm /openssh/link', 'rm /openssh/private.txt', 'rm /openssh/up.txt', 'rmdir /openssh'].join('\n'));
    // asynchronously: the SFTP server runs in this process (spawnSync would stop it from answering);
    // `-b` implies BatchMode, which would forbid the password that sshpass types
    const { stdout } = await run('sshpass', ['-e', 'sftp', '-P', String(port), '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', '-o', 'BatchMode=no', '-o', 'PubkeyAuthentication=no', '-b', path.join(dir, 'batch'), `${username(owner.email)}@127.0.0.1`], {
      env: { ...process.env, SSHPASS: owner.password },
      timeout: 30_000,
    }).catch((err: { code?: number; stdout?: string; stderr?: string }) => {
      throw new Error(`sftp failed (${err.code}): ${err.stderr}\n${err.stdout}`);
    });
    expect(stdout).toMatch(/-rw-r--r-- .* up\.txt/);
    // `ln -s target link` makes `link` (ssh2 hands OpenSSH's two paths over swapped: it made `up.txt`'s place the link)
    expect(stdout).toMatch(/^l[rwx-]{9} .* link$/m);
    // `put -p` keeps the mode, of a new file and of one it replaces (the first failed: "remote fsetstat")
    expect(stdout).toMatch(/^-rw-r----- .* private\.txt$/m);
    expect(readFileSync(path.join(dir, 'down.txt'), 'utf8')).toBe('through openssh\n');
    const list = await p.request('GET', F('', 'path=/'), { token: owner.token });
    expect(list.body.data.map((e: any) => e.name)).not.toContain('openssh');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
