/** The plant store: POST /plants, int64 ids kept exactly, the plant Error shape. */
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform;
let token: string;
let apiToken: string;

beforeAll(async () => {
  p = await startTestPlatform();
  token = (await p.newUser()).token;
  const t = await p.request('POST', '/api/v1/users/me/api-tokens', { token, body: { name: 'plants' } });
  apiToken = t.body.data.token;
});
afterAll(async () => p?.stop());

const JSON_TYPE = { 'content-type': 'application/json' };
const post = (raw: string, opts: { token?: string | undefined; headers?: Record<string, string> } = {}) =>
  p.request('POST', '/plants', { token: 'token' in opts ? opts.token : token, raw, headers: opts.headers ?? JSON_TYPE });

const expectPlantError = (r: { status: number; body: any }, status: number) => {
  expect(r.status).toBe(status);
  expect(r.body).toEqual({ error: status, message: expect.any(String) });
};

async function storedId(name: string): Promise<string> {
  const rows = await p.orm.em.fork().getConnection().execute(`select id::text as id from plants where name = ?`, [name]);
  return rows[0]?.id;
}

test('adds a plant: 200 with { name, tag }; tag omitted when not given', async () => {
  const r = await post('{"id": 1, "name": "Fern", "tag": "indoor"}');
  expect(r.status).toBe(200);
  expect(r.body).toEqual({ name: 'Fern', tag: 'indoor' });
  expect(r.headers.get('content-type')).toMatch(/application\/json/);
  const r2 = await post('{"id": 2, "name": "Cactus"}');
  expect(r2.status).toBe(200);
  expect(r2.body).toEqual({ name: 'Cactus' });
  expect(r2.text).not.toContain('tag');
});

test('API tokens work too; rate-limit headers on every response', async () => {
  const r = await post('{"id": 3, "name": "Ivy"}', { token: apiToken });
  expect(r.status).toBe(200);
  for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(r.headers.get(h)).toMatch(/^\d+$/);
  const bad = await post('{"id": 3, "name": "Ivy"}', { token: undefined });
  expect(bad.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
});

test('int64 ids are kept exactly: 2^63-1 and -2^63 round-trip; values beyond 2^53 are not rounded', async () => {
  expect((await post('{"id": 9223372036854775807, "name": "max"}')).status).toBe(200);
  expect(await storedId('max')).toBe('9223372036854775807');
  expect((await post('{"id": -9223372036854775808, "name": "min"}')).status).toBe(200);
  expect(await storedId('min')).toBe('-9223372036854775808');
  expect((await post('{"name": "big", "nested": {"id": 5}, "id": 9007199254740993}')).status).toBe(200);
  expect(await storedId('big')).toBe('9007199254740993');
  // 9007199254740992 and 9007199254740993 are the same double: both must be distinct plants
  expect((await post('{"id": 9007199254740992, "name": "big2"}')).status).toBe(200);
  expect(await storedId('big2')).toBe('9007199254740992');
  expectPlantError(await post('{"id": 9007199254740993, "name": "dup of big"}'), 400);
});

test.each([
  ['2^63', '{"id": 9223372036854775808, "name": "x"}'],
  ['-2^63-1', '{"id": -9223372036854775809, "name": "x"}'],
  ['a fraction', '{"id": 1.5, "name": "x"}'],
  ['1.0', '{"id": 1.0, "name": "x"}'],
  ['an exponent', '{"id": 1e3, "name": "x"}'],
  ['a string id', '{"id": "1", "name": "x"}'],
  ['a null id', '{"id": null, "name": "x"}'],
  ['a missing id', '{"name": "x"}'],
  ['a missing name', '{"id": 10}'],
  ['an empty name', '{"id": 10, "name": ""}'],
  ['a blank name', '{"id": 10, "name": "   "}'],
  ['a numeric name', '{"id": 10, "name": 5}'],
  ['a numeric tag', '{"id": 10, "name": "x", "tag": 5}'],
  ['a null tag', '{"id": 10, "name": "x", "tag": null}'],
  ['malformed JSON', '{"id": 10, "name": '],
  ['trailing garbage', '{"id": 10, "name": "x"} x'],
  ['an array', '[{"id": 10, "name": "x"}]'],
  ['a number', '42'],
  ['null', 'null'],
  ['an empty body', ''],
])('%s → 400 in the plant Error shape', async (_what, raw) => {
  expectPlantError(await post(raw), 400);
});

test('a duplicate id → 400', async () => {
  expect((await post('{"id": 77, "name": "first"}')).status).toBe(200);
  expectPlantError(await post('{"id": 77, "name": "second"}'), 400);
  expectPlantError(await post('{"id": 77.0e0, "name": "third"}'), 400);
});

test('the last duplicate key wins, as with JSON.parse; escaped keys and odd strings are handled', async () => {
  expect((await post('{"id": 1000, "id": 1001, "name": "dupkey"}')).status).toBe(200);
  expect(await storedId('dupkey')).toBe('1001');
  expect((await post('{"\\u0069d": 1002, "name": "esc \\"}{, \\\\ key", "tag": "{\\"id\\": 5}"}')).status).toBe(200);
  expect(await storedId('esc "}{, \\ key')).toBe('1002');
  expect((await post('\n\t{ "name" : "spaced" , "id" :\n -0 }\n')).status).toBe(200);
  expect(await storedId('spaced')).toBe('0');
});

test('names are stored verbatim: Unicode and injection strings', async () => {
  const names = ["Robert'); DROP TABLE plants; --", '🌵 Ünïcødé 仙人掌', '<img src=x onerror=alert(1)>'];
  let id = 5000;
  for (const name of names) {
    const r = await post(JSON.stringify({ id: id++, name, tag: name }));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ name, tag: name });
  }
});

