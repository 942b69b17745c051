/**
 * An upload (SFTP, or PUT /files/contents) begun as a new file stays a new file: a file made at that
 * path before the upload ends (by the owner, the server) is kept, when the uploader may not update
 * files there or (SFTP) opened the file exclusively (O_EXCL). The start decided it, and the end
 * renamed over whatever was there.
 */
import { readdirSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { OpenMode } from 'ssh2';
import { TEMP_PREFIX } from '../../src/agent/filesystem/paths.js';
import { blueprintsByKey, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { connectSftp, type SftpConnection } from '../support/sftp-client.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let owner: { token: string; email: string; password: string };
let serverId: string;
let port: number;
const open: SftpConnection[] = [];
const call = <T>(fn: (cb: (err: Error | null | undefined, v?: T) => void) => void) => new Promise<T>((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v as T))));
const F = (sub: string, file: string) => `/api/v1/servers/${serverId}/files${sub}?path=${encodeURIComponent(file)}`;
const put = (file: string, body: string) => p.request('PUT', F('/contents', file), { token: owner.token, raw: body, headers: { 'content-type': 'text/plain' } });
const read = async (file: string) => (await p.request('GET', F('/contents', file), { token: owner.token })).text;

async function connect(email: string, password: string): Promise<SftpConnection> {
  const c = await connectSftp({ port, username: `${email}.${serverId.slice(0, 8)}`, password });
  open.push(c);
  return c;
}

/** Opens `file` with `flags`, writes `text`, lets `meanwhile` run, then closes: the close's error, or null. */
async function uploadAround(c: SftpConnection, file: string, flags: OpenMode, text: string, meanwhile: () => Promise<unknown>): Promise<string | null> {
  const handle = await call<Buffer>((cb) => c.sftp.open(file, flags, cb));
  await call<void>((cb) => c.sftp.write(handle, Buffer.from(text), 0, text.length, 0, (e) => cb(e)));
  await meanwhile();
  return call<void>((cb) => c.sftp.close(handle, (e) => cb(e))).then(
    () => null,
    (e: Error) => e.message,
  );
}

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0 });
  const admin = await p.admin();
  owner = await p.newUser('owner');
  const nodeId = await localNodeId(p, admin.token);
  const bps = await blueprintsByKey(p, owner.token);
  const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'uploads', nodeId, blueprintId: bps['shell-command'].id, memory: 128, cpu: 50, disk: 128, variables: { COMMAND: 'exec sleep 600' } } });
  expect([r.status, r.body.error]).toEqual([201, undefined]);
  serverId = r.body.data.id;
  await waitForStatus(p, owner.token, serverId, 'offline');
  port = await until(async () => (await p.request('GET', `/api/v1/servers/${serverId}/sftp`, { token: owner.token })).body.data?.port, 20_000, 'the SFTP details');
}, 120_000);
afterEach(() => {
  for (const c of open.splice(0)) c.end();
});
afterAll(async () => {
  await p?.stop();
}, 60_000);

test('a subuser who may create files but not update them cannot replace one made while their upload was open', async () => {
  const friend = await p.newUser('creator');
  const shared = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['file.sftp', 'file.read', 'file.read-content', 'file.create'] } });
  expect(shared.status).toBe(201);
  const c = await connect(friend.email, friend.password);
  const closed = await uploadAround(c, '/race.txt', 'w', 'SUBUSER', async () => expect((await put('/race.txt', 'OWNER IMPORTANT')).status).toBe(200));
  expect(closed).toMatch(/already exists/);
  expect(await read('/race.txt')).toBe('OWNER IMPORTANT');
  // a new file of their own is still theirs to make
  expect(await uploadAround(c, '/mine.txt', 'w', 'MINE', async () => undefined)).toBeNull();
  expect(await read('/mine.txt')).toBe('MINE');
});

test('PUT /files/contents by a subuser who may create but not update: a file made during the upload is kept', async () => {
  const friend = await p.newUser('rest-creator');
  await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['file.read', 'file.read-content', 'file.create'] } });
  // the body comes in two parts; the owner saves the file between them
  const url = new URL(p.url + F('/contents', '/rest-race.txt'));
  const req = http.request(url, { method: 'PUT', headers: { authorization: `Bearer ${friend.token}`, 'content-type': 'application/octet-stream' } });
  const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) }));
    });
    req.on('error', reject);
  });
  req.write('SUBUSER ');
  // the upload is under way (past the panel's look at the path) once the node's temporary file is there
  const dir = path.join(p.config.dataDir, 'agent', 'servers', serverId);
  await until(() => readdirSync(dir).some((n) => n.startsWith(TEMP_PREFIX)), 10_000, 'the upload under way');
  expect((await put('/rest-race.txt', 'OWNER IMPORTANT')).status).toBe(200);
  req.end('UPLOAD');
  const r = await answer;
  expect([r.status, r.body.error?.code]).toEqual([422, 'ALREADY_EXISTS']);
  expect(await read('/rest-race.txt')).toBe('OWNER IMPORTANT');
});

test('an exclusive open keeps a file made before its close; a plain open replaces it, as the owner may', async () => {
  const c = await connect(owner.email, owner.password);
  expect(await uploadAround(c, '/excl.txt', 'wx', 'EXCL', async () => expect((await put('/excl.txt', 'SAVED MEANWHILE')).status).toBe(200))).toMatch(/already exists/);
  expect(await read('/excl.txt')).toBe('SAVED MEANWHILE');
  expect(await uploadAround(c, '/plain.txt', 'w', 'LAST', async () => expect((await put('/plain.txt', 'FIRST')).status).toBe(200))).toBeNull();
  expect(await read('/plain.txt')).toBe('LAST');
  // nothing of the refused uploads is left behind
  const names = (await p.request('GET', `/api/v1/servers/${serverId}/files?path=/`, { token: owner.token })).body.data.map((e: any) => e.name).sort();
  expect(names).toEqual(['excl.txt', 'mine.txt', 'plain.txt', 'race.txt', 'rest-race.txt']);
});
