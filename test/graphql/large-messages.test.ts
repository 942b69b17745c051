/**
 * Large messages (over 1 MiB) on signed-in GraphQL sockets spend the budget of large HTTP bodies
 * (src/graphql/ws-large-messages.ts, src/graphql/large-bodies.ts): a user's third large body or
 * message on its way waits (a socket is not read further) until one of the first two is in; a large
 * HTTP body over the budget is answered 429. Other users are not held up by one user's share.
 * A message is held half-sent by sending its first fragment only (`fin: false`).
 */
import WebSocket from 'ws';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { sleep, until } from '../support/wait.js';

const MiB = 1024 * 1024;
let p: TestPlatform;

beforeAll(async () => {
  p = await startTestPlatform();
}, 120_000);
afterAll(async () => {
  await p?.stop();
}, 60_000);

/** A graphql-ws `subscribe` message of about `bytes` bytes: a small query padded with a variable it does not use. */
function paddedMessage(id: string, bytes: number): string {
  const head = `{"id":"${id}","type":"subscribe","payload":{"query":"{ __typename }","variables":{"pad":"`;
  const tail = '"}}}';
  return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
}

interface Client {
  ws: WebSocket;
  /** the ids of the operations answered (a `next` or an `error`) */
  answered: Set<string>;
}

async function connect(token: string): Promise<Client> {
  const ws = new WebSocket(p.url.replace(/^http/, 'ws') + '/graphql', 'graphql-transport-ws');
  const answered = new Set<string>();
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } }));
  await new Promise<void>((resolve) => ws.once('message', () => resolve())); // connection_ack
  ws.on('message', (raw) => {
    const m = JSON.parse(raw.toString()) as { id?: string; type: string };
    if (m.id && (m.type === 'next' || m.type === 'error')) answered.add(m.id);
  });
  return { ws, answered };
}

/** Sends a large message's first fragment (over 1 MiB) and holds the rest back until `finish`. */
function holdHalfSent(c: Client, id: string): { finish(): void } {
  const message = paddedMessage(id, 3 * MiB);
  const cut = Math.floor(1.5 * MiB);
  c.ws.send(message.slice(0, cut), { fin: false });
  return { finish: () => c.ws.send(message.slice(cut), { fin: true }) };
}

/** A GraphQL request over HTTP with a body of `bytes` bytes (declared with Content-Length). */
async function largePost(token: string, bytes: number): Promise<{ status: number; code?: string }> {
  const head = '{"query":"{ __typename }","variables":{"pad":"';
  const tail = '"}}';
  const res = await fetch(p.url + '/graphql', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: head + 'x'.repeat(bytes - head.length - tail.length) + tail,
  });
  const body = (await res.json()) as { errors?: { extensions?: { code?: string } }[] };
  return { status: res.status, code: body.errors?.[0]?.extensions?.code };
}

/** Resolves once the user's two shares are taken: a large HTTP body of theirs is then refused 429. */
async function sharesTaken(token: string): Promise<void> {
  await until(async () => (await largePost(token, MiB + 1024)).status === 429, 15_000, 'both shares to be taken');
}

test('a user\'s third large message waits until one of the first two is in; another user\'s does not', async () => {
  const { token } = await p.newUser('Writer');
  const [a, b, c] = await Promise.all([connect(token), connect(token), connect(token)]);
  const heldA = holdHalfSent(a, 'a');
  const heldB = holdHalfSent(b, 'b');
  await sharesTaken(token);

  c.ws.send(paddedMessage('c', 2 * MiB));
  const other = await connect((await p.newUser('Other')).token);
  other.ws.send(paddedMessage('o', 2 * MiB));
  await until(() => other.answered.has('o'), 15_000, 'the other user\'s large message to be answered');
  await sleep(500);
  expect(c.answered.has('c')).toBe(false);

  heldA.finish();
  await until(() => a.answered.has('a') && c.answered.has('c'), 15_000, 'a, then the waiting c, to be answered');
  heldB.finish();
  await until(() => b.answered.has('b'), 15_000, 'b to be answered');
  for (const s of [a, b, c, other]) s.ws.close();
}, 60_000);

test('large HTTP bodies and large WebSocket messages share one budget per user', async () => {
  const { token } = await p.newUser('Both');
  const [a, b] = await Promise.all([connect(token), connect(token)]);
  const held = [holdHalfSent(a, 'a'), holdHalfSent(b, 'b')];
  await sharesTaken(token);
  expect(await largePost(token, 2 * MiB)).toEqual({ status: 429, code: 'RATE_LIMITED' });
  held.forEach((h) => h.finish());
  await until(() => a.answered.has('a') && b.answered.has('b'), 15_000, 'both messages to be answered');
  // the shares are back
  expect(await largePost(token, 2 * MiB)).toEqual({ status: 200, code: undefined });
  for (const s of [a, b]) s.ws.close();
}, 60_000);
