/**
 * A blueprint's file deny-list (Pterodactyl's `file_denylist`), with the local node agent and real
 * files: imported from an egg, denied paths are listed but cannot be read, written, renamed (from or
 * to), copied, chmod-ed, archived or deleted through REST, GraphQL or SFTP, by anyone; 403 naming the
 * path and the pattern; nothing changes; a change of the list applies at once.
 */
import { localNodeId, expectError, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { MINIMAL_EGG } from '../support/eggs.js';
import { connectSftp, type SftpConnection } from '../support/sftp-client.js';
import { until } from '../support/wait.js';
import { gql } from '../graphql/gql.js';

let p: TestPlatform;
let admin: string;
let owner: { token: string; user: any; email: string; password: string };
let blueprintId: string;
let serverId: string;
const open: SftpConnection[] = [];

const DENYLIST = ['server.jar', 'config/', '*.sh', '!keep.sh'];
const FILES: Record<string, string> = { '/server.jar': 'jar', '/config/secret.yml': 'secret', '/run.sh': 'run', '/keep.sh': 'keep', '/ok.txt': 'ok', '/plugins/server.jar': 'nested' };

const F = (sub = '', query = '') => `/api/v1/servers/${serverId}/files${sub}${query ? `?${query}` : ''}`;
const put = (path: string, body: string, token = owner.token) => p.request('PUT', F('/contents', `path=${encodeURIComponent(path)}`), { token, raw: body, headers: { 'content-type': 'text/plain' } });
const read = (path: string, token = owner.token) => p.request('GET', F('/contents', `path=${encodeURIComponent(path)}`), { token });
const post = (op: string, body: unknown, token = owner.token) => p.request('POST', F(`/${op}`), { token, body });
const setDenylist = (fileDenylist: string[]) => p.request('PATCH', `/api/v1/admin/blueprints/${blueprintId}`, { token: admin, body: { fileDenylist } });

/** A 403 that names the path and the pattern that denies it. */
function expectDenied(r: { status: number; body: any }, path: string, pattern: string): void {
  expectError(r, 403, 'FORBIDDEN');
  expect(r.body.error.message).toContain(`${path} is protected by this server's blueprint (file deny-list pattern "${pattern}")`);
  expect(r.body.error.details).toEqual({ path, pattern });
}

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0 });
  admin = (await p.admin()).token;
  owner = await p.newUser('owner');
  const nodeId = await localNodeId(p, admin);
  const bp = await p.request('POST', '/api/v1/admin/blueprints', { token: admin, body: { key: 'denylist', name: 'Deny-list', startup: '/bin/sleep 600', stop: 'SIGTERM' } });
  blueprintId = bp.body.data.id;
  const made = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'denied', nodeId, blueprintId, memory: 64, cpu: 10, disk: 128 } });
  serverId = made.body.data.id;
  await waitForStatus(p, owner.token, serverId, 'offline');
  // the files exist before the list does (as files the game or its install made would)
  for (const dir of ['/config', '/plugins']) expect((await post('directory', { path: dir })).status).toBe(201);
  for (const [path, text] of Object.entries(FILES)) expect((await put(path, text)).status).toBe(200);
  expect((await setDenylist(DENYLIST)).status).toBe(200);
}, 90_000);
afterEach(() => {
  for (const c of open.splice(0)) c.end();
});
afterAll(async () => p?.stop(), 60_000);

test("an egg's file_denylist becomes the blueprint's, with no warning", async () => {
  const egg = { ...MINIMAL_EGG, name: 'Denylist egg', file_denylist: ['server.jar', ' ', 'config/*.yml'] };
  const r = await p.request('POST', '/api/v1/admin/blueprints/import', { token: admin, body: egg });
  expect(r.status).toBe(201);
  expect(r.body.data.fileDenylist).toEqual(['server.jar', 'config/*.yml']);
  expect(r.body.data.warnings.map((w: any) => w.field)).not.toContain('file_denylist');
  const bad = await p.request('PATCH', `/api/v1/admin/blueprints/${r.body.data.id}`, { token: admin, body: { fileDenylist: ['a\nb'] } });
  expectError(bad, 422, 'VALIDATION_ERROR');
  expect(Object.keys(bad.body.error.details.fields)).toEqual(['fileDenylist.0']);
});

