/**
 * Scopes and the deny-list hold where paths really lead: the server's own process makes links
 * inside its directory (into folders a subuser's `paths` scope leaves out, onto files the
 * blueprint's deny-list protects), and every file operation through them, over REST and SFTP, is a
 * 403 that changes nothing, while the links themselves stay usable as entries.
 */
import { expectError, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { connectSftp, type SftpConnection } from '../support/sftp-client.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let owner: { token: string; email: string; password: string };
let friend: { token: string; email: string; password: string };
let serverId: string;
let port: number;
const open: SftpConnection[] = [];

const COMMAND = [
  'mkdir -p data secret config',
  'echo secret > secret/s.txt',
  'echo conf > config/c.yml',
  'echo mine > data/mine.txt',
  'ln -s .. data/up',
  'ln -s ../secret data/sec',
  'ln -s ../secret/s.txt data/s.txt',
  'ln -s ../config/c.yml data/c.yml',
  'ln -s ../config data/cfg',
  'mkdir data/hard',
  'ln secret/s.txt data/hard/s.txt',
  'echo ready',
  'exec sleep 600',
].join('; ');

const F = (sub = '', query: Record<string, string> = {}) => `/api/v1/servers/${serverId}/files${sub}?${new URLSearchParams(query)}`;
const as = (who: { token: string }) => ({
  list: (path: string) => p.request('GET', F('', { path }), { token: who.token }),
  read: (path: string) => p.request('GET', F('/contents', { path }), { token: who.token }),
  download: (path: string) => p.request('GET', F('/download', { path }), { token: who.token }),
  search: (path: string) => p.request('GET', F('/search', { path, query: 's' }), { token: who.token }),
  put: (path: string, text: string) => p.request('PUT', F('/contents', { path }), { token: who.token, raw: text, headers: { 'content-type': 'text/plain' } }),
  post: (op: string, body: unknown) => p.request('POST', F(`/${op}`), { token: who.token, body }),
});

/** The server's files as the owner sees them (nothing changed by a refused request). */
async function tree(): Promise<string[]> {
  const out: string[] = [];
  for (const dir of ['/', '/data', '/secret', '/config']) {
    const r = await p.request('GET', F('', { path: dir }), { token: owner.token });
    out.push(...r.body.data.map((e: any) => `${e.path} ${e.type} ${e.mode}`));
  }
  return out;
}

const refused = (r: { status: number; body: any }, leadsTo: RegExp) => {
  expect([r.status, r.body.error?.code, r.body.error?.message]).toEqual([403, 'FORBIDDEN', expect.stringMatching(leadsTo)]);
  expectError(r, 403, 'FORBIDDEN');
};

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, rateLimits: { general: 100_000, auth: 100_000, admin: 100_000 } });
  const admin = (await p.admin()).token;
  owner = await p.newUser('owner');
  friend = await p.newUser('friend');
  const nodeId = await localNodeId(p, admin);
  const bp = await p.request('POST', '/api/v1/admin/blueprints', {
    token: admin,
    body: { key: 'links', name: 'Links', startup: '/bin/sh -c {{COMMAND}}', stop: 'SIGTERM', fileDenylist: ['config/'], variables: [{ key: 'COMMAND', description: 'command', default: 'true', rules: 'required|string|max:4096' }] },
  });
  expect(bp.status).toBe(201);
  const made = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'links', nodeId, blueprintId: bp.body.data.id, memory: 64, cpu: 20, disk: 128, variables: { COMMAND } } });
  expect(made.status).toBe(201);
  serverId = made.body.data.id;
  await waitForStatus(p, owner.token, serverId, 'offline');
  expect((await p.request('POST', `/api/v1/servers/${serverId}/start`, { token: owner.token })).status).toBe(200);
  await until(async () => (await as(owner).list('/data/hard')).body.data?.some((e: any) => e.name === 's.txt'), 20_000, 'the links the server makes');
  const all = ['file.read', 'file.read-content', 'file.create', 'file.update', 'file.delete', 'file.archive', 'file.sftp'];
  const share = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: all, paths: ['/data'] } });
  expect(share.status).toBe(201);
  port = (await until(async () => (await p.request('GET', `/api/v1/servers/${serverId}/sftp`, { token: owner.token })).body.data?.port, 20_000, 'the SFTP port')) as number;
}, 90_000);
afterEach(() => {
  for (const c of open.splice(0)) c.end();
});
afterAll(async () => p?.stop(), 60_000);

const OUT_OF_SCOPE = /through a symlink, outside the folders your access is limited to \(\/data\)/;

