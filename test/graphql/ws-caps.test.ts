/**
 * The panel's WebSocket edges: an upgrade to any path but /graphql is answered 404 and closed; caps on
 * sockets per user, live operations per user and unauthenticated sockets per address (defaults), each
 * freed again when its sockets close.
 */
import net from 'node:net';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config.js';
import { createLocalDemoServer } from '../support/fixtures.js';
import { subscribe, trackedClients, type Sub } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let wsUrl: string;
const clients = trackedClients();
const sockets: WebSocket[] = [];

beforeAll(async () => {
  // the defaults an operator gets (the harness raises them for the other tests)
  const { wsLimits } = loadConfig({});
  expect(wsLimits).toEqual({ connectionsPerUser: 20, subscriptionsPerUser: 100, anonymousPerAddress: 10 });
  p = await startTestPlatform({ localAgent: true, agentPort: 0, wsLimits });
  wsUrl = p.url.replace(/^http/, 'ws') + '/graphql';
}, 60_000);
afterAll(async () => {
  await clients.disposeAll();
  for (const s of sockets) s.terminate();
  await p?.stop();
}, 60_000);

/** A graphql-ws client of `token`; `state` resolves with 'connected' or the close code. */
function client(token: string) {
  let settle: (v: 'connected' | number) => void = () => undefined;
  const state = new Promise<'connected' | number>((resolve) => (settle = resolve));
  let closeCode: number | null = null;
  let closeReason = '';
  const c = clients.open(p.url, token, {
    lazy: false,
    on: {
      connected: () => settle('connected'),
      closed: (e) => {
        closeCode = (e as { code: number }).code;
        closeReason = (e as { reason: string }).reason;
        settle(closeCode);
      },
    },
    onNonLazyError: () => undefined,
  });
  return { c, state, closed: () => ({ code: closeCode, reason: closeReason }) };
}

/** A raw upgrade: the HTTP status line and whether the server closed the socket afterwards. */
function rawUpgrade(path: string): Promise<{ head: string; closed: boolean }> {
  const { port } = new URL(p.url);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), '127.0.0.1', () => {
      s.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n',
      );
    });
    let data = '';
    s.on('data', (d) => {
      data += d.toString();
      // an accepted upgrade stays open: take its status line and hang up
      if (data.startsWith('HTTP/1.1 101') && data.includes('\r\n\r\n')) {
        s.destroy();
        resolve({ head: data.split('\r\n')[0]!, closed: false });
      }
    });
    s.on('error', reject);
    s.on('close', () => resolve({ head: data.split('\r\n')[0] ?? '', closed: true }));
  });
}

/** An upgraded socket to /graphql that never sends connection_init; resolves with it or the refusal status. */
function anonymousSocket(): Promise<WebSocket | number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(wsUrl, 'graphql-transport-ws');
    sockets.push(ws);
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    ws.once('error', () => undefined);
  });
}

test('an upgrade to a path other than /graphql is answered 404 and the socket is closed', async () => {
  for (const path of ['/foo', '/api/v1/servers', '/graphql/x']) {
    const r = await rawUpgrade(path);
    expect(r.head).toBe('HTTP/1.1 404 Not Found');
    expect(r.closed).toBe(true);
  }
  // /graphql itself still upgrades
  expect((await rawUpgrade('/graphql')).head).toBe('HTTP/1.1 101 Switching Protocols');
});

test('one account holds at most 20 sockets: the 21st is closed with 4429; closing one frees its slot', async () => {
  const u = await p.newUser();
  // one after the other: until it authenticates, each socket also holds one of the address's 10 anonymous slots
  const first: ReturnType<typeof client>[] = [];
  for (let i = 0; i < 20; i++) {
    first.push(client(u.token));
    expect(await first[i]!.state).toBe('connected');
  }
  const extra = client(u.token);
  expect(await extra.state).toBe(4429);
  expect(extra.closed().reason).toMatch(/at most 20/);
  // another account is not affected
  expect(await client((await p.newUser()).token).state).toBe('connected');

  await first[0]!.c.dispose();
  await until(async () => (await client(u.token).state) === 'connected', 10_000, 'a freed slot');
});

test('at most 10 unauthenticated sockets per address: the 11th upgrade gets 429; closing one frees its slot', async () => {
  // a socket that has authenticated no longer holds one of its address's anonymous slots
  expect(await client((await p.newUser()).token).state).toBe('connected');
  const open: WebSocket[] = [];
  for (let i = 0; i < 10; i++) {
    const s = await anonymousSocket();
    expect(s).toBeInstanceOf(WebSocket);
    open.push(s as WebSocket);
  }
  expect(await anonymousSocket()).toBe(429);

  open[0]!.close();
  const again = await until(async () => {
    const s = await anonymousSocket();
    return s instanceof WebSocket ? s : null;
  }, 10_000, 'a freed anonymous slot');
  expect(again.readyState).toBe(WebSocket.OPEN);
  for (const s of [...open, again]) s.terminate();
});

test('one account runs at most 100 live operations: the 101st gets RATE_LIMITED; stopping one frees its slot', async () => {
  const admin = await p.admin();
  const owner = await p.newUser();
  const serverId = await createLocalDemoServer(p, admin.token, owner.token, 'capped');
  const query = 'subscription($id: ID!) { serverStatus(serverId: $id) { status } }';
  // spread over three sockets: the cap is per account
  const cs = [client(owner.token), client(owner.token), client(owner.token)];
  const subs: Sub[] = Array.from({ length: 100 }, (_, i) => subscribe(cs[i % 3]!.c, query, { id: serverId }));
  await until(() => subs.every((s) => s.items.length > 0), 20_000, '100 subscriptions to answer');

  const over = subscribe(cs[0]!.c, query, { id: serverId });
  await until(() => over.done, 10_000, 'the 101st to be refused');
  expect(over.errors[0]).toMatchObject({ extensions: { code: 'RATE_LIMITED', details: { limit: 100 } } });
  expect(subs.every((s) => !s.done)).toBe(true);

  subs[0]!.stop();
  await until(async () => {
    const next = subscribe(cs[1]!.c, query, { id: serverId });
    await until(() => next.items.length > 0 || next.done, 10_000, 'an answer');
    return next.items.length > 0;
  }, 10_000, 'a freed operation slot');
}, 60_000);

test('a socket that never sends connection_init is closed by the server (4408) and its anonymous slot is freed', async () => {
  const silent: WebSocket[] = [];
  for (let i = 0; i < 10; i++) silent.push((await anonymousSocket()) as WebSocket);
  expect(silent.every((s) => s instanceof WebSocket)).toBe(true);
  expect(await anonymousSocket()).toBe(429);
  const codes = await Promise.all(silent.map((s) => new Promise<number>((resolve) => s.once('close', (code) => resolve(code)))));
  expect(codes).toEqual(Array(10).fill(4408));
  const again = await until(async () => {
    const s = await anonymousSocket();
    return s instanceof WebSocket ? s : null;
  }, 10_000, 'the freed anonymous slots');
  again.terminate();
}, 40_000);
