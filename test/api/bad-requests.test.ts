/**
 * Requests that used to get a 500 or slip past a rate-limit bucket (found by an audit of the REST
 * API): each must get the documented 4xx in the documented shape.
 */
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { expectFieldError } from '../support/fixtures.js';
import { expectError, startTestPlatform, type TestPlatform } from '../support/harness.js';

const JSON_TYPE = { 'content-type': 'application/json' };

describe('bodies, paths and plant names that cannot be read', () => {
  let p: TestPlatform;
  let token: string;
  beforeAll(async () => {
    p = await startTestPlatform();
    token = (await p.newUser()).token;
  });
  afterAll(async () => p?.stop());

  test.each([['gzip'], ['deflate'], ['br']])('a body that does not match Content-Encoding: %s is a 400, on a public and a signed-in route', async (encoding) => {
    const headers = { ...JSON_TYPE, 'content-encoding': encoding };
    expectError(await p.request('POST', '/api/v1/auth/signin', { raw: 'xxxx', headers }), 400, 'BAD_REQUEST');
    expectError(await p.request('PATCH', '/api/v1/users/me', { token, raw: 'not compressed at all', headers }), 400, 'BAD_REQUEST');
  });

  test('a cut-off gzip body is a 400; a whole one is read', async () => {
    const whole = gzipSync(JSON.stringify({ name: 'Gzipped Name' }));
    const headers = { ...JSON_TYPE, 'content-encoding': 'gzip' };
    expectError(await p.request('PATCH', '/api/v1/users/me', { token, raw: whole.subarray(0, 12), headers }), 400, 'BAD_REQUEST');
    const ok = await p.request('PATCH', '/api/v1/users/me', { token, raw: whole, headers });
    expect(ok.status).toBe(200);
    expect(ok.body.data.name).toBe('Gzipped Name');
  });

  test('a broken percent-escape in a path id is a 400, signed in or not', async () => {
    expectError(await p.request('GET', '/api/v1/servers/%E0%A4%A', { token }), 400, 'BAD_REQUEST');
    expectError(await p.request('POST', '/api/v1/servers/%ZZ/start', { token }), 400, 'BAD_REQUEST');
    expectError(await p.request('GET', '/api/v1/servers/%ZZ'), 400, 'BAD_REQUEST');
  });

  /** Sends raw bytes and returns the whole answer (the server closes the connection after it). */
  function rawExchange(bytes: string): Promise<string> {
    const { hostname, port } = new URL(p.url);
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = connect(Number(port), hostname, () => socket.write(bytes));
      socket.on('data', (c) => chunks.push(c));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
  }

  function parseRaw(answer: string) {
    const [head, body] = answer.split('\r\n\r\n');
    return { statusLine: head.split('\r\n')[0], head: head.toLowerCase(), body: JSON.parse(body) };
  }

  test('headers over 16 KB are a 400 in the error shape (Node answered a bare 431)', async () => {
    const answer = parseRaw(await rawExchange(`GET /api/v1/users/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(20_000)}\r\n\r\n`));
    expect(answer.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(answer.head).toContain('content-type: application/json');
    expect(answer.body).toEqual({ error: { code: 'BAD_REQUEST', message: expect.stringContaining('16 KB'), details: {} } });
  });

  test('a request that is not HTTP is a 400 in the error shape, and the server goes on answering', async () => {
    const answer = parseRaw(await rawExchange('GARBAGE\r\n\r\n'));
    expect(answer.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(answer.body.error.code).toBe('BAD_REQUEST');
    const me = await p.request('GET', '/api/v1/users/me', { token });
    expect(me.status).toBe(200);
  });

  test('an Expect header other than 100-continue is ignored: the request is answered as any other (Node answered a bare 417)', async () => {
    const answer = parseRaw(await rawExchange(`GET /api/v1/users/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nExpect: something-else\r\nConnection: close\r\n\r\n`));
    expect(answer.statusLine).toBe('HTTP/1.1 200 OK');
    expect(answer.head).toContain('x-ratelimit-limit:');
    expect(answer.body.data.id).toEqual(expect.any(String));
  });

  test('a conditional GET is answered 200 with the body: the API uses only the statuses CONTRACT §1 lists (no ETag, no 304)', async () => {
    const first = await p.request('GET', '/api/v1/servers', { token });
    expect(first.status).toBe(200);
    expect(first.headers.get('etag')).toBeNull();
    for (const tag of ['*', 'W/"x"']) {
      const again = await p.request('GET', '/api/v1/servers', { token, headers: { 'if-none-match': tag } });
      expect([again.status, again.body.meta.total]).toEqual([200, first.body.meta.total]);
    }
  });

  test('OPTIONS is a method no route has: 404 in the error shape, not a plain-text list of methods', async () => {
    expectError(await p.request('OPTIONS', '/api/v1/servers', { token }), 404, 'NOT_FOUND');
    expectError(await p.request('OPTIONS', '/api/v1/users/me'), 404, 'NOT_FOUND');
  });

  test.each([['name', 4711], ['tag', 4712]])('POST /plants with NUL in %s is a 400 in the plant shape (PostgreSQL cannot store it)', async (field, id) => {
    const body = { id, name: 'Fern', [field]: 'a\u0000b' };
    const r = await p.request('POST', '/plants', { token, raw: JSON.stringify(body), headers: JSON_TYPE });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 400, message: expect.stringContaining(field) });
    // and the store still works
    const ok = await p.request('POST', '/plants', { token, raw: JSON.stringify({ id, name: 'Fern' }), headers: JSON_TYPE });
    expect(ok.status).toBe(200);
  });
});