test('REST: a subuser limited to /data cannot go through links out of it, and nothing changes', async () => {
  const before = await tree();
  const f = as(friend);
  refused(await f.list('/data/up'), OUT_OF_SCOPE);
  refused(await f.list('/data/sec'), OUT_OF_SCOPE);
  refused(await f.search('/data/up'), OUT_OF_SCOPE);
  refused(await f.read('/data/s.txt'), /\/data\/s\.txt leads to \/secret\/s\.txt through a symlink/);
  refused(await f.read('/data/up/secret/s.txt'), OUT_OF_SCOPE);
  refused(await f.download('/data/s.txt'), OUT_OF_SCOPE);
  refused(await f.put('/data/sec/new.txt', 'x'), OUT_OF_SCOPE);
  refused(await f.put('/data/up/new.txt', 'x'), OUT_OF_SCOPE);
  refused(await f.post('rename', { from: '/data/sec/s.txt', to: '/data/stolen.txt' }), OUT_OF_SCOPE);
  refused(await f.post('rename', { from: '/data/mine.txt', to: '/data/up/mine.txt' }), OUT_OF_SCOPE);
  refused(await f.post('copy', { path: '/data/s.txt' }), OUT_OF_SCOPE);
  refused(await f.post('chmod', { path: '/data/up/secret/s.txt', mode: '777' }), OUT_OF_SCOPE);
  refused(await f.post('directory', { path: '/data/up/made' }), OUT_OF_SCOPE);
  refused(await f.post('delete', { paths: ['/data/up/secret'] }), OUT_OF_SCOPE);
  refused(await f.post('compress', { paths: ['/data/sec/s.txt'], destination: '/data/a.tar.gz' }), OUT_OF_SCOPE);
  refused(await f.post('compress', { paths: ['/data/mine.txt'], destination: '/data/up/a.tar.gz' }), OUT_OF_SCOPE);
  expect(await tree()).toEqual(before);
  // what lies in the scope still works, the links included as entries
  expect((await f.read('/data/mine.txt')).text).toBe('mine\n');
  expect((await f.list('/data')).body.data.map((e: any) => e.name)).toEqual(['hard', 'c.yml', 'cfg', 'mine.txt', 's.txt', 'sec', 'up']);
  expect((await f.post('rename', { from: '/data/mine.txt', to: '/data/ours.txt' })).status).toBe(200);
  expect((await f.post('rename', { from: '/data/ours.txt', to: '/data/mine.txt' })).status).toBe(200);
  // the owner is not scoped
  expect((await as(owner).read('/data/s.txt')).text).toBe('secret\n');
});

test("REST: a hard link the server made in a subuser's folder does not lead them to the file's other name", async () => {
  // /data/hard/s.txt and /secret/s.txt are one file: its path checked out, and its contents and mode were the secret's
  const before = await tree();
  const f = as(friend);
  const HARD = /\/data\/hard\/s\.txt is a hard link \(the file has 2 names\)/;
  refused(await f.read('/data/hard/s.txt'), HARD);
  refused(await f.download('/data/hard/s.txt'), HARD);
  refused(await f.post('copy', { path: '/data/hard/s.txt' }), HARD);
  refused(await f.post('chmod', { path: '/data/hard/s.txt', mode: '777' }), HARD);
  refused(await f.post('compress', { paths: ['/data/hard'], destination: '/data/h.tar.gz' }), HARD);
  const c = await connectSftp({ port, username: `${friend.email}.${serverId.slice(0, 8)}`, password: friend.password });
  open.push(c);
  expect((await c.readFile('/data/hard/s.txt').then(() => null, (e: Error) => e))?.message).toMatch(/hard link/);
  expect((await c.readFile('/data/mine.txt')).toString()).toBe('mine\n');
  expect(await tree()).toEqual(before);
  // the name itself is theirs: it is listed, and it can be renamed and deleted (the other name stays)
  expect((await f.list('/data/hard')).body.data.map((e: any) => e.name)).toEqual(['s.txt']);
  expect((await f.post('rename', { from: '/data/hard/s.txt', to: '/data/hard/t.txt' })).status).toBe(200);
  expect((await f.post('delete', { paths: ['/data/hard/t.txt'] })).status).toBe(204);
  expect((await as(owner).read('/secret/s.txt')).text).toBe('secret\n');
});

