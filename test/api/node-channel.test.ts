/**
 * The panel's side of the signed node channel (/api/agent/v1): the signature is checked over the raw
 * bytes before anything parses them, and an address that keeps failing is refused unread.
 */
import { deriveNodeKey, signRequest } from '../../src/shared/node-protocol.js';
import { createNode } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform;
let node: { id: string; token: string };
beforeAll(async () => {
  p = await startTestPlatform();
  node = await createNode(p, (await p.admin()).token);
});
afterAll(async () => {
  await p?.stop();
});

test('a wrong signature over a malformed body is a 401, not a parse error: nothing was parsed', async () => {
  const body = '{"events": [ this is not json';
  const authorization = signRequest(node.id, Buffer.alloc(32, 7), 'POST', '/api/agent/v1/events', body);
  const r = await p.request('POST', '/api/agent/v1/events', { raw: body, headers: { authorization, 'content-type': 'application/json' } });
  expect([r.status, r.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
});

test('a right signature over malformed JSON is a 400; over good JSON it is accepted', async () => {
  const key = deriveNodeKey(node.token);
  const bad = '{"events": [';
  const r = await p.request('POST', '/api/agent/v1/events', { raw: bad, headers: { authorization: signRequest(node.id, key, 'POST', '/api/agent/v1/events', bad), 'content-type': 'application/json' } });
  expect([r.status, r.body.error.code]).toEqual([400, 'BAD_REQUEST']);
  const good = JSON.stringify({ events: [] });
  const ok = await p.request('POST', '/api/agent/v1/events', { raw: good, headers: { authorization: signRequest(node.id, key, 'POST', '/api/agent/v1/events', good), 'content-type': 'application/json' } });
  expect(ok.status).toBe(204);
});

test('after 20 failed signatures in a minute, the address is refused (429) before its request is looked at', async () => {
  const q = await startTestPlatform();
  try {
    const n = await createNode(q, (await q.admin()).token);
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++) {
      const authorization = signRequest(n.id, Buffer.alloc(32, i), 'GET', '/api/agent/v1/servers');
      statuses.push((await q.request('GET', '/api/agent/v1/servers', { headers: { authorization } })).status);
    }
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(20)).toEqual([429, 429]);
  } finally {
    await q.stop();
  }
});
