import fc from 'fast-check';
import { expectError, startTestPlatform, type TestPlatform } from '../support/harness.js';


describe('request conventions', () => {
  let p: TestPlatform;
  let token: string;
  beforeAll(async () => {
    p = await startTestPlatform();
    token = (await p.newUser()).token;
  });
  afterAll(async () => p?.stop());

  test('malformed JSON is a 400 BAD_REQUEST', async () => {
    const r = await p.request('POST', '/api/v1/auth/signin', { raw: '{"email": "a@b.c", ', headers: { 'content-type': 'application/json' } });
    expectError(r, 400, 'BAD_REQUEST');
  });

  test.each([['[1,2]'], ['"string"'], ['null'], ['42']])('a non-object body %s is a 400', async (raw) => {
    expectError(await p.request('POST', '/api/v1/auth/signin', { raw, headers: { 'content-type': 'application/json' } }), 400, 'BAD_REQUEST');
  });

  test('a body that is not JSON by Content-Type is a 400', async () => {
    const r = await p.request('POST', '/api/v1/auth/signin', { raw: 'email=a@b.c', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectError(r, 400, 'BAD_REQUEST');
  });

  test('a body over 1 MiB is a 400', async () => {
    const raw = JSON.stringify({ email: 'a@b.c', password: 'x'.repeat(1024 * 1024 + 10) });
    expectError(await p.request('POST', '/api/v1/auth/signin', { raw, headers: { 'content-type': 'application/json' } }), 400, 'BAD_REQUEST');
  });

  test('unknown routes and wrong methods are a 404 in the error shape', async () => {
    expectError(await p.request('GET', '/api/v1/nope', { token }), 404, 'NOT_FOUND');
    expectError(await p.request('DELETE', '/api/v1/users/me', { token }), 404, 'NOT_FOUND');
    expectError(await p.request('GET', '/definitely/not/here'), 404, 'NOT_FOUND');
  });

  test('every error has exactly code, message and an object details (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), async (raw) => {
        const r = await p.request('POST', '/api/v1/auth/signin', { raw, headers: { 'content-type': 'application/json' } });
        expect([400, 401, 422]).toContain(r.status);
        expect(Object.keys(r.body.error).sort()).toEqual(['code', 'details', 'message']);
        expect(typeof r.body.error.details).toBe('object');
        expect(r.text).not.toMatch(/at .*\.(js|ts):\d+|select |insert /i);
      }),
      { numRuns: 40 },
    );
  });

  test('fuzzed signup bodies never produce a 500 (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.object({ values: [fc.string(), fc.integer(), fc.boolean(), fc.constant(null)] }), fc.anything(), async (obj, v) => {
        const r = await p.request('POST', '/api/v1/auth/signup', { body: { ...obj, email: v, password: v, name: v } });
        expect([201, 400, 422]).toContain(r.status);
      }),
      { numRuns: 40 },
    );
  });

  test.each([['0'], ['101'], ['abc'], ['1.5'], ['-1'], [''], ['5%20']])('pagination limit=%s', async (v) => {
    const r = await p.request('GET', `/api/v1/users/me/api-tokens?limit=${v}`, { token });
    if (v === '') expect(r.status).toBe(200);
    else {
      expectError(r, 422, 'VALIDATION_ERROR');
      expect(r.body.error.details.fields.limit).toBeDefined();
    }
  });

  test.each([['0'], ['abc'], ['1.5'], ['-3'], ['%201'], ['%091'], ['1%20']])('pagination page=%s is a 422', async (v) => {
    const r = await p.request('GET', `/api/v1/users/me/api-tokens?page=${v}`, { token });
    expectError(r, 422, 'VALIDATION_ERROR');
    expect(r.body.error.details.fields.page).toBeDefined();
  });

  test('a page past the end is empty with the true total', async () => {
    await p.request('POST', '/api/v1/users/me/api-tokens', { token, body: { name: 'one' } });
    await p.request('POST', '/api/v1/users/me/api-tokens', { token, body: { name: 'two' } });
    const r = await p.request('GET', '/api/v1/users/me/api-tokens?page=5&limit=1', { token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ data: [], meta: { total: 2, page: 5, limit: 1 } });
    const first = await p.request('GET', '/api/v1/users/me/api-tokens?page=1&limit=1', { token });
    const second = await p.request('GET', '/api/v1/users/me/api-tokens?page=2&limit=1', { token });
    expect(first.body.data[0].name).toBe('one');
    expect(second.body.data[0].name).toBe('two');
  });

  test('helmet headers and request ids are present', async () => {
    const r = await p.request('GET', '/api/v1/users/me', { token });
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('content-security-policy')).toBeTruthy();
    expect(r.headers.get('x-powered-by')).toBeNull();
    expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('the page works over plain http: no upgrade-insecure-requests in the CSP (a LAN address got a blank page)', async () => {
    for (const path of ['/', '/sign-in', '/docs', '/api/v1/users/me']) {
      const csp = (await p.request('GET', path, { token })).headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('upgrade-insecure-requests');
    }
  });

  test('API and GraphQL answers are not stored by browsers (Cache-Control: no-store)', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/users/me'],
      ['GET', '/api/v1/auth/session'],
      ['POST', '/graphql'],
    ] as const) {
      const r = await p.request(method, path, { token, ...(method === 'POST' ? { body: { query: '{ me { id } }' } } : {}) });
      expect(r.status).toBe(200);
      expect(r.headers.get('cache-control')).toBe('no-store');
    }
  });

  test('the session cookie is Secure behind a TLS proxy (X-Forwarded-Proto: https), and not over plain http', async () => {
    const u = await p.newUser();
    const body = { email: u.email, password: u.password };
    const proxied = await p.request('POST', '/api/v1/auth/signin', { body, headers: { 'x-forwarded-proto': 'https' } });
    expect(proxied.headers.get('set-cookie')).toMatch(/; Secure/i);
    const plain = await p.request('POST', '/api/v1/auth/signin', { body });
    expect(plain.headers.get('set-cookie')).not.toMatch(/; Secure/i);
  });

  test('/health reports the database', async () => {
    const r = await p.request('GET', '/health');
    expect(r.status).toBe(200);
    expect(r.body.database).toBe('up');
  });
});