test('REST: a link onto a denied path is denied for everyone, listing aside', async () => {
  const before = await tree();
  // the owner meets the deny-list; the friend, limited to /data, meets their scope first
  for (const [who, why] of [[owner, /is protected by this server's blueprint \(file deny-list pattern "config\/"\)/], [friend, OUT_OF_SCOPE]] as const) {
    const w = as(who);
    refused(await w.read('/data/cfg/c.yml'), why);
    refused(await w.put('/data/cfg/new.yml', 'x'), why);
    refused(await w.post('copy', { path: '/data/c.yml' }), why);
    refused(await w.post('delete', { paths: ['/data/cfg/c.yml'] }), why);
    refused(await w.post('compress', { paths: ['/data/cfg/c.yml'], destination: '/data/cfg.tar.gz' }), why);
  }
  refused(await as(owner).read('/data/c.yml'), /^\/data\/c\.yml leads to \/config\/c\.yml through a symlink\. \/config\/c\.yml is protected by this server's blueprint/);
  expect(await tree()).toEqual(before);
  // listing names is allowed on denied paths, as without a link
  expect((await as(owner).list('/data/cfg')).body.data.map((e: any) => e.name)).toEqual(['c.yml']);
});

test('SFTP: the same links lead nowhere out of reach', async () => {
  const before = await tree();
  const c = await connectSftp({ port, username: `${friend.email}.${serverId.slice(0, 8)}`, password: friend.password });
  open.push(c);
  const denied = async (op: Promise<unknown>) => expect((await op.then(() => null, (e: Error) => e))?.message).toMatch(/through a symlink/);
  await denied(c.readFile('/data/s.txt'));
  await denied(c.readdir('/data/up'));
  await denied(c.readdir('/data/sec'));
  await denied(c.stat('/data/s.txt'));
  await denied(c.writeFile('/data/sec/new.txt', 'x'));
  await denied(c.rename('/data/sec/s.txt', '/data/stolen.txt'));
  await denied(c.mkdir('/data/up/made'));
  await denied(c.unlink('/data/up/secret/s.txt'));
  await denied(c.chmod('/data/up/secret/s.txt', 0o777));
  await denied(c.readFile('/data/c.yml'));
  expect((await c.readFile('/data/mine.txt')).toString()).toBe('mine\n');
  expect((await c.lstat('/data/s.txt')).isSymbolicLink()).toBe(true);
  const o = await connectSftp({ port, username: `${owner.email}.${serverId.slice(0, 8)}`, password: owner.password });
  open.push(o);
  await denied(o.readFile('/data/c.yml'));
  expect((await o.readFile('/data/s.txt')).toString()).toBe('secret\n');
  expect(await tree()).toEqual(before);
});

test('an archive of a subuser\'s whole folder, without a destination, is made inside that folder', async () => {
  // the default name was put in the folder the paths share, /, outside their reach (403)
  const f = as(friend);
  const made = await f.post('compress', { paths: ['/data'] });
  expect(made.status).toBe(201);
  expect(made.body.data.path).toMatch(/^\/data\/archive-[\d-]+_[\d-]+\.tar\.gz$/);
  // the owner's default is unchanged: the folder the paths share
  const owners = await as(owner).post('compress', { paths: ['/data'] });
  expect(owners.body.data.path).toMatch(/^\/archive-[\d-]+_[\d-]+\.tar\.gz$/);
  expect((await as(owner).post('delete', { paths: [made.body.data.path, owners.body.data.path] })).status).toBe(204);
});

test('a subuser whose folder does not exist yet is told so and who can make it; once the owner makes it they work in it', async () => {
  const mapper = await p.newUser('mapper');
  const share = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: mapper.email, permissions: ['file.read', 'file.create'], paths: ['/mods/enabled'] } });
  expect(share.status).toBe(201);
  const told = "/mods/enabled, the folder your access to this server's files is limited to, does not exist yet: ask the server's owner to create it.";
  const list = await p.request('GET', F('', { path: '/mods/enabled' }), { token: mapper.token });
  expect([list.status, list.body.error.code, list.body.error.message]).toEqual([404, 'NOT_FOUND', told]);
  const made = await p.request('POST', F('/directory'), { token: mapper.token, body: { path: '/mods/enabled/maps' } });
  expect([made.status, made.body.error.message]).toEqual([404, told]);
  for (const path of ['/mods', '/mods/enabled']) expect((await p.request('POST', F('/directory'), { token: owner.token, body: { path } })).status).toBe(201);
  expect((await p.request('POST', F('/directory'), { token: mapper.token, body: { path: '/mods/enabled/maps' } })).status).toBe(201);
  // a missing folder inside a folder that exists is the node's own 404
  const missing = await p.request('GET', F('', { path: '/mods/enabled/nope' }), { token: mapper.token });
  expect(missing.status).toBe(404);
  expect(missing.body.error.message).not.toContain('limited to');
});