describe('strings with a lone UTF-16 surrogate (well-formed JSON, not text)', () => {
  let p: TestPlatform;
  let token: string;
  let adminToken: string;
  beforeAll(async () => {
    p = await startTestPlatform();
    token = (await p.newUser()).token;
    adminToken = (await p.admin()).token;
  });
  afterAll(async () => p?.stop());

  // JSON text with the escape itself, as a client would send it
  const LONE = 'Ad\\ud800a';

  test('are a 422 with the field on signup, PATCH /users/me and node registration, and nothing is stored', async () => {
    const signup = await p.request('POST', '/api/v1/auth/signup', { raw: `{"email":"lone@example.com","password":"password-123","name":"${LONE}"}`, headers: JSON_TYPE });
    expectFieldError(signup, 'name');
    expect(signup.body.error.details.fields.name).toMatch(/lone UTF-16 surrogate/);
    const pw = await p.request('POST', '/api/v1/auth/signup', { raw: `{"email":"lone2@example.com","password":"pass\\udc00word-123","name":"Lone"}`, headers: JSON_TYPE });
    expectFieldError(pw, 'password');
    expect((await p.request('POST', '/api/v1/auth/signin', { body: { email: 'lone@example.com', password: 'password-123' } })).status).toBe(401);

    expectFieldError(await p.request('PATCH', '/api/v1/users/me', { token, raw: `{"name":"${LONE}"}`, headers: JSON_TYPE }), 'name');
    expect((await p.request('GET', '/api/v1/users/me', { token })).body.data.name).not.toContain('\ufffd');
    expectFieldError(await p.request('POST', '/api/v1/nodes', { token: adminToken, raw: `{"name":"${LONE}","fqdn":"n.example.com","port":5000,"memory":1024,"disk":1024}`, headers: JSON_TYPE }), 'name');
  });

  test('a surrogate pair (an emoji) is text and is kept exactly', async () => {
    const r = await p.request('PATCH', '/api/v1/users/me', { token, body: { name: 'Ada 🌱' } });
    expect(r.status).toBe(200);
    expect(r.body.data.name).toBe('Ada 🌱');
  });

  test('are a 400 in the plant shape on POST /plants', async () => {
    const name = await p.request('POST', '/plants', { token, raw: `{"id":4801,"name":"${LONE}"}`, headers: JSON_TYPE });
    expect(name.status).toBe(400);
    expect(name.body).toEqual({ error: 400, message: expect.stringMatching(/name .*lone UTF-16 surrogate/) });
    const tag = await p.request('POST', '/plants', { token, raw: `{"id":4802,"name":"Fern","tag":"${LONE}"}`, headers: JSON_TYPE });
    expect(tag.body).toEqual({ error: 400, message: expect.stringMatching(/tag .*lone UTF-16 surrogate/) });
    expect((await p.request('POST', '/plants', { token, raw: '{"id":4801,"name":"Fern 🌿"}', headers: JSON_TYPE })).body).toEqual({ name: 'Fern 🌿' });
  });

  test('are VALIDATION_ERROR over GraphQL too', async () => {
    const r = await p.request('POST', '/graphql', { token, raw: `{"query":"mutation($n: String!) { updateMe(input: { name: $n }) { name } }","variables":{"n":"${LONE}"}}`, headers: JSON_TYPE });
    expect(r.body.errors?.[0]?.extensions).toEqual({ code: 'VALIDATION_ERROR', details: { fields: { name: expect.stringMatching(/lone UTF-16 surrogate/) } } });
  });
});

describe('rate-limit buckets do not depend on the case of the path', () => {
  let p: TestPlatform;
  let adminToken: string;
  beforeAll(async () => {
    p = await startTestPlatform({ rateLimits: { general: 50, auth: 3, admin: 3 } });
    adminToken = (await p.admin()).token; // 1 of the 3 auth requests
  });
  afterAll(async () => p?.stop());

  test('/api/v1/AUTH/signin spends from the auth bucket like /auth/signin', async () => {
    const body = { email: 'nobody@example.com', password: 'wrong password' };
    const first = await p.request('POST', '/api/v1/auth/signin', { body });
    expect(first.status).toBe(401);
    const upper = await p.request('POST', '/api/v1/AUTH/signin', { body });
    expect(upper.status).toBe(401);
    expect(upper.headers.get('x-ratelimit-limit')).toBe('3');
    expectError(await p.request('POST', '/api/v1/Auth/signin', { body }), 429, 'RATE_LIMITED');
  });

  test('/api/v1/ADMIN/stats spends from the admin bucket', async () => {
    const r = await p.request('GET', '/api/v1/ADMIN/stats', { token: adminToken });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-ratelimit-limit')).toBe('3');
  });
});
