import jwt from 'jsonwebtoken';
import { deriveConsoleKey, deriveNodeKey, generateNodeToken } from '../../src/shared/node-protocol';
import { ConsoleClient, createServer, demoSpec, getState, logs, newId, startHarness, startRunning, waitFor, type Harness } from './helpers';
import { sleep } from '../support/wait.js';

let h: Harness;
let id: string; // a running demo server
let idle: string; // an installed, offline server
beforeAll(async () => {
  h = await startHarness({ consoleAuthTimeoutMs: 2000, consoleInboundPerSecond: 20, consoleMaxLinesPerSecond: 3000, consoleMaxBufferedBytes: 512 * 1024 });
  id = newId();
  idle = newId();
  await createServer(h, demoSpec(id));
  await createServer(h, demoSpec(idle));
  await startRunning(h, id);
});
afterAll(async () => {
  expect(await h?.close()).toEqual([]);
});

const url = (): string => `ws://127.0.0.1:${h.agent.port}/console`;

describe('console auth', () => {
  test('valid token: auth_success, then history, then live lines, status and stats', async () => {
    const c = await ConsoleClient.connect(url());
    c.send({ type: 'auth', token: h.token(id) });
    const ok = await c.next('auth_success');
    expect(ok.data).toEqual({ serverId: id, status: 'running', statusSeq: expect.any(Number), boot: expect.any(String) });
    // history comes right after auth_success and contains the ready line
    await c.next('console_output', (m) => /Done \(/.test(m.data.line));
    const first = c.messages[1]!;
    expect(first.type === 'console_output' || first.type === 'install_output').toBe(true);
    expect(typeof first.data.ts).toBe('string');
    expect(['stdout', 'stderr', 'system']).toContain(first.data.stream);
    // install output is replayed as install_output
    expect(c.has('install_output', (m) => m.data.line.includes('Wrote server.properties'))).toBe(true);
    const stats = await c.next('stats');
    expect(stats.data).toEqual({ cpu: expect.any(Number), memory: expect.any(Number), disk: expect.any(Number), uptime: expect.any(Number) });
    expect(stats.data.memory).toBeGreaterThan(5);
    c.send({ type: 'command', data: 'say live' });
    await c.next('console_output', (m) => m.data.line.endsWith('[Server] live') && m.data.stream === 'stdout');
    c.close();
  });

  const rejects = async (token: unknown): Promise<ConsoleClient> => {
    const c = await ConsoleClient.connect(url());
    c.send({ type: 'auth', token });
    const closed = await c.waitClosed();
    expect(closed.code).toBe(4401);
    expect(c.messages.some((m) => m.type === 'error')).toBe(true);
    expect(c.has('auth_success')).toBe(false);
    return c;
  };

  test('wrong token / garbage token → error + close 4401', async () => {
    await rejects('not-a-jwt');
    await rejects(jwt.sign({ sub: 'u', srv: id, node: h.nodeId, perms: ['websocket.connect'] }, 'some-other-secret', { expiresIn: 60 }));
    await rejects(undefined);
  });

  test('token signed with another node key → 4401', async () => {
    await rejects(h.token(id, { key: deriveConsoleKey(deriveNodeKey(generateNodeToken())) }));
  });

  test('audience: node:<id> accepted, another audience refused', async () => {
    const sign = (aud: string): string => jwt.sign({ sub: 'u', srv: id, node: h.nodeId, perms: ['websocket.connect'] }, h.consoleKey, { expiresIn: 60, audience: aud });
    const c = await ConsoleClient.connect(url());
    c.send({ type: 'auth', token: sign(`node:${h.nodeId}`) });
    await c.next('auth_success');
    c.close();
    await rejects(sign('node:someone-else'));
  });

  test('token for another node id → 4401; unknown server → 4401', async () => {
    await rejects(h.token(id, { node: 'other-node' }));
    await rejects(h.token(newId()));
  });

  test('expired token → 4401', async () => {
    const c = await rejects(h.token(id, { expiresIn: -10 }));
    expect(c.messages.find((m) => m.type === 'error')!.data.code).toBe('TOKEN_EXPIRED');
  });

  test('no auth within the timeout → 4401; messages before auth → error', async () => {
    const c = await ConsoleClient.connect(url());
    c.send({ type: 'command', data: 'say x' });
    const err = await c.next('error');
    expect(err.data.code).toBe('UNAUTHORIZED');
    const closed = await c.waitClosed(6000);
    expect(closed.code).toBe(4401);
  });

  test('token_expiring, token_expired, nothing after expiry, renewal', async () => {
    const c = await ConsoleClient.connect(url());
    c.send({ type: 'auth', token: h.token(id, { expiresIn: 2 }) });
    await c.next('auth_success');
    await c.next('token_expiring'); // less than 60 s left: at once
    await c.next('token_expired', undefined, 5000);
    const n = c.messages.length;
    // commands are refused after expiry, no output is sent
    c.send({ type: 'command', data: 'say after-expiry' });
    const e = await c.next('error');
    expect(e.data.code).toBe('TOKEN_EXPIRED');
    await sleep(300);
    expect(c.messages.slice(n).filter((m) => m.type !== 'error')).toEqual([]);
    // renewal with a fresh token (before the auth timeout closes the session)
    c.send({ type: 'auth', token: h.token(id) });
    await c.next('auth_success');
    expect((await logs(h, id)).some((l) => l.includes('after-expiry'))).toBe(false);
    c.send({ type: 'command', data: 'say renewed' });
    await c.next('console_output', (m) => m.data.line.endsWith('[Server] renewed'));
    // renewal for another server is refused, the session continues
    c.send({ type: 'auth', token: h.token(idle) });
    expect((await c.next('error')).data.code).toBe('FORBIDDEN');
    c.send({ type: 'command', data: 'say still-here' });
    await c.next('console_output', (m) => m.data.line.endsWith('[Server] still-here'));
    expect(c.closed).toBeNull();
    c.close();
  });

  test('renewal before expiry keeps the session', async () => {
    const c = await h.console(id, { expiresIn: 120 });
    c.send({ type: 'auth', token: h.token(id, { expiresIn: 600 }) });
    await c.next('auth_success');
    c.send({ type: 'command', data: 'say once' });
    await c.next('console_output', (m) => m.data.line.endsWith('[Server] once'));
    c.close();
  });
});

describe('console messages', () => {
  test('garbage frames, unknown type, binary, bad data → error, connection stays', async () => {
    const c = await h.console(id);
    c.send('{not json');
    expect((await c.next('error')).data.code).toBe('BAD_REQUEST');
    c.send({ type: 'dance' });
    expect((await c.next('error')).data.code).toBe('UNKNOWN_TYPE');
    c.send('[1,2]');
    expect((await c.next('error')).data.code).toBe('BAD_REQUEST');
    c.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    expect((await c.next('error')).data.code).toBe('BAD_REQUEST');
    c.send({ type: 'power', data: 'explode' });
    expect((await c.next('error')).data.code).toBe('BAD_REQUEST');
    c.send({ type: 'command', data: 'say ok' });
    await c.next('console_output', (m) => m.data.line.endsWith('[Server] ok'));
    expect(c.closed).toBeNull();
    c.close();
  });

  test('permissions: commands need control.console, each power action its own key (kill: control.stop)', async () => {
    const c = await h.console(id, { perms: ['websocket.connect', 'control.start', 'control.restart'] });
    c.send({ type: 'command', data: 'say nope' });
    expect((await c.next('error')).data.message).toMatch(/control\.console/);
    c.send({ type: 'power', data: 'kill' });
    expect((await c.next('error')).data.message).toMatch(/control\.stop/);
    c.send({ type: 'power', data: 'stop' });
    expect((await c.next('error')).data.message).toMatch(/control\.stop/);
    c.close();
    // a token without websocket.connect is refused
    const d = await ConsoleClient.connect(url());
    d.send({ type: 'auth', token: h.token(id, { perms: ['control.console', 'control.stop'] }) });
    expect((await d.waitClosed()).code).toBe(4401);
  });

  test('command while not running → error INVALID_STATE; power over the console', async () => {
    const c = await h.console(idle);
    c.send({ type: 'command', data: 'say hi' });
    expect((await c.next('error')).data.code).toBe('INVALID_STATE');
    c.send({ type: 'power', data: 'start' });
    await c.next('status', (m) => m.data.status === 'starting');
    await c.next('status', (m) => m.data.status === 'running');
    c.send({ type: 'power', data: 'kill' });
    await c.next('status', (m) => m.data.status === 'offline');
    c.close();
  });

  test('inbound rate limit: over 20 messages/s → one RATE_LIMITED error, rest ignored', async () => {
    const c = await h.console(id);
    for (let i = 0; i < 40; i++) c.send({ type: 'ping-' + i });
    await waitFor(() => c.has('error', (m) => m.data.code === 'RATE_LIMITED'), 'rate limit error');
    await sleep(200);
    expect(c.messages.filter((m) => m.type === 'error' && m.data.code === 'RATE_LIMITED')).toHaveLength(1);
    expect(c.messages.filter((m) => m.type === 'error' && m.data.code === 'UNKNOWN_TYPE').length).toBeLessThanOrEqual(20);
    c.close();
  });

  test('frames over 64 KiB are refused (close 1009)', async () => {
    const c = await h.console(id);
    c.send({ type: 'command', data: 'x'.repeat(70 * 1024) });
    expect((await c.waitClosed()).code).toBe(1009);
  });
});

describe('console fan-out and flow control', () => {
  test('many clients on one server all get the output', async () => {
    const clients = await Promise.all(Array.from({ length: 12 }, () => h.console(id)));
    clients[0]!.send({ type: 'command', data: 'say to-everyone' });
    await Promise.all(clients.map((c) => c.next('console_output', (m) => m.data.line.endsWith('[Server] to-everyone'))));
    clients.forEach((c) => c.close());
  });

  test('flood: beyond the lines-per-second budget lines are dropped with one notice', async () => {
    const c = await h.console(id);
    c.send({ type: 'command', data: 'spam 5000' });
    await c.next('console_output', (m) => m.data.stream === 'system' && m.data.line.includes('Output over 3000 lines/s: lines are being dropped'));
    await sleep(500);
    const spam = c.messages.filter((m) => m.type === 'console_output' && /spam line \d+/.test(m.data.line));
    expect(spam.length).toBeLessThan(5000);
    expect(spam.length).toBeGreaterThanOrEqual(3000);
    // the reader is told how many were dropped: with what it got, every spam line is accounted for
    const skipped = c.messages.filter((m) => m.type === 'console_skipped').reduce((n, m) => n + m.data.skipped, 0);
    expect(skipped).toBeGreaterThan(0);
    expect(spam.length + skipped).toBeLessThanOrEqual(5000);
    // the history keeps 150 lines at most
    expect((await logs(h, id)).length).toBeLessThanOrEqual(150);
    c.close();
  });

  test('long lines are truncated', async () => {
    const c = await h.console(id);
    c.send({ type: 'command', data: 'spam 1 10000' });
    const m = await c.next('console_output', (x) => x.data.line.includes('spam line 1 xxx'));
    expect(m.data.line.length).toBeLessThanOrEqual(4096 + 20);
    expect(m.data.line).toMatch(/truncated\]$/);
    c.close();
  });

  test('a stalled client is dropped, others keep going', async () => {
    const stalled = await h.console(id);
    (stalled.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    for (let i = 0; i < 25; i++) {
      await h.request('POST', `/api/servers/${id}/commands`, { command: 'spam 250 4000' });
      await sleep(100);
    }
    // the agent closed (or terminated) the stalled client
    (stalled.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const closed = await stalled.waitClosed(10000);
    expect([4408, 1006]).toContain(closed.code);
    const fresh = await h.console(id);
    fresh.send({ type: 'command', data: 'say still-fine' });
    await fresh.next('console_output', (m) => m.data.line.endsWith('[Server] still-fine'));
    fresh.close();
    // the flood and the stalled reader left the server itself running
    expect((await getState(h, id)).status).toBe('running');
  });
});
