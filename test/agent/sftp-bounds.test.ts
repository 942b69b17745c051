/**
 * What one client can hold on the node's SFTP server, against a fake panel: TCP connections that never
 * speak SSH count against their address and are dropped at the login timeout; a connection's open
 * files are capped however many requests come at once and however many SFTP channels it opens; the
 * writes it holds ahead of their place are capped; and a deleted server's sessions end with it.
 */
import { connect as tcpConnect, type Socket } from 'node:net';
import { Client, type SFTPWrapper } from 'ssh2';
import { MAX_HANDLES } from '../../src/agent/sftp/session';
import { MAX_CHANNELS } from '../../src/agent/sftp/server';
import { until } from '../support/wait.js';
import { createServer, newId, specFor, startHarness, type Harness } from './helpers';

const LOGIN_TIMEOUT_MS = 1_500;
let h: Harness;
const id = newId();
const login = { username: `b@example.com.${id.slice(0, 8)}`, password: 'secret-password' };
const clients: Client[] = [];

beforeAll(async () => {
  h = await startHarness({ sftpMaxPerAddress: 3, sftpLoginTimeoutMs: LOGIN_TIMEOUT_MS });
  await createServer(h, specFor('shell-command', id, { disk: 256 }, { COMMAND: 'sleep 1000' }));
  h.panel.sftpGrants.set(`${login.username}\u0000${login.password}`, { userId: 'user-b', email: 'b@example.com', serverId: id, role: 'owner', keys: [], paths: [], denied: [] });
}, 60_000);
afterEach(() => {
  for (const c of clients.splice(0)) c.end();
});
afterAll(async () => {
  expect(await h?.close()).toEqual([]);
});

const port = () => h.agent.sftp!.port;
type Cb<T> = (err: Error | null | undefined, v?: T) => void;
const call = <T>(fn: (cb: Cb<T>) => void) => new Promise<T>((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v as T))));

function connect(user = login): Promise<Client> {
  const c = new Client();
  clients.push(c);
  return new Promise((resolve, reject) => {
    c.once('ready', () => resolve(c));
    c.once('error', reject);
    c.on('error', () => undefined);
    c.connect({ host: '127.0.0.1', port: port(), ...user, readyTimeout: 10_000, hostVerifier: () => true });
  });
}
const channel = (c: Client) => call<SFTPWrapper>((cb) => c.sftp(cb));
const openW = (s: SFTPWrapper, path: string) => call<Buffer>((cb) => s.open(path, 'w', cb));
const closeH = (s: SFTPWrapper, handle: Buffer) => call<void>((cb) => s.close(handle, (e) => cb(e)));
const write = (s: SFTPWrapper, handle: Buffer, data: Buffer, at: number) => call<void>((cb) => s.write(handle, data, 0, data.length, at, (e) => cb(e)));

/** A TCP connection to the SFTP port that says nothing; resolves when it is open. */
function silent(): Promise<{ socket: Socket; closed: Promise<void> }> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port(), '127.0.0.1');
    socket.on('error', () => undefined);
    socket.resume(); // it reads what it is sent (the server's version line), and says nothing
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('connect', () => resolve({ socket, closed }));
  });
}

test('TCP connections that never speak SSH count against their address and end at the login timeout', async () => {
  // they were neither counted nor timed (both began with the client's SSH version line): 40 silent
  // sockets stayed open, each holding a descriptor of the agent
  const started = Date.now();
  const held = await Promise.all([silent(), silent(), silent()]);
  const fourth = await silent();
  await fourth.closed; // over the address's 3 at once
  await Promise.all(held.map((s) => s.closed));
  expect(Date.now() - started).toBeGreaterThanOrEqual(LOGIN_TIMEOUT_MS - 100);
  // the address's places are free again
  const c = await connect();
  expect(await call<string>((cb) => c.sftp((e, s) => (e ? cb(e) : s.realpath('.', cb))))).toBe('/');
}, 30_000);

