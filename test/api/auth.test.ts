import { Session } from '../../src/entities/Session.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, expectError, startTestPlatform, type TestPlatform } from '../support/harness.js';
import { expectFieldError } from '../support/fixtures.js';

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => p?.stop());


function sessionCookie(headers: Headers): string {
  const set = headers.getSetCookie().find((c) => c.startsWith('hp_session='));
  if (!set) throw new Error('no session cookie set');
  return set.split(';')[0]!;
}

describe('signup', () => {
  test('creates the user, returns a token and sets an HTTP-only cookie', async () => {
    const r = await p.request('POST', '/api/v1/auth/signup', { body: { email: 'Alice@Example.com', password: 'correct horse', name: 'Alice' } });
    expect(r.status).toBe(201);
    expect(r.body.data.user).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email: 'alice@example.com',
      name: 'Alice',
      role: 'user',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(r.body.data.token).toMatch(/^hps_/);
    expect(new Date(r.body.data.expiresAt).getTime()).toBeGreaterThan(Date.now() + 6 * 86400_000);
    const cookie = r.headers.getSetCookie().find((c) => c.startsWith('hp_session='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(JSON.stringify(r.body)).not.toMatch(/argon2|passwordHash/);
  });

  test('emails are unique case-insensitively', async () => {
    const r = await p.request('POST', '/api/v1/auth/signup', { body: { email: 'ALICE@example.COM', password: 'another pass', name: 'A2' } });
    expectError(r, 422, 'ALREADY_EXISTS');
    expect(r.body.error.details.fields.email).toBeDefined();
  });

  test.each([
    [{}, ['email', 'password', 'name']],
    [{ email: 'not-an-email', password: 'longenough', name: 'x' }, ['email']],
    [{ email: 'b@example.com', password: 'short', name: 'x' }, ['password']],
    [{ email: 'b@example.com', password: 'x'.repeat(129), name: 'x' }, ['password']],
    [{ email: 'b@example.com', password: 'longenough', name: '' }, ['name']],
    [{ email: 'b@example.com', password: 'longenough', name: 'bad\u0000name' }, ['name']],
    [{ email: 42, password: ['a'], name: { x: 1 } }, ['email', 'password', 'name']],
  ])('validation %#', async (body, fields) => {
    const r = await p.request('POST', '/api/v1/auth/signup', { body });
    expectError(r, 422, 'VALIDATION_ERROR');
    expect(Object.keys(r.body.error.details.fields).sort()).toEqual([...fields].sort());
  });

  test('unknown fields are ignored and a user cannot make themselves admin', async () => {
    const r = await p.request('POST', '/api/v1/auth/signup', { body: { email: 'eve@example.com', password: 'password1', name: 'Eve', role: 'admin' } });
    expect(r.status).toBe(201);
    expect(r.body.data.user.role).toBe('user');
  });

  test('odd Unicode and injection strings are stored verbatim', async () => {
    const name = "Robert'); DROP TABLE users;-- 🚀 Zoë ﷽";
    const r = await p.request('POST', '/api/v1/auth/signup', { body: { email: 'bobby@example.com', password: 'password1', name } });
    expect(r.status).toBe(201);
    const me = await p.request('GET', '/api/v1/users/me', { token: r.body.data.token });
    expect(me.body.data.name).toBe(name);
  });
});

describe('signin', () => {
  test('works for the first administrator created at start', async () => {
    const r = await p.request('POST', '/api/v1/auth/signin', { body: { email: ADMIN_EMAIL.toUpperCase(), password: ADMIN_PASSWORD } });
    expect(r.status).toBe(200);
    expect(r.body.data.user.role).toBe('admin');
    expect(r.body.data.token).toMatch(/^hps_/);
  });

  test('wrong password and unknown email give the same 401', async () => {
    const wrong = await p.request('POST', '/api/v1/auth/signin', { body: { email: 'alice@example.com', password: 'wrong password' } });
    const unknown = await p.request('POST', '/api/v1/auth/signin', { body: { email: 'nobody@example.com', password: 'wrong password' } });
    expectError(wrong, 401, 'UNAUTHORIZED');
    expectError(unknown, 401, 'UNAUTHORIZED');
    expect(wrong.body.error.message).toBe(unknown.body.error.message);
  });

  test('an email with a NUL is a 422 naming the field, not a 500 (PostgreSQL cannot hold NUL)', async () => {
    expectFieldError(await p.request('POST', '/api/v1/auth/signin', { body: { email: 'a\u0000b@example.com', password: 'whatever-123' } }), 'email');
  });

  test('missing fields are a 422', async () => {
    expectError(await p.request('POST', '/api/v1/auth/signin', { body: { email: 'a@b.c' } }), 422, 'VALIDATION_ERROR');
  });
});

describe('session, bearer and cookie', () => {
  test('GET /auth/session with bearer and with cookie', async () => {
    const u = await p.newUser();
    const bearer = await p.request('GET', '/api/v1/auth/session', { token: u.token });
    expect(bearer.status).toBe(200);
    expect(bearer.body.data).toEqual({
      session: { id: expect.any(String), kind: 'session', createdAt: expect.any(String), expiresAt: expect.any(String) },
      user: expect.objectContaining({ id: u.user.id, email: u.email }),
    });
    const signin = await p.request('POST', '/api/v1/auth/signin', { body: { email: u.email, password: u.password } });
    const cookie = sessionCookie(signin.headers);
    const viaCookie = await p.request('GET', '/api/v1/auth/session', { cookie });
    expect(viaCookie.status).toBe(200);
    expect(viaCookie.body.data.user.id).toBe(u.user.id);
  });

  test.each([
    ['no credentials', {}],
    ['garbage bearer', { headers: { authorization: 'Bearer nope' } }],
    ['malformed header', { headers: { authorization: 'Basic abc' } }],
    ['unknown session token', { headers: { authorization: 'Bearer hps_' + 'a'.repeat(43) } }],
    ['unknown cookie', { cookie: 'hp_session=hps_xyz' }],
  ])('401 with %s', async (_name, opts) => {
    expectError(await p.request('GET', '/api/v1/users/me', opts as any), 401, 'UNAUTHORIZED');
  });

  test('signout invalidates the session at once and clears the cookie', async () => {
    const u = await p.newUser();
    const out = await p.request('POST', '/api/v1/auth/signout', { token: u.token });
    expect(out.status).toBe(204);
    expect(out.text).toBe('');
    expect(out.headers.getSetCookie().join(';')).toMatch(/hp_session=;/);
    expectError(await p.request('GET', '/api/v1/users/me', { token: u.token }), 401, 'UNAUTHORIZED');
    expectError(await p.request('POST', '/api/v1/auth/signout', { token: u.token }), 401, 'UNAUTHORIZED');
  });

  test('an expired session is refused', async () => {
    const u = await p.newUser();
    const em = p.orm.em.fork();
    const s = await em.findOneOrFail(Session, { user: u.user.id });
    s.expiresAt = new Date(Date.now() - 1000);
    await em.flush();
    expectError(await p.request('GET', '/api/v1/users/me', { token: u.token }), 401, 'UNAUTHORIZED');
  });

  test('session secrets are stored hashed', async () => {
    const u = await p.newUser();
    const rows = await p.orm.em.fork().getConnection().execute('select token_hash from sessions');
    expect(rows.map((r: any) => r.token_hash)).not.toContain(u.token);
    expect(JSON.stringify(rows)).not.toContain(u.token);
  });
});

describe('CSRF protection for cookie-authenticated writes', () => {
  let cookie: string;
  beforeAll(async () => {
    const u = await p.newUser();
    const signin = await p.request('POST', '/api/v1/auth/signin', { body: { email: u.email, password: u.password } });
    cookie = sessionCookie(signin.headers);
  });

  test('a write from a foreign Origin is refused', async () => {
    const r = await p.request('PATCH', '/api/v1/users/me', { cookie, body: { name: 'csrf' }, headers: { origin: 'https://evil.example' } });
    expectError(r, 403, 'FORBIDDEN');
  });

  test('a cross-site fetch without Origin is refused', async () => {
    const r = await p.request('PATCH', '/api/v1/users/me', { cookie, body: { name: 'csrf' }, headers: { 'sec-fetch-site': 'cross-site' } });
    expectError(r, 403, 'FORBIDDEN');
  });

  test('a same-origin write is accepted, and bearer requests need no Origin', async () => {
    const host = new URL(p.url).host;
    const r = await p.request('PATCH', '/api/v1/users/me', { cookie, body: { name: 'Same Origin' }, headers: { origin: `http://${host}` } });
    expect(r.status).toBe(200);
    expect(r.body.data.name).toBe('Same Origin');
    const u = await p.newUser();
    const b = await p.request('PATCH', '/api/v1/users/me', { token: u.token, body: { name: 'Bearer' }, headers: { origin: 'https://evil.example' } });
    expect(b.status).toBe(200);
  });
});

describe('PATCH /users/me', () => {
  test('updates name and email; a taken email is ALREADY_EXISTS', async () => {
    const a = await p.newUser();
    const b = await p.newUser();
    const ok = await p.request('PATCH', '/api/v1/users/me', { token: a.token, body: { name: 'Renamed', email: `New.${a.email}`, currentPassword: a.password } });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ name: 'Renamed', email: `new.${a.email}` });
    expectError(await p.request('PATCH', '/api/v1/users/me', { token: a.token, body: { email: b.email.toUpperCase(), currentPassword: a.password } }), 422, 'ALREADY_EXISTS');
    expectError(await p.request('PATCH', '/api/v1/users/me', { token: a.token, body: { name: 123 } }), 422, 'VALIDATION_ERROR');
  });

  test('an email change needs the current password (a stolen token alone cannot take over the account)', async () => {
    const u = await p.newUser();
    const missing = await p.request('PATCH', '/api/v1/users/me', { token: u.token, body: { email: `moved.${u.email}` } });
    expectError(missing, 422, 'VALIDATION_ERROR');
    expect(Object.keys(missing.body.error.details.fields)).toEqual(['currentPassword']);
    const wrong = await p.request('PATCH', '/api/v1/users/me', { token: u.token, body: { email: `moved.${u.email}`, currentPassword: 'not-the-password' } });
    expectError(wrong, 422, 'VALIDATION_ERROR');
    expect(Object.keys(wrong.body.error.details.fields)).toEqual(['currentPassword']);
    // nothing changed: the old email still signs in
    expect((await p.request('POST', '/api/v1/auth/signin', { body: { email: u.email, password: u.password } })).status).toBe(200);
    // the same email (any case) is no change and needs nothing; a taken email is not revealed without the password
    expect((await p.request('PATCH', '/api/v1/users/me', { token: u.token, body: { email: u.email.toUpperCase(), name: 'Same' } })).status).toBe(200);
    const other = await p.newUser();
    expectError(await p.request('PATCH', '/api/v1/users/me', { token: u.token, body: { email: other.email } }), 422, 'VALIDATION_ERROR');
    const ok = await p.request('PATCH', '/api/v1/users/me', { token: u.token, body: { email: `moved.${u.email}`, currentPassword: u.password } });
    expect(ok.status).toBe(200);
    expect(ok.body.data.email).toBe(`moved.${u.email}`);
  });

  test('a password change needs the current password and ends the other sessions', async () => {
    const u = await p.newUser();
    const other = await p.request('POST', '/api/v1/auth/signin', { body: { email: u.email, password: u.password } });
    const otherToken = other.body.data.token;
    const missing = await p.request('PATCH', '/api/v1/users/me', { token: u.token, body: { password: 'new-password-1' } });
    expectError(missing, 422, 'VALIDATION_ERROR');
    expect(missing.body.error.details.fields.currentPassword).toBeDefined();
    const wrong = await p.request('PATCH', '/api/v1/users/me', { token: u.token, body: { password: 'new-password-1', currentPassword: 'nope-nope' } });
    expectError(wrong, 422, 'VALIDATION_ERROR');
    const ok = await p.request('PATCH', '/api/v1/users/me', { token: u.token, body: { password: 'new-password-1', currentPassword: u.password } });
    expect(ok.status).toBe(200);
    // this session stays, the other one ends, the old password no longer works, the new one does
    expect((await p.request('GET', '/api/v1/users/me', { token: u.token })).status).toBe(200);
    expectError(await p.request('GET', '/api/v1/users/me', { token: otherToken }), 401, 'UNAUTHORIZED');
    expectError(await p.request('POST', '/api/v1/auth/signin', { body: { email: u.email, password: u.password } }), 401, 'UNAUTHORIZED');
    expect((await p.request('POST', '/api/v1/auth/signin', { body: { email: u.email, password: 'new-password-1' } })).status).toBe(200);
  });
});

