/**
 * The file manager through the panel, with the local node agent and real files: every operation, the
 * editor's text/binary answer, uploads (multipart) and downloads (Range), escapes made by the server's
 * own process (links to / and /etc/passwd), `..`, the disk limit, subusers' keys and folder scopes,
 * and the activity entries.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { blueprintsByKey, expectError, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let owner: { token: string; user: any; email: string };
let serverId: string;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, rateLimits: { general: 100_000, auth: 100_000, admin: 100_000 } });
  const admin = await p.admin();
  owner = await p.newUser('owner');
  const [nodeId, bps] = await Promise.all([localNodeId(p, admin.token), blueprintsByKey(p, owner.token)]);
  // the server's own process makes links out of its directory
  const command = 'ln -s / root; ln -s /etc/passwd p; echo ready; exec sleep 600';
  const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'files', nodeId, blueprintId: bps['shell-command'].id, memory: 128, cpu: 50, disk: 128, variables: { COMMAND: command } } });
  serverId = r.body.data.id;
  await waitForStatus(p, owner.token, serverId, 'offline');
  expect((await p.request('POST', `/api/v1/servers/${serverId}/start`, { token: owner.token })).status).toBe(200);
  await until(async () => (await p.request('GET', `/api/v1/servers/${serverId}/files?path=/`, { token: owner.token })).body.data?.some((e: any) => e.name === 'p'), 20_000, 'the links');
}, 90_000);
afterAll(async () => {
  await p?.stop();
}, 60_000);

const F = (sub = '', query = '') => `/api/v1/servers/${serverId}/files${sub}${query ? `?${query}` : ''}`;
const put = (path: string, body: string | Buffer, token = owner.token) => p.request('PUT', F('/contents', `path=${encodeURIComponent(path)}`), { token, raw: body, headers: { 'content-type': 'application/octet-stream' } });

test('the operations, owner', async () => {
  expect((await p.request('POST', F('/directory'), { token: owner.token, body: { path: '/plugins' } })).status).toBe(201);
  const w = await put('/plugins/config.yml', 'motd: hello\n');
  expect(w.status).toBe(200);
  expect(w.body.data).toEqual({ name: 'config.yml', path: '/plugins/config.yml', type: 'file', size: 12, mode: '0644', modifiedAt: expect.any(String) });
  expect((await put('/plugins/config.yml', 'motd: changed\n')).status).toBe(200);
  const text = await p.request('GET', F('/contents', 'path=/plugins/config.yml'), { token: owner.token });
  expect([text.status, text.headers.get('content-type'), text.text]).toEqual([200, 'text/plain; charset=utf-8', 'motd: changed\n']);
  expect((await put('/bin.dat', Buffer.from([0xff, 0xfe, 0x00, 0x01]))).status).toBe(200);
  expect((await p.request('GET', F('/contents', 'path=/bin.dat'), { token: owner.token })).headers.get('content-type')).toBe('application/octet-stream');
  const list = await p.request('GET', F('', 'path=/'), { token: owner.token });
  expect(list.body.data.map((e: any) => [e.name, e.type])).toEqual([['plugins', 'directory'], ['bin.dat', 'file'], ['p', 'symlink'], ['root', 'symlink']]);
  expect(list.body.meta).toEqual({ total: 4, page: 1, limit: 500 });
  expect((await p.request('POST', F('/rename'), { token: owner.token, body: { from: '/bin.dat', to: '/plugins/bin.dat' } })).body.data.path).toBe('/plugins/bin.dat');
  expectError(await p.request('POST', F('/rename'), { token: owner.token, body: { from: '/plugins/bin.dat', to: '/plugins/config.yml' } }), 422, 'ALREADY_EXISTS');
  expect((await p.request('POST', F('/copy'), { token: owner.token, body: { path: '/plugins/config.yml' } })).body.data.name).toBe('config copy.yml');
  expect((await p.request('POST', F('/chmod'), { token: owner.token, body: { path: '/plugins/config.yml', mode: '600' } })).body.data.mode).toBe('0600');
  expect((await p.request('POST', F('/chmod'), { token: owner.token, body: { path: '/plugins/config.yml', mode: '4777' } })).status).toBe(422);
  expect((await p.request('GET', F('/search', 'path=/&query=COPY'), { token: owner.token })).body.data.map((e: any) => e.path)).toEqual(['/plugins/config copy.yml']);
  expect((await p.request('POST', F('/delete'), { token: owner.token, body: { paths: ['/plugins/config copy.yml', '/plugins/bin.dat'] } })).status).toBe(204);
  expectError(await p.request('GET', F('/contents', 'path=/plugins/bin.dat'), { token: owner.token }), 404, 'NOT_FOUND');
});

test('uploads and downloads stream through; Range is honoured', async () => {
  const form = new FormData();
  form.append('files', new Blob(['first file']), 'one.txt');
  form.append('files', new Blob([Buffer.alloc(300_000, 7)]), 'two.bin');
  const up = await fetch(p.url + F('/upload', 'path=/plugins'), { method: 'POST', headers: { authorization: `Bearer ${owner.token}` }, body: form });
  const body = (await up.json()) as any;
  expect(up.status).toBe(201);
  expect(body.data.map((e: any) => [e.path, e.size])).toEqual([['/plugins/one.txt', 10], ['/plugins/two.bin', 300_000]]);
  const whole = await fetch(p.url + F('/download', 'path=/plugins/two.bin'), { headers: { authorization: `Bearer ${owner.token}` } });
  expect([whole.status, whole.headers.get('content-disposition'), (await whole.arrayBuffer()).byteLength]).toEqual([200, `attachment; filename="two.bin"; filename*=UTF-8''two.bin`, 300_000]);
  const part = await fetch(p.url + F('/download', 'path=/plugins/one.txt'), { headers: { authorization: `Bearer ${owner.token}`, range: 'bytes=0-4' } });
  expect([part.status, part.headers.get('content-range'), await part.text()]).toEqual([206, 'bytes 0-4/10', 'first']);
});

test('an upload keeps a name in any language, and the download gives it back', async () => {
  // browsers send a part's file name as UTF-8: it was read as latin1 ("cafÃ©")
  const name = "café ünïcödé 世界 (1)'s.txt";
  const form = new FormData();
  form.append('files', new Blob(['bonjour']), name);
  const up = await fetch(p.url + F('/upload', 'path=/plugins'), { method: 'POST', headers: { authorization: `Bearer ${owner.token}` }, body: form });
  expect([up.status, ((await up.json()) as any).data.map((e: any) => e.path)]).toEqual([201, [`/plugins/${name}`]]);
  const down = await fetch(p.url + F('/download', `path=${encodeURIComponent(`/plugins/${name}`)}`), { headers: { authorization: `Bearer ${owner.token}` } });
  expect(down.headers.get('content-disposition')).toBe(`attachment; filename="caf_ _n_c_d_ __ (1)'s.txt"; filename*=UTF-8''caf%C3%A9%20%C3%BCn%C3%AFc%C3%B6d%C3%A9%20%E4%B8%96%E7%95%8C%20%281%29%27s.txt`);
  expect(await down.text()).toBe('bonjour');
  expect((await p.request('POST', F('/delete'), { token: owner.token, body: { paths: [`/plugins/${name}`] } })).status).toBe(204);
});

test('escapes: `..`, links made by the server to / and /etc/passwd, NUL', async () => {
  expectError(await p.request('GET', F('', 'path=../../'), { token: owner.token }), 422, 'INVALID_PATH');
  expectError(await p.request('GET', F('', 'path=/root'), { token: owner.token }), 422, 'INVALID_PATH');
  expectError(await p.request('GET', F('/contents', 'path=/p'), { token: owner.token }), 422, 'INVALID_PATH');
  expectError(await p.request('GET', F('/download', 'path=/root/etc/hostname'), { token: owner.token }), 422, 'INVALID_PATH');
  expectError(await put('/root/tmp/escaped', 'x'), 422, 'INVALID_PATH');
  expectError(await p.request('POST', F('/chmod'), { token: owner.token, body: { path: '/p', mode: '777' } }), 422, 'INVALID_PATH');
  expectError(await p.request('GET', F('/contents', 'path=a%00b'), { token: owner.token }), 422, 'INVALID_PATH');
  // deleting the link deletes the link only
  expect((await p.request('POST', F('/delete'), { token: owner.token, body: { paths: ['/p'] } })).status).toBe(204);
});

test('the disk limit: a write past it is refused, leaves nothing, and never reads as the node being down', async () => {
  // the node refuses the body half way: the panel must still get its answer (DISK_LIMIT), not a reset
  // connection that it would take for an unreachable node
  for (let round = 0; round < 5; round++) {
    const big = Readable.from((function* () {
      for (let i = 0; i < 140; i++) yield Buffer.alloc(1024 * 1024, i);
    })());
    // the client gets the answer too: the panel reads and drops the rest of the body instead of resetting the connection
    const r = await fetch(p.url + F('/contents', 'path=/huge.bin'), { method: 'PUT', headers: { authorization: `Bearer ${owner.token}` }, body: Readable.toWeb(big) as any, duplex: 'half' } as RequestInit);
    expect(r.status).toBe(422);
    expect(((await r.json()) as any).error.code).toBe('DISK_LIMIT');
    const list = await p.request('GET', F('', 'path=/'), { token: owner.token });
    expect(list.status).toBe(200);
    expect(list.body.data.map((e: any) => e.name)).not.toContain('huge.bin');
  }
});

test('a refused write answers with a connection that stays open: the rest of the body is read and dropped, not reset', async () => {
  // (the client itself may drop the socket: Node's does when an answer comes before its body is sent)
  const agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
  const send = (method: string, path: string, body?: Buffer) =>
    new Promise<{ status: number; code?: string; connection?: string }>((resolve, reject) => {
      const req = httpRequest(p.url + path, { method, agent, headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/octet-stream' } }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, code: text.startsWith('{') ? JSON.parse(text).error?.code : undefined, connection: res.headers.connection }));
      });
      req.on('error', reject);
      req.end(body);
    });
  try {
    expect(await send('PUT', F('/contents', 'path=/huge2.bin'), Buffer.alloc(140 * 1024 * 1024, 1))).toEqual({ status: 422, code: 'DISK_LIMIT', connection: 'keep-alive' });
    expect(await send('GET', F('', 'path=/'))).toEqual({ status: 200, code: undefined, connection: 'keep-alive' });
  } finally {
    agent.destroy();
  }
});

test('a write the client cuts off half way leaves nothing behind, and the node stays reachable', async () => {
  const dir = path.join(p.config.dataDir, 'agent', 'servers', serverId);
  await new Promise<void>((resolve) => {
    const req = httpRequest(p.url + F('/contents', 'path=/cut.bin'), { method: 'PUT', headers: { authorization: `Bearer ${owner.token}`, 'content-length': String(8 * 1024 * 1024) } });
    req.on('error', () => resolve());
    req.write(Buffer.alloc(1024 * 1024, 1), () => setTimeout(() => req.destroy(), 200));
  });
  await until(() => !readdirSync(dir).some((n) => n.startsWith('.hostpanel-tmp-') || n === 'cut.bin'), 10_000, 'the half file to go');
  const list = await p.request('GET', F('', 'path=/'), { token: owner.token });
  expect(list.status).toBe(200);
  expect(list.body.data.map((e: any) => e.name)).not.toContain('cut.bin');
});

test('a write the client cuts off before the panel has begun passing it on leaves the panel running and nothing behind', async () => {
  // the panel asks the node whether the file exists before it streams the body on: a client gone in
  // that moment must not reach anything as an unhandled error
  const dir = path.join(p.config.dataDir, 'agent', 'servers', serverId);
  for (let round = 0; round < 8; round++) {
    await new Promise<void>((resolve) => {
      const req = httpRequest(p.url + F('/contents', `path=/early-${round}.bin`), { method: 'PUT', headers: { authorization: `Bearer ${owner.token}`, 'content-length': String(8 * 1024 * 1024) } });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      req.write(Buffer.alloc(64 * 1024, 1), () => setImmediate(() => req.destroy()));
    });
  }
  await until(() => !readdirSync(dir).some((n) => n.startsWith('.hostpanel-tmp-') || n.startsWith('early-')), 10_000, 'the half files to go');
  expect((await p.request('GET', F('', 'path=/'), { token: owner.token })).status).toBe(200);
});

test('an upload the client cuts off half way leaves nothing behind on the node', async () => {
  const dir = path.join(p.config.dataDir, 'agent', 'servers', serverId);
  const boundary = 'cut-upload';
  await new Promise<void>((resolve) => {
    const req = httpRequest(p.url + F('/upload', 'path=/'), { method: 'POST', headers: { authorization: `Bearer ${owner.token}`, 'content-type': `multipart/form-data; boundary=${boundary}` } });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="f"; filename="cut-upload.bin"\r\n\r\n`);
    req.write(Buffer.alloc(2 * 1024 * 1024, 1), () => setTimeout(() => req.destroy(), 300));
  });
  await until(() => !readdirSync(dir).some((n) => n.startsWith('.hostpanel-tmp-') || n === 'cut-upload.bin'), 10_000, 'the half upload to go');
  expect((await p.request('GET', F('', 'path=/'), { token: owner.token })).status).toBe(200);
});

test('an upload whose file part arrives a moment after the request began is written (not a 500)', async () => {
  // the part's 'file' event then comes from a later read of the socket, outside the request's context
  const boundary = 'late-part';
  const status = await new Promise<number>((resolve, reject) => {
    const req = httpRequest(p.url + F('/upload', 'path=/'), { method: 'POST', headers: { authorization: `Bearer ${owner.token}`, 'content-type': `multipart/form-data; boundary=${boundary}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.write(`--${boundary}\r\n`);
    setTimeout(() => req.end(`Content-Disposition: form-data; name="f"; filename="late.txt"\r\n\r\nlate\r\n--${boundary}--\r\n`), 300);
  });
  expect(status).toBe(201);
  expect((await p.request('GET', F('/contents', 'path=/late.txt'), { token: owner.token })).text).toBe('late');
});

test('subusers: each operation needs its key, and folder scopes hold', async () => {
  const sub = await p.newUser('sub');
  const add = (permissions: string[], paths?: string[]) => p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: sub.email, permissions, ...(paths ? { paths } : {}) } });
  const drop = () => p.request('DELETE', `/api/v1/servers/${serverId}/subusers/${sub.user.id}`, { token: owner.token });
  expect((await add(['file.read'], ['/plugins'])).status).toBe(201);
  expect((await p.request('GET', F('', 'path=/plugins'), { token: sub.token })).status).toBe(200);
  expectError(await p.request('GET', F('', 'path=/'), { token: sub.token }), 403, 'FORBIDDEN');
  expectError(await p.request('GET', F('/contents', 'path=/plugins/one.txt'), { token: sub.token }), 403, 'FORBIDDEN');
  expect((await p.request('GET', F('/search', 'path=/plugins&query=o'), { token: sub.token })).status).toBe(200);
  expectError(await put('/plugins/new.txt', 'x', sub.token), 403, 'FORBIDDEN');
  await drop();
  expect((await add(['file.read', 'file.read-content', 'file.update'], ['/plugins'])).status).toBe(201);
  expect((await put('/plugins/one.txt', 'changed by sub', sub.token)).status).toBe(200);
  expectError(await put('/plugins/brand-new.txt', 'x', sub.token), 403, 'FORBIDDEN'); // new needs file.create
  expectError(await p.request('POST', F('/rename'), { token: sub.token, body: { from: '/plugins/one.txt', to: '/one.txt' } }), 403, 'FORBIDDEN'); // out of scope
  expectError(await p.request('POST', F('/delete'), { token: sub.token, body: { paths: ['/plugins/one.txt'] } }), 403, 'FORBIDDEN');
  await drop();
  const stranger = await p.newUser('stranger');
  expectError(await p.request('GET', F('', 'path=/'), { token: stranger.token }), 404, 'NOT_FOUND');
});

test('a folder moved into itself is refused with a reason, and stays where it was', async () => {
  // the kernel's EINVAL came back as a 500 that named the worker's /proc/self/fd paths
  for (const path of ['/mods', '/mods/pack']) expect((await p.request('POST', F('/directory'), { token: owner.token, body: { path } })).status).toBe(201);
  for (const to of ['/mods/pack/mods', '/mods/mods']) {
    const r = await p.request('POST', F('/rename'), { token: owner.token, body: { from: '/mods', to } });
    expectError(r, 422, 'INVALID_STATE');
    expect(r.body.error.message).toBe('/mods cannot be moved into itself: choose a place outside it.');
  }
  expect((await p.request('GET', F('', 'path=/mods'), { token: owner.token })).body.data.map((e: any) => e.path)).toEqual(['/mods/pack']);
  expect((await p.request('POST', F('/delete'), { token: owner.token, body: { paths: ['/mods'] } })).status).toBe(204);
});

test('a delete of several paths removes all of them or none, and is in the activity log either way it succeeds', async () => {
  // a later path that failed used to leave the earlier ones deleted, with a 404 and no activity entry:
  // a folder ticked with a file inside it, or the same path twice, always did
  for (const path of ['/sel', '/sel/inner']) expect((await p.request('POST', F('/directory'), { token: owner.token, body: { path } })).status).toBe(201);
  expect((await put('/sel/inner/a.txt', 'a')).status).toBe(200);
  expect((await put('/sel/b.txt', 'b')).status).toBe(200);
  const names = async (path: string) => (await p.request('GET', F('', `path=${path}`), { token: owner.token })).body.data.map((e: any) => e.name);
  // one path missing: nothing is deleted
  expectError(await p.request('POST', F('/delete'), { token: owner.token, body: { paths: ['/sel/b.txt', '/sel/missing.txt'] } }), 404, 'NOT_FOUND');
  expect(await names('/sel')).toEqual(['inner', 'b.txt']);
  // the same path twice, and a folder with a file inside it: deleted once each, 204, one entry
  expect((await p.request('POST', F('/delete'), { token: owner.token, body: { paths: ['/sel/b.txt', '/sel/b.txt', '/sel/inner', '/sel/inner/a.txt'] } })).status).toBe(204);
  expect(await names('/sel')).toEqual([]);
  const activity = await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:file.delete`, { token: owner.token });
  expect(activity.body.data[0].properties).toEqual({ paths: ['/sel/b.txt', '/sel/b.txt', '/sel/inner', '/sel/inner/a.txt'], count: 4 });
  expect((await p.request('POST', F('/delete'), { token: owner.token, body: { paths: ['/sel'] } })).status).toBe(204);
});

test('bad input: 1,000-path deletes, wrong types, huge names', async () => {
  expectError(await p.request('POST', F('/delete'), { token: owner.token, body: { paths: Array.from({ length: 1001 }, (_, i) => `/x${i}`) } }), 422, 'VALIDATION_ERROR');
  expect((await p.request('POST', F('/delete'), { token: owner.token, body: { paths: Array.from({ length: 1000 }, (_, i) => `/missing-${i}`) } })).status).toBe(404);
  expectError(await p.request('POST', F('/rename'), { token: owner.token, body: { from: 1, to: [] } }), 422, 'VALIDATION_ERROR');
  expectError(await p.request('POST', F('/directory'), { token: owner.token, body: { path: '/' + 'n'.repeat(4096) } }), 422, 'INVALID_PATH');
});

test('archives: compress and decompress through the panel, with file.archive and folder scopes', async () => {
  expect((await p.request('POST', F('/directory'), { token: owner.token, body: { path: '/maps' } })).status).toBe(201);
  expect((await put('/maps/a.txt', 'map a')).status).toBe(200);
  const c = await p.request('POST', F('/compress'), { token: owner.token, body: { paths: ['/maps/a.txt'] } });
  expect(c.status).toBe(201);
  expect(c.body.data.path).toMatch(/^\/maps\/archive-\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d\.tar\.gz$/);
  const d = await p.request('POST', F('/decompress'), { token: owner.token, body: { path: c.body.data.path, destination: '/maps/out' } });
  expect(d.status).toBe(200);
  expect(d.body.data.map((e: any) => e.path)).toEqual(['/maps/out/a.txt']);
  expect((await p.request('GET', F('/contents', 'path=/maps/out/a.txt'), { token: owner.token })).text).toBe('map a');
  expectError(await p.request('POST', F('/decompress'), { token: owner.token, body: { path: '/maps/a.txt' } }), 422, 'INVALID_ARCHIVE');
  expectError(await p.request('POST', F('/compress'), { token: owner.token, body: { paths: ['/root/etc/passwd'] } }), 422, 'INVALID_PATH');
  expectError(await p.request('POST', F('/compress'), { token: owner.token, body: { paths: [] } }), 422, 'VALIDATION_ERROR');
  // a subuser scoped to /maps: the default archive of paths inside it lands inside it; outside is refused
  const sub = await p.newUser('archiver');
  await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: sub.email, permissions: ['file.archive'], paths: ['/maps'] } });
  expect((await p.request('POST', F('/compress'), { token: sub.token, body: { paths: ['/maps/out'], destination: '/maps/sub.tar.gz' } })).status).toBe(201);
  expectError(await p.request('POST', F('/compress'), { token: sub.token, body: { paths: ['/maps/out'], destination: '/sub.tar.gz' } }), 403, 'FORBIDDEN');
  expectError(await p.request('POST', F('/decompress'), { token: sub.token, body: { path: '/maps/sub.tar.gz', destination: '/' } }), 403, 'FORBIDDEN');
  expectError(await p.request('POST', F('/compress'), { token: sub.token, body: { paths: ['/plugins'] } }), 403, 'FORBIDDEN');
  const viewer = await p.newUser('no-archive');
  await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: viewer.email, permissions: ['file.read', 'file.create'] } });
  expectError(await p.request('POST', F('/compress'), { token: viewer.token, body: { paths: ['/maps'] } }), 403, 'FORBIDDEN');
  const g = await p.request('POST', '/graphql', { token: owner.token, body: { query: 'mutation($s: ID!) { decompressFile(serverId: $s, path: "/maps/sub.tar.gz", destination: "/maps/g") { path } }', variables: { s: serverId } } });
  expect(g.body.data.decompressFile.map((e: any) => e.path)).toEqual(['/maps/g/out']);
  expect((await p.request('POST', F('/delete'), { token: owner.token, body: { paths: ['/maps'] } })).status).toBe(204);
});

test('GraphQL: a file of 3 GiB is listed with its size (a 32-bit Int broke the whole list)', async () => {
  const big = path.join(p.config.dataDir, 'agent', 'servers', serverId, 'big.bin');
  execFileSync('truncate', ['-s', '3G', big]); // sparse: no disk used
  try {
    const gql = (query: string) => p.request('POST', '/graphql', { token: owner.token, body: { query, variables: { s: serverId } } });
    const list = await gql('query($s: ID!) { files(serverId: $s, path: "/") { items { name size } } }');
    expect(list.body.errors).toBeUndefined();
    expect(list.body.data.files.items.find((e: any) => e.name === 'big.bin')).toEqual({ name: 'big.bin', size: 3 * 1024 ** 3 });
    const found = await gql('query($s: ID!) { fileSearch(serverId: $s, query: "big.bin") { size } }');
    expect(found.body).toEqual({ data: { fileSearch: [{ size: 3 * 1024 ** 3 }] } });
  } finally {
    rmSync(big);
  }
});

test('changes are in the activity log', async () => {
  const events = (await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:file&limit=100`, { token: owner.token })).body.data.map((e: any) => e.event);
  for (const e of ['server:file.create-directory', 'server:file.write', 'server:file.rename', 'server:file.copy', 'server:file.chmod', 'server:file.delete', 'server:file.upload', 'server:file.download', 'server:file.compress', 'server:file.decompress']) expect(events).toContain(e);
});

test('GraphQL: the text file operations mirror REST, with the same keys', async () => {
  const gql = (query: string, variables: Record<string, unknown>, token = owner.token) => p.request('POST', '/graphql', { token, body: { query, variables } });
  const w = await gql('mutation($s: ID!, $p: String!, $c: String!) { writeFile(serverId: $s, path: $p, contents: $c) { path size } }', { s: serverId, p: '/gql.txt', c: 'héllo' });
  expect(w.body.data.writeFile).toEqual({ path: '/gql.txt', size: 6 });
  // a lone surrogate is not text: it was written as U+FFFD
  const bad = await gql('mutation($s: ID!, $p: String!, $c: String!) { writeFile(serverId: $s, path: $p, contents: $c) { path } }', { s: serverId, p: '/bad.txt', c: 'a\ud800b' });
  expect(bad.body.errors[0].extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: { contents: expect.stringContaining('lone UTF-16 surrogate') } } });
  expect((await gql('query($s: ID!) { files(serverId: $s, path: "/") { items { name } } }', { s: serverId })).body.data.files.items.map((e: any) => e.name)).not.toContain('bad.txt');
  const r = await gql('query($s: ID!, $p: String!) { fileContents(serverId: $s, path: $p) { contents } }', { s: serverId, p: '/gql.txt' });
  expect(r.body.data.fileContents.contents).toBe('héllo');
  const list = await gql('query($s: ID!) { files(serverId: $s, path: "/") { total items { name type } } }', { s: serverId });
  expect(list.body.data.files.items.map((e: any) => e.name)).toContain('gql.txt');
  const escape = await gql('query($s: ID!) { files(serverId: $s, path: "/root") { total } }', { s: serverId });
  expect(escape.body.errors[0].extensions.code).toBe('INVALID_PATH');
  const viewer = await p.newUser('viewer');
  await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: viewer.email, permissions: ['file.read'] } });
  expect((await gql('query($s: ID!, $p: String!) { fileContents(serverId: $s, path: $p) { contents } }', { s: serverId, p: '/gql.txt' }, viewer.token)).body.errors[0].extensions.code).toBe('FORBIDDEN');
  expect((await gql('mutation($s: ID!) { deleteFiles(serverId: $s, paths: ["/gql.txt"]) }', { s: serverId }, viewer.token)).body.errors[0].extensions.code).toBe('FORBIDDEN');
  expect((await gql('mutation($s: ID!) { deleteFiles(serverId: $s, paths: ["/gql.txt"]) }', { s: serverId })).body.data.deleteFiles).toBe(true);
});