test('opens sent at once get at most MAX_HANDLES handles, and closing gives them back', async () => {
  // the cap was checked before the open's awaits and counted after them: 400 at once were all granted
  const s = await channel(await connect());
  const results = await Promise.allSettled(Array.from({ length: MAX_HANDLES + 144 }, (_, i) => openW(s, `/race-${i}.txt`)));
  const granted = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  expect(granted).toHaveLength(MAX_HANDLES);
  expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { message: expect.stringMatching(/256 files and folders open: close some/) } });
  await closeH(s, granted.pop()!);
  granted.push(await openW(s, '/one-more.txt'));
  for (const g of granted) await closeH(s, g).catch(() => undefined);
}, 60_000);

test('the SFTP channels of one connection share its handles, and there are at most MAX_CHANNELS of them', async () => {
  // each channel had a cap of its own: 4 channels held 1,000 handles
  const c = await connect();
  const channels: SFTPWrapper[] = [];
  for (let i = 0; i < MAX_CHANNELS; i++) channels.push(await channel(c));
  await expect(channel(c)).rejects.toThrow();
  const first = await Promise.all(Array.from({ length: 200 }, (_, i) => openW(channels[0]!, `/a-${i}.txt`)));
  const second = await Promise.allSettled(Array.from({ length: 100 }, (_, i) => openW(channels[1]!, `/b-${i}.txt`)));
  expect(second.filter((r) => r.status === 'fulfilled')).toHaveLength(MAX_HANDLES - 200);
  // a channel that closes gives back its place and its handles
  channels[0]!.end();
  await until(async () => (await channel(c).then((s) => (channels.push(s), true), () => false)) || null, 5_000, 'a new channel');
  void first;
  const again = await Promise.allSettled(Array.from({ length: 100 }, (_, i) => openW(channels[1]!, `/c-${i}.txt`)));
  expect(again.filter((r) => r.status === 'fulfilled')).toHaveLength(100);
}, 60_000);

test('writes held ahead of their place are capped per connection, and given back when dropped', async () => {
  // each handle could hold 16 MiB in the agent's memory, times any number of handles
  const s = await channel(await connect());
  const chunk = Buffer.alloc(1024 * 1024, 1);
  const a = await openW(s, '/ahead-a.bin');
  const b = await openW(s, '/ahead-b.bin');
  for (let i = 1; i <= 10; i++) await write(s, a, chunk, i * chunk.length);
  let refused: Error | null = null;
  for (let i = 1; i <= 10 && !refused; i++) refused = await write(s, b, chunk, i * chunk.length).then(() => null, (e: Error) => e);
  expect(refused?.message).toMatch(/Writes must cover the file once, from its start/);
  // the upload with the gap fails at its close, and what it held is free again
  await expect(closeH(s, a)).rejects.toThrow(/has a gap/);
  const c2 = await openW(s, '/ahead-c.bin');
  for (let i = 1; i <= 10; i++) await write(s, c2, chunk, i * chunk.length);
  await closeH(s, c2).catch(() => undefined);
  await closeH(s, b).catch(() => undefined);
}, 60_000);

test('the sessions on a server end when the server is deleted', async () => {
  // they stayed open (every request then refused) until the idle timeout, holding their address's place
  const other = newId();
  await createServer(h, specFor('shell-command', other, { disk: 16 }, { COMMAND: 'sleep 1000' }));
  const user = { username: `c@example.com.${other.slice(0, 8)}`, password: 'another-password' };
  h.panel.sftpGrants.set(`${user.username}\u0000${user.password}`, { userId: 'user-c', email: 'c@example.com', serverId: other, role: 'owner', keys: [], paths: [], denied: [] });
  const c = await connect(user);
  const closed = new Promise<void>((r) => c.once('close', () => r()));
  await channel(c);
  expect([200, 204]).toContain((await h.request('DELETE', `/api/servers/${other}`)).status);
  await closed;
}, 30_000);