describe('rate limits', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ rateLimits: { general: 5, auth: 3, admin: 4 } });
  });
  afterAll(async () => p?.stop());

  test('general bucket: headers on every response, 429 after the configured number, keyed by user', async () => {
    // signup is in the auth bucket (3 per address): use it for two users
    const a = await p.newUser();
    const b = await p.newUser();
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await p.request('GET', '/api/v1/users/me', { token: a.token });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-ratelimit-limit')).toBe('5');
      seen.push(Number(r.headers.get('x-ratelimit-remaining')));
      const reset = Number(r.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThan(Date.now() / 1000);
      expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);
    }
    expect(seen).toEqual([4, 3, 2, 1, 0]);
    const limited = await p.request('GET', '/api/v1/users/me', { token: a.token });
    expectError(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    // another user has their own budget
    expect((await p.request('GET', '/api/v1/users/me', { token: b.token })).status).toBe(200);
  });

  test('auth bucket is keyed by address: the 4th auth call of the minute is a 429', async () => {
    // two signups already used 2 of 3 in the previous test
    const r1 = await p.request('POST', '/api/v1/auth/signin', { body: { email: 'x@example.com', password: 'whatever1' } });
    expect(r1.status).toBe(401);
    expect(r1.headers.get('x-ratelimit-limit')).toBe('3');
    const r2 = await p.request('POST', '/api/v1/auth/signin', { body: { email: 'x@example.com', password: 'whatever1' } });
    expectError(r2, 429, 'RATE_LIMITED');
    expect(r2.headers.get('retry-after')).toBeTruthy();
  });

  test('errors such as 404 and 401 carry the headers too', async () => {
    const r = await p.request('GET', '/api/v1/unknown');
    expect(r.headers.get('x-ratelimit-limit')).toBe('5');
  });
});
