/**
 * Two gateway instances on one database (REDIS_URL set on both: a scale-out) share the nonces of
 * signed node requests through that database (src/http/node-auth.ts): a request one instance took is
 * refused by the other, even while that other cannot reach Redis, and a database that does not answer
 * refuses the request instead of letting it through. Needs no Redis: B points at a port where nothing
 * listens (A at the machine's Redis when REDIS_URL is set, else at a dead port too), so it runs in
 * every pass.
 */
import { randomBytes } from 'node:crypto';
import { deriveNodeKey, signRequest } from '../../src/shared/node-protocol.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { freePort } from '../support/wait.js';

/** A port where nothing listens. */
const deadPort = freePort;

let a: TestPlatform;
let b: TestPlatform;
let node: { id: string; key: Buffer };
const PATH = '/api/agent/v1/servers';
const sign = () => signRequest(node.id, node.key, 'GET', PATH);
const get = (p: TestPlatform, authorization: string) => p.request('GET', PATH, { headers: { authorization } });

beforeAll(async () => {
  const masterKey = randomBytes(32).toString('base64');
  a = await startTestPlatform({}, { REDIS_URL: process.env.REDIS_URL ?? `redis://127.0.0.1:${await deadPort()}`, MASTER_KEY: masterKey });
  b = await startTestPlatform({}, { REDIS_URL: `redis://127.0.0.1:${await deadPort()}`, MASTER_KEY: masterKey }, { database: a.dbName });
  const admin = await a.admin();
  const created = await a.request('POST', '/api/v1/nodes', { token: admin.token, body: { name: 'nonce-node', fqdn: '127.0.0.1', port: 9, memory: 1024, disk: 1024 } });
  expect(created.status).toBe(201);
  node = { id: created.body.data.id, key: deriveNodeKey(created.body.data.token) };
}, 60_000);
afterAll(async () => {
  await b?.stop();
  await a?.stop();
}, 60_000);

test('a signed request A took is refused by B, which cannot reach Redis; a fresh one is accepted by B', async () => {
  const authorization = sign();
  expect((await get(a, authorization)).status).toBe(200);
  const replayed = await get(b, authorization);
  expect(replayed.status).toBe(401);
  expect(replayed.body.error.code).toBe('UNAUTHORIZED');
  expect((await get(a, authorization)).status).toBe(401);
  expect((await get(b, sign())).status).toBe(200);
});

test('a nonce is kept 10 minutes, not just while the signature is fresh: an instance whose clock is behind still refuses a replay', async () => {
  const authorization = sign();
  expect((await get(a, authorization)).status).toBe(200);
  const nonce = authorization.split(':')[2];
  const [row] = await a.orm.em.getConnection().execute<{ left: number }[]>('select extract(epoch from "expires_at" - now())::float as "left" from "node_nonces" where "nonce" = ?', [nonce]);
  expect(row!.left).toBeGreaterThan(9 * 60);
});

test('a request B took first is refused by A', async () => {
  const authorization = sign();
  expect((await get(b, authorization)).status).toBe(200);
  expect((await get(a, authorization)).status).toBe(401);
});

test('one request sent to both instances at once is accepted once', async () => {
  const authorization = sign();
  const statuses = await Promise.all([a, b, a, b, a, b].map((p) => get(p, authorization).then((r) => r.status)));
  expect(statuses.filter((s) => s === 200)).toHaveLength(1);
  expect(statuses.filter((s) => s === 401)).toHaveLength(5);
});

test('while the nonces cannot be recorded, requests are refused (not accepted); once they can, accepted', async () => {
  const conn = a.orm.em.getConnection();
  await conn.execute('alter table "node_nonces" rename to "node_nonces_away"');
  try {
    const r = await get(b, sign());
    expect(r.status).toBe(500);
    expect(r.body.error.code).toBe('INTERNAL_ERROR');
  } finally {
    await conn.execute('alter table "node_nonces_away" rename to "node_nonces"');
  }
  expect((await get(b, sign())).status).toBe(200);
});
