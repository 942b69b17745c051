/**
 * SFTP handles: an upload opened as its connection drops leaves nothing behind; a file opened for
 * download is stat-ed with the key that opened it (file.read-content, as REST's download); the mode
 * of a file being uploaded (`put -p`) needs file.update, as any chmod.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { Client, type SFTPWrapper } from 'ssh2';
import { blueprintsByKey, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { connectSftp, type SftpConnection } from '../support/sftp-client.js';
import { until } from '../support/wait.js';

jest.setTimeout(90_000);

let p: TestPlatform;
let owner: { token: string; email: string; password: string };
let serverId: string;
let port: number;
const open: SftpConnection[] = [];

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, rateLimits: { general: 100_000, auth: 100_000, admin: 100_000 } });
  const admin = await p.admin();
  owner = await p.newUser('owner');
  const nodeId = await localNodeId(p, admin.token);
  const bps = await blueprintsByKey(p, owner.token);
  const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'handles', nodeId, blueprintId: bps['shell-command'].id, memory: 128, cpu: 50, disk: 128, variables: { COMMAND: 'exec sleep 600' } } });
  serverId = r.body.data.id;
  await waitForStatus(p, owner.token, serverId, 'offline');
  port = (
    await until(async () => {
      const d = await p.request('GET', `/api/v1/servers/${serverId}/sftp`, { token: owner.token });
      return d.body.data?.port ? d.body.data : null;
    }, 20_000, 'the node to report its SFTP server')
  ).port;
}, 120_000);
afterEach(() => {
  for (const c of open.splice(0)) c.end();
});
afterAll(async () => {
  await p?.stop();
}, 60_000);

const username = (email: string) => `${email}.${serverId.slice(0, 8)}`;
async function connect(email: string, password: string): Promise<SftpConnection> {
  const c = await connectSftp({ port, username: username(email), password });
  open.push(c);
  return c;
}
async function subuser(permissions: string[]) {
  const u = await p.newUser('sub');
  const r = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: u.email, permissions } });
  expect(r.status).toBe(201);
  return u;
}
async function put(file: string, body: string): Promise<void> {
  await p.request('POST', `/api/v1/servers/${serverId}/files/directory`, { token: owner.token, body: { path: path.posix.dirname(file) } });
  const r = await p.request('PUT', `/api/v1/servers/${serverId}/files/contents?path=${encodeURIComponent(file)}`, { token: owner.token, raw: body, headers: { 'content-type': 'text/plain' } });
  expect(r.status).toBe(200);
}
const settled = (op: Promise<unknown>) => op.then(() => 'ok', (e: Error) => `error: ${e.message}`);
const call = <T,>(fn: (cb: (err: Error | null | undefined, v?: T) => void) => void) => new Promise<T>((res, rej) => fn((e, v) => (e ? rej(e) : res(v as T))));
const temporaryFiles = () => readdirSync(path.join(p.config.dataDir, 'agent', 'servers', serverId)).filter((n) => n.startsWith('.hostpanel-tmp-'));

/** Signs in, opens an SFTP channel, asks to open `name` for writing and drops the TCP connection at once. */
function openAndDrop(name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    client.on('error', () => undefined);
    client.once('close', () => resolve());
    client.once('ready', () => {
      client.sftp((err, sftp: SFTPWrapper) => {
        if (err) return reject(err);
        sftp.open(name, 'w', () => undefined);
        (client as unknown as { _sock: { destroy(): void } })._sock.destroy();
      });
    });
    client.connect({ host: '127.0.0.1', port, username: username(owner.email), password: owner.password, hostVerifier: () => true });
  });
}

test('an upload opened as its connection drops leaves no temporary file in the server', async () => {
  for (let i = 0; i < 20; i++) await openAndDrop(`/dropped-${i}.bin`);
  // each open that reached the node made its temporary file; every one is removed once it is dropped
  await until(async () => temporaryFiles().length === 0 || null, 10_000, 'the temporary files removed').catch(() => undefined);
  expect(temporaryFiles()).toEqual([]);
});

test('a subuser with file.read-content and not file.read downloads over SFTP, as over REST', async () => {
  await put('/dl/file.txt', 'download me');
  const u = await subuser(['file.sftp', 'file.read-content']);
  const rest = await p.request('GET', `/api/v1/servers/${serverId}/files/download?path=/dl/file.txt`, { token: u.token });
  expect(rest.status).toBe(200);
  const c = await connect(u.email, u.password);
  // ssh2's readFile stats the handle it opened before reading (as OpenSSH's get does)
  expect((await c.readFile('/dl/file.txt')).toString()).toBe('download me');
  // what the key does not give: listing and stat by path
  expect(await settled(c.readdir('/dl'))).toMatch(/file\.read/);
  expect(await settled(call((cb) => c.sftp.stat('/dl/file.txt', cb)))).toMatch(/file\.read/);
});

test('the mode of a file being uploaded needs file.update: without it the request is refused and the file keeps 0644', async () => {
  const u = await subuser(['file.sftp', 'file.read', 'file.create']);
  const c = await connect(u.email, u.password);
  await put('/modes/keep.txt', 'x');
  const h = await call<Buffer>((cb) => c.sftp.open('/modes/run.sh', 'w', cb));
  await call<void>((cb) => c.sftp.write(h, Buffer.from('#!/bin/sh\n'), 0, 10, 0, (e) => cb(e)));
  expect(await settled(call<void>((cb) => c.sftp.fsetstat(h, { mode: 0o777 }, (e) => cb(e))))).toMatch(/file\.update/);
  await call<void>((cb) => c.sftp.close(h, (e) => cb(e)));
  const listed = (await p.request('GET', `/api/v1/servers/${serverId}/files?path=/modes`, { token: owner.token })).body.data as { name: string; mode: string }[];
  expect(listed.find((e) => e.name === 'run.sh')?.mode).toBe('0644');
});
