/**
 * Large GraphQL bodies (over 1 MiB, up to 2 × FILE_EDIT_MAX_BYTES + 1 MiB for a signed-in caller) are
 * read only within a budget (src/graphql/large-bodies.ts): two at once per caller, 64 MiB at once for
 * all callers together; one more is answered 429 RATE_LIMITED before its body is read. A large body
 * must declare its length: a chunked one gets the 1 MiB of every JSON route.
 * Each request here is sent on its own connection, headers first, and its body held back, so that
 * the panel has the request on its way while the next one comes.
 */
import net from 'node:net';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

const MiB = 1024 * 1024;
let p: TestPlatform;
let limit: number;

beforeAll(async () => {
  p = await startTestPlatform();
  limit = 2 * p.config.fileEditMaxBytes + MiB;
}, 120_000);
afterAll(async () => {
  await p?.stop();
}, 60_000);

/** A GraphQL body of exactly `bytes` bytes: a small query, padded with a variable it does not use. */
function paddedBody(bytes: number): Buffer {
  const head = '{"query":"{ __typename }","variables":{"pad":"';
  const tail = '"}}';
  return Buffer.from(head + 'x'.repeat(bytes - head.length - tail.length) + tail);
}

interface Held {
  /** resolves with the status line's code once the whole answer has come */
  answer: Promise<{ status: number; text: string }>;
  /** whether an answer has begun */
  answered(): boolean;
  /** sends the rest of the body */
  finish(): void;
}

/** Sends a request's headers and its body's first byte, and holds the rest back until `finish`. */
function hold(token: string, body: Buffer, headers: Record<string, string> = { 'content-length': String(body.length) }): Held {
  const url = new URL(p.url);
  const socket = net.connect(Number(url.port), url.hostname);
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (text += d));
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const done = () => {
      const [head = '', rest = ''] = text.split('\r\n\r\n', 2);
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? NaN);
      if (head && rest.length >= length) {
        resolve({ status: Number(head.split(' ')[1]), text: rest });
        socket.destroy();
      }
    };
    socket.on('data', done);
    socket.on('error', reject);
  });
  const lines = Object.entries({ host: url.host, authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers }).map(([k, v]) => `${k}: ${v}`);
  socket.write(`POST /graphql HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
  const chunked = headers['transfer-encoding'] === 'chunked';
  const frame = (b: Buffer) => (chunked ? Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]) : b);
  socket.write(frame(body.subarray(0, 1)));
  return {
    answer,
    answered: () => text.length > 0,
    finish: () => {
      socket.write(frame(body.subarray(1)));
      if (chunked) socket.write('0\r\n\r\n');
    },
  };
}

/** Waits until one of `held` has an answer (or gives up after 15 s), then lets every body go and reads the answers' statuses, sorted. */
async function statuses(held: Held[]): Promise<number[]> {
  const started = Date.now();
  while (!held.some((h) => h.answered()) && Date.now() - started < 15_000) await new Promise((r) => setTimeout(r, 20));
  held.forEach((h) => h.finish());
  return (await Promise.all(held.map((h) => h.answer))).map((a) => a.status).sort();
}

test('a caller has two large bodies on their way at once; a third is refused 429 before it is read, and the share comes back', async () => {
  const { token } = await p.newUser('Saver');
  const held = [hold(token, paddedBody(2 * MiB)), hold(token, paddedBody(2 * MiB)), hold(token, paddedBody(2 * MiB))];
  expect(await statuses(held)).toEqual([200, 200, 429]);
  const refused = (await Promise.all(held.map((h) => h.answer))).find((a) => a.status === 429)!;
  expect(JSON.parse(refused.text).errors[0].extensions.code).toBe('RATE_LIMITED');
  // both shares are back: two more go through at once
  expect(await statuses([hold(token, paddedBody(2 * MiB)), hold(token, paddedBody(2 * MiB))])).toEqual([200, 200]);
}, 60_000);

test('all callers together: seven bodies at the limit are read at once, the eighth is refused', async () => {
  const users = await Promise.all([1, 2, 3, 4].map((i) => p.newUser(`Big ${i}`)));
  const body = paddedBody(limit);
  const held = users.flatMap((u) => [hold(u.token, body), hold(u.token, body)]);
  expect(await statuses(held)).toEqual([200, 200, 200, 200, 200, 200, 200, 429]);
}, 90_000);

test('a chunked body over 1 MiB gets the 1 MiB limit, with what to do instead', async () => {
  const { token } = await p.newUser('Chunked');
  const h = hold(token, paddedBody(2 * MiB), { 'transfer-encoding': 'chunked' });
  h.finish();
  const a = await h.answer;
  expect(a.status).toBe(400);
  expect(JSON.parse(a.text).errors[0].message).toMatch(/larger than 1 MiB.*Content-Length/);
}, 60_000);

test('a body declared over the limit is refused with the limit in bytes', async () => {
  const { token } = await p.newUser('Huge');
  const h = hold(token, paddedBody(limit + 1));
  const a = await h.answer;
  expect(a.status).toBe(400);
  expect(JSON.parse(a.text).errors[0].message).toContain(`larger than ${limit} bytes`);
}, 60_000);