describe('API tokens', () => {
  test('create (secret shown once), use, list without secrets, revoke', async () => {
    const u = await p.newUser();
    const created = await p.request('POST', '/api/v1/users/me/api-tokens', { token: u.token, body: { name: 'CI' } });
    expect(created.status).toBe(201);
    const secret = created.body.data.token;
    expect(secret).toMatch(/^hpt_/);
    expect(created.body.data).toMatchObject({ id: expect.any(String), name: 'CI', prefix: secret.slice(0, 12), expiresAt: null });

    const me = await p.request('GET', '/api/v1/users/me', { token: secret });
    expect(me.status).toBe(200);
    expect(me.body.data.id).toBe(u.user.id);

    const list = await p.request('GET', '/api/v1/users/me/api-tokens', { token: u.token });
    expect(list.status).toBe(200);
    expect(list.body.meta).toEqual({ total: 1, page: 1, limit: 20 });
    expect(JSON.stringify(list.body)).not.toContain(secret);

    const other = await p.newUser();
    expectError(await p.request('DELETE', `/api/v1/users/me/api-tokens/${created.body.data.id}`, { token: other.token }), 404, 'NOT_FOUND');

    const del = await p.request('DELETE', `/api/v1/users/me/api-tokens/${created.body.data.id}`, { token: u.token });
    expect(del.status).toBe(204);
    expectError(await p.request('GET', '/api/v1/users/me', { token: secret }), 401, 'UNAUTHORIZED');
    expectError(await p.request('DELETE', `/api/v1/users/me/api-tokens/${created.body.data.id}`, { token: u.token }), 404, 'NOT_FOUND');
    expectError(await p.request('DELETE', `/api/v1/users/me/api-tokens/not-a-uuid`, { token: u.token }), 404, 'NOT_FOUND');
  });

  test('a token revoked by several requests at once is revoked once: one 204, the others 404, one activity entry', async () => {
    const u = await p.newUser();
    for (let round = 0; round < 3; round++) {
      const made = (await p.request('POST', '/api/v1/users/me/api-tokens', { token: u.token, body: { name: `twice ${round}` } })).body.data;
      const answers = await Promise.all([0, 1, 2].map(() => p.request('DELETE', `/api/v1/users/me/api-tokens/${made.id}`, { token: u.token })));
      expect(answers.map((r) => r.status).sort()).toEqual([204, 404, 404]);
    }
    const log = await p.request('GET', '/api/v1/users/me/activity?event=user:api-token.delete&limit=100', { token: u.token });
    expect(log.body.data).toHaveLength(3);
  });

  test('a token made with an expiring API token expires with it at the latest; a session may make a permanent one', async () => {
    const u = await p.newUser();
    const short = (await p.request('POST', '/api/v1/users/me/api-tokens', { token: u.token, body: { name: 'short', expiresInDays: 1 } })).body.data;
    const minted = await p.request('POST', '/api/v1/users/me/api-tokens', { token: short.token, body: { name: 'forever' } });
    expect(minted.status).toBe(201);
    expect(minted.body.data.expiresAt).toBe(short.expiresAt);
    const longer = await p.request('POST', '/api/v1/users/me/api-tokens', { token: short.token, body: { name: 'year', expiresInDays: 365 } });
    expect(longer.body.data.expiresAt).toBe(short.expiresAt);
    const shorter = await p.request('POST', '/api/v1/users/me/api-tokens', { token: u.token, body: { name: 'session-made' } });
    expect(shorter.body.data.expiresAt).toBeNull();
    const fromPermanent = await p.request('POST', '/api/v1/users/me/api-tokens', { token: shorter.body.data.token, body: { name: 'child' } });
    expect(fromPermanent.body.data.expiresAt).toBeNull();
  });

  test('signing out with an API token revokes it (it stops working at once, like a session)', async () => {
    const u = await p.newUser();
    const t = (await p.request('POST', '/api/v1/users/me/api-tokens', { token: u.token, body: { name: 'out' } })).body.data;
    expect((await p.request('POST', '/api/v1/auth/signout', { token: t.token })).status).toBe(204);
    expectError(await p.request('GET', '/api/v1/users/me', { token: t.token }), 401, 'UNAUTHORIZED');
    expect((await p.request('GET', '/api/v1/users/me', { token: u.token })).status).toBe(200); // the session is another credential
  });

  test('validation and anonymous access', async () => {
    const u = await p.newUser();
    expectError(await p.request('POST', '/api/v1/users/me/api-tokens', { token: u.token, body: { name: '' } }), 422, 'VALIDATION_ERROR');
    expectError(await p.request('POST', '/api/v1/users/me/api-tokens', { token: u.token, body: { name: 'x', expiresInDays: 0 } }), 422, 'VALIDATION_ERROR');
    expectError(await p.request('POST', '/api/v1/users/me/api-tokens', { body: { name: 'x' } }), 401, 'UNAUTHORIZED');
    expectError(await p.request('GET', '/api/v1/users/me/api-tokens'), 401, 'UNAUTHORIZED');
  });
});

describe('signup can be turned off', () => {
  let closed: TestPlatform;
  beforeAll(async () => {
    closed = await startTestPlatform({ allowSignup: false });
  });
  afterAll(async () => closed?.stop());

  test('POST /auth/signup is 403 and the admin can still sign in', async () => {
    expectError(await closed.request('POST', '/api/v1/auth/signup', { body: { email: 'x@example.com', password: 'password1', name: 'X' } }), 403, 'FORBIDDEN');
    expect((await closed.request('POST', '/api/v1/auth/signin', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).status).toBe(200);
  });
});