test('401 without, with a malformed or with an unknown bearer token, in the plant Error shape', async () => {
  expectPlantError(await post('{"id": 20, "name": "x"}', { token: undefined }), 401);
  expectPlantError(await post('{"id": 20, "name": "x"}', { token: 'hps_nope' }), 401);
  expectPlantError(await p.request('POST', '/plants', { raw: '{"id": 20, "name": "x"}', headers: { ...JSON_TYPE, authorization: 'Basic abc' } }), 401);
  const signedOut = await p.newUser();
  await p.request('POST', '/api/v1/auth/signout', { token: signedOut.token });
  expectPlantError(await post('{"id": 20, "name": "x"}', { token: signedOut.token }), 401);
});

test('wrong content type and oversized bodies → 400', async () => {
  expectPlantError(await post('{"id": 30, "name": "x"}', { headers: { 'content-type': 'text/plain' } }), 400);
  expectPlantError(await post('{"id": 30, "name": "x"}', { headers: {} }), 400);
  expectPlantError(await post(JSON.stringify({ id: 31, name: 'x'.repeat(1024 * 1024 + 1) })), 400);
  expect((await post('{"id": 32, "name": "ok"}', { headers: { 'content-type': 'application/json; charset=utf-8' } })).status).toBe(200);
});

test('other methods and paths under /plants → 404 in the plant Error shape', async () => {
  expectPlantError(await p.request('GET', '/plants', { token }), 404);
  expectPlantError(await p.request('DELETE', '/plants', { token }), 404);
  expectPlantError(await p.request('POST', '/plants/1', { token, raw: '{}', headers: JSON_TYPE }), 404);
  expectPlantError(await p.request('GET', '/plants/1'), 404);
});

describe('rate limit', () => {
  let q: TestPlatform;
  beforeAll(async () => {
    q = await startTestPlatform({ rateLimits: { general: 3, auth: 100, admin: 100 } });
  });
  afterAll(async () => q?.stop());

  test('429 in the plant Error shape with Retry-After once over the general limit', async () => {
    const r = await q.request('POST', '/api/v1/auth/signup', { body: { email: 'rl@example.com', password: 'password-123', name: 'RL' } });
    const t = r.body.data.token;
    const statuses = [];
    let last: any;
    for (let i = 0; i < 4; i++) {
      last = await q.request('POST', '/plants', { token: t, raw: JSON.stringify({ id: 900 + i, name: 'x' }), headers: JSON_TYPE });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expectPlantError(last, 429);
    expect(last.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(last.headers.get('x-ratelimit-remaining')).toBe('0');
  });
});
