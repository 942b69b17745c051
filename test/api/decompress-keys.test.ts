/**
 * Decompressing with the keys a subuser holds (docs/files.md "New files stay new"): `file.archive`
 * makes new files (CONTRACT §9), but replacing a file that exists needs `file.update` too, as a write
 * of it does. Without it nothing is replaced and nothing is written (422 ALREADY_EXISTS).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLocalDemoServer } from '../support/fixtures.js';
import { expectError, startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform;
let owner: { token: string };
let serverId: string;
let tmp: string;
const F = (sub: string, file?: string) => `/api/v1/servers/${serverId}/files${sub}${file ? `?path=${encodeURIComponent(file)}` : ''}`;

/** A .tar.gz of `files` (name → text). */
function targz(name: string, files: Record<string, string>): Buffer {
  const dir = mkdtempSync(path.join(tmp, 'src-'));
  for (const [f, text] of Object.entries(files)) writeFileSync(path.join(dir, f), text);
  execFileSync('tar', ['czf', path.join(tmp, name), '-C', dir, ...Object.keys(files)]);
  return readFileSync(path.join(tmp, name));
}

async function put(token: string, file: string, bytes: Buffer | string) {
  return p.request('PUT', F('/contents', file), { token, raw: bytes, headers: { 'content-type': 'application/octet-stream' } });
}

async function friend(permissions: string[]) {
  const u = await p.newUser('Friend');
  const r = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: u.email, permissions, paths: ['/plugins'] } });
  expect(r.status).toBe(201);
  return u;
}

const text = async (file: string) => {
  const r = await p.request('GET', F('/contents', file), { token: owner.token });
  return r.status === 200 ? r.text : r.status;
};

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0 });
  const admin = await p.admin();
  owner = await p.newUser('Owner');
  serverId = await createLocalDemoServer(p, admin.token, owner.token, 'Community');
  tmp = mkdtempSync(path.join(os.tmpdir(), 'decompress-keys-'));
  expect((await p.request('POST', F('/directory'), { token: owner.token, body: { path: '/plugins' } })).status).toBe(201);
}, 120_000);

afterAll(async () => {
  rmSync(tmp, { recursive: true, force: true });
  await p?.stop();
}, 60_000);

beforeEach(async () => {
  // one by one: a delete of several paths deletes none when one is missing
  for (const file of ['/plugins/new.yml', '/plugins/other.yml', '/plugins/cfg']) await p.request('POST', F('/delete'), { token: owner.token, body: { paths: [file] } });
  expect((await put(owner.token, '/plugins/config.yml', 'tuned by the owner\n')).status).toBe(200);
  expect((await put(owner.token, '/plugins/plugin.tar.gz', targz('plugin.tar.gz', { 'config.yml': 'from the archive\n', 'new.yml': 'new\n' }))).status).toBe(200);
  expect((await put(owner.token, '/plugins/fresh.tar.gz', targz('fresh.tar.gz', { 'new.yml': 'new\n', 'other.yml': 'other\n' }))).status).toBe(200);
});

test('without file.update, an archive that would replace a file is 422 ALREADY_EXISTS and writes nothing', async () => {
  const f = await friend(['file.read', 'file.create', 'file.archive']);
  const r = await p.request('POST', F('/decompress'), { token: f.token, body: { path: '/plugins/plugin.tar.gz' } });
  expectError(r, 422, 'ALREADY_EXISTS');
  expect(r.body.error.message).toContain('/plugins/config.yml');
  expect(r.body.error.message).toContain('file.update');
  expect(await text('/plugins/config.yml')).toBe('tuned by the owner\n');
  expect(await text('/plugins/new.yml')).toBe(404);
});

test('without file.update, an archive of new files only is unpacked', async () => {
  const f = await friend(['file.read', 'file.archive']);
  const r = await p.request('POST', F('/decompress'), { token: f.token, body: { path: '/plugins/fresh.tar.gz' } });
  expect(r.status).toBe(200);
  expect([await text('/plugins/new.yml'), await text('/plugins/other.yml')]).toEqual(['new\n', 'other\n']);
});

test('with file.update (and for the owner) the archive replaces what it holds', async () => {
  const f = await friend(['file.read', 'file.update', 'file.archive']);
  const r = await p.request('POST', F('/decompress'), { token: f.token, body: { path: '/plugins/plugin.tar.gz' } });
  expect(r.status).toBe(200);
  expect([await text('/plugins/config.yml'), await text('/plugins/new.yml')]).toEqual(['from the archive\n', 'new\n']);
  expect((await put(owner.token, '/plugins/config.yml', 'tuned again\n')).status).toBe(200);
  expect((await p.request('POST', F('/decompress'), { token: owner.token, body: { path: '/plugins/plugin.tar.gz' } })).status).toBe(200);
  expect(await text('/plugins/config.yml')).toBe('from the archive\n');
});

test('without file.update, a name the archive holds twice (tar -r) unpacks as for the owner: the later copy', async () => {
  const dir = mkdtempSync(path.join(tmp, 'dup-'));
  writeFileSync(path.join(dir, 'new.yml'), 'first\n');
  execFileSync('tar', ['cf', path.join(tmp, 'dup.tar'), '-C', dir, 'new.yml']);
  writeFileSync(path.join(dir, 'new.yml'), 'second\n');
  execFileSync('tar', ['rf', path.join(tmp, 'dup.tar'), '-C', dir, 'new.yml']);
  expect((await put(owner.token, '/plugins/dup.tar', readFileSync(path.join(tmp, 'dup.tar')))).status).toBe(200);
  const f = await friend(['file.read', 'file.archive']);
  const r = await p.request('POST', F('/decompress'), { token: f.token, body: { path: '/plugins/dup.tar' } });
  expect([r.status, r.body.error?.message]).toEqual([200, undefined]);
  expect(await text('/plugins/new.yml')).toBe('second\n');
});

test('without file.update, a file of the archive over a folder is the INVALID_STATE the owner gets, not a missing key', async () => {
  const dir = mkdtempSync(path.join(tmp, 'over-folder-'));
  writeFileSync(path.join(dir, 'cfg'), 'a file named like the folder\n');
  execFileSync('tar', ['cf', path.join(tmp, 'over.tar'), '-C', dir, 'cfg']);
  expect((await put(owner.token, '/plugins/over.tar', readFileSync(path.join(tmp, 'over.tar')))).status).toBe(200);
  await p.request('POST', F('/directory'), { token: owner.token, body: { path: '/plugins/cfg' } });
  const f = await friend(['file.read', 'file.archive']);
  const asFriend = await p.request('POST', F('/decompress'), { token: f.token, body: { path: '/plugins/over.tar' } });
  const asOwner = await p.request('POST', F('/decompress'), { token: owner.token, body: { path: '/plugins/over.tar' } });
  expectError(asFriend, 422, 'INVALID_STATE');
  expect([asFriend.body.error.code, asFriend.body.error.message]).toEqual([asOwner.body.error.code, asOwner.body.error.message]);
});