test('REST: denied paths are listed, but every other operation on them is a 403 and changes nothing', async () => {
  const names = (await p.request('GET', F('', 'path=/'), { token: owner.token })).body.data.map((e: any) => e.name);
  expect(names).toEqual(expect.arrayContaining(['config', 'server.jar', 'run.sh']));
  expectDenied(await read('/server.jar'), '/server.jar', 'server.jar');
  expectDenied(await read('/plugins/server.jar'), '/plugins/server.jar', 'server.jar'); // a pattern without `/` matches at any depth
  expectDenied(await read('/config/secret.yml'), '/config/secret.yml', 'config/');
  expectDenied(await p.request('GET', F('/download', 'path=/run.sh'), { token: owner.token }), '/run.sh', '*.sh');
  expectDenied(await put('/server.jar', 'replaced'), '/server.jar', 'server.jar');
  expectDenied(await put('/config/new.yml', 'new'), '/config/new.yml', 'config/');
  expectDenied(await post('rename', { from: '/ok.txt', to: '/server.jar' }), '/server.jar', 'server.jar');
  expectDenied(await post('rename', { from: '/config', to: '/cfg' }), '/config', 'config/');
  expectDenied(await post('copy', { path: '/run.sh' }), '/run.sh', '*.sh');
  expectDenied(await post('delete', { paths: ['/ok.txt', '/server.jar'] }), '/server.jar', 'server.jar');
  expectDenied(await post('chmod', { path: '/run.sh', mode: '777' }), '/run.sh', '*.sh');
  expectDenied(await post('directory', { path: '/config/sub' }), '/config/sub', 'config/');
  expectDenied(await post('compress', { paths: ['/ok.txt', '/config'] }), '/config', 'config/');
  // administrators too: the list belongs to the blueprint
  expectDenied(await read('/server.jar', admin), '/server.jar', 'server.jar');

  // what the list lets through, and nothing changed
  expect((await read('/keep.sh')).text).toBe('keep');
  expect((await read('/ok.txt')).text).toBe('ok');
  expect((await post('rename', { from: '/ok.txt', to: '/fine.txt' })).status).toBe(200);
  expect((await post('rename', { from: '/fine.txt', to: '/ok.txt' })).status).toBe(200);
  await setDenylist([]);
  try {
    for (const [path, text] of Object.entries(FILES)) expect([path, (await read(path)).text]).toEqual([path, text]);
  } finally {
    await setDenylist(DENYLIST);
  }
  expectDenied(await read('/server.jar'), '/server.jar', 'server.jar'); // back at once
});

test('GraphQL: the same refusal', async () => {
  const r = await gql(p, 'query($id: ID!) { fileContents(serverId: $id, path: "/server.jar") { contents } }', { id: serverId }, { token: owner.token });
  expect(r.body.errors![0]!.extensions).toMatchObject({ code: 'FORBIDDEN', details: { path: '/server.jar', pattern: 'server.jar' } });
  const w = await gql(p, 'mutation($id: ID!) { writeFile(serverId: $id, path: "/config/x.yml", contents: "x") { path } }', { id: serverId }, { token: owner.token });
  expect(w.body.errors![0]!.extensions!.code).toBe('FORBIDDEN');
});

test('SFTP: denied paths are listed but cannot be read, written, renamed to or deleted', async () => {
  const details = await until(async () => {
    const r = await p.request('GET', `/api/v1/servers/${serverId}/sftp`, { token: owner.token });
    return r.body.data?.port ? r.body.data : null;
  }, 20_000, 'the node to report its SFTP server');
  const c = await connectSftp({ port: details.port, username: details.username, password: owner.password });
  open.push(c);
  expect((await c.readdir('/')).map((e: any) => e.filename)).toEqual(expect.arrayContaining(['server.jar', 'config']));
  const refused = async (op: Promise<unknown>) => expect(((await op.then(() => null, (e: Error) => e)) as Error | null)?.message).toMatch(/protected by this server's blueprint/);
  await refused(c.readFile('/server.jar'));
  await refused(c.writeFile('/config/x.yml', Buffer.from('x')));
  await refused(c.writeFile('/server.jar', Buffer.from('x')));
  await refused(c.rename('/ok.txt', '/server.jar'));
  await refused(c.unlink('/run.sh'));
  await refused(c.mkdir('/config/sub'));
  await refused(c.chmod('/run.sh', 0o777));
  // nor reached through a link made to it (it was read through the link, over SFTP and REST alike)
  await refused(c.symlink('server.jar', '/peek'));
  await refused(c.symlink('/config', '/cfg'));
  expect((await c.readdir('/')).map((e: any) => e.filename)).not.toContain('peek');
  expect((await c.readFile('/ok.txt')).toString()).toBe('ok');
  expect((await read('/ok.txt')).text).toBe('ok');
  await setDenylist([]);
  try {
    expect((await read('/server.jar')).text).toBe('jar'); // unchanged by the refused writes
  } finally {
    await setDenylist(DENYLIST);
  }
});
