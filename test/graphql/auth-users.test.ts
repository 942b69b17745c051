/** GraphQL twins of /auth/* and /users/me*: success, errors, cookies, CSRF and REST parity. */
import { startTestPlatform, type TestPlatform, ADMIN_EMAIL, ADMIN_PASSWORD } from '../support/harness.js';
import { expectData, expectGqlError, gql } from './gql.js';

const SIGN_UP = 'mutation($input: SignUpInput!) { signUp(input: $input) { token expiresAt user { id email name role createdAt } } }';
const SIGN_IN = 'mutation($input: SignInInput!) { signIn(input: $input) { token expiresAt user { id email role } } }';

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => p?.stop());

const sessionCookie = (headers: Headers) => {
  const c = headers.getSetCookie().find((s) => s.startsWith('hp_session='));
  return c ? c.split(';')[0]! : null;
};

describe('signUp / signIn / session / signOut', () => {
  test('signUp returns { user, token, expiresAt } and sets the HTTP-only session cookie', async () => {
    const r = await gql(p, SIGN_UP, { input: { email: 'Alice@Example.com', password: 'password-123', name: 'Alice' } });
    const d = expectData(r).signUp;
    expect(d.user).toMatchObject({ email: 'alice@example.com', name: 'Alice', role: 'user' });
    expect(d.token).toMatch(/\S{20,}/);
    expect(new Date(d.expiresAt).getTime()).toBeGreaterThan(Date.now());
    const setCookie = r.headers.getSetCookie().find((s) => s.startsWith('hp_session='))!;
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(r.headers.get('x-ratelimit-limit')).toBeTruthy();
    // the token works as a bearer token on REST and GraphQL alike
    expect((await p.request('GET', '/api/v1/users/me', { token: d.token })).body.data.email).toBe('alice@example.com');
  });

  test('signUp errors: VALIDATION_ERROR with the same details.fields as REST; ALREADY_EXISTS', async () => {
    const bad = { email: 'not-an-email', password: 'short', name: '   ' };
    const g = await gql(p, SIGN_UP, { input: bad });
    expectGqlError(g, 'VALIDATION_ERROR');
    const rest = await p.request('POST', '/api/v1/auth/signup', { body: bad });
    expect(rest.status).toBe(422);
    expect(g.body.errors![0]!.extensions.details.fields).toEqual(rest.body.error.details.fields);

    const taken = await gql(p, SIGN_UP, { input: { email: 'ALICE@example.com', password: 'password-123', name: 'A2' } });
    expectGqlError(taken, 'ALREADY_EXISTS');
    expect(taken.body.errors![0]!.extensions.details.fields.email).toBeDefined();
  });

  test('a wrong type in variables is a VALIDATION_ERROR naming the field', async () => {
    const r = await gql(p, SIGN_UP, { input: { email: 'x@example.com', password: 12345678, name: 'X' } });
    expectGqlError(r, 'VALIDATION_ERROR', 400);
    expect(Object.keys(r.body.errors![0]!.extensions.details.fields)).toContain('password');
  });

  test('signIn: success sets the cookie; wrong password and unknown email are the same UNAUTHORIZED', async () => {
    const ok = await gql(p, SIGN_IN, { input: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(expectData(ok).signIn.user.role).toBe('admin');
    expect(sessionCookie(ok.headers)).toBeTruthy();
    const wrong = await gql(p, SIGN_IN, { input: { email: ADMIN_EMAIL, password: 'wrong-password' } });
    const unknown = await gql(p, SIGN_IN, { input: { email: 'nobody@example.com', password: 'wrong-password' } });
    expectGqlError(wrong, 'UNAUTHORIZED');
    expectGqlError(unknown, 'UNAUTHORIZED');
    expect(wrong.body.errors![0]!.message).toBe(unknown.body.errors![0]!.message);
  });

  test('session: anonymous is UNAUTHORIZED; with a session it returns session and user', async () => {
    expectGqlError(await gql(p, '{ session { session { id } } }'), 'UNAUTHORIZED');
    const u = await p.newUser();
    const d = expectData(await gql(p, '{ session { session { id kind createdAt expiresAt } user { id email } } }', undefined, { token: u.token })).session;
    expect(d.session.kind).toBe('session');
    expect(d.user.email).toBe(u.email);
    const rest = await p.request('GET', '/api/v1/auth/session', { token: u.token });
    expect(d.session.id).toBe(rest.body.data.session.id);
  });

  test('signOut ends the session at once (REST and GraphQL) and clears the cookie', async () => {
    const u = await p.newUser();
    const r = await gql(p, 'mutation { signOut }', undefined, { token: u.token });
    expect(expectData(r).signOut).toBe(true);
    expect(r.headers.getSetCookie().some((s) => /^hp_session=;/.test(s))).toBe(true);
    expectGqlError(await gql(p, '{ me { id } }', undefined, { token: u.token }), 'UNAUTHORIZED');
    expect((await p.request('GET', '/api/v1/users/me', { token: u.token })).status).toBe(401);
    expectGqlError(await gql(p, 'mutation { signOut }'), 'UNAUTHORIZED');
  });

  test('an invalid bearer token is UNAUTHORIZED, never a crash', async () => {
    expectGqlError(await gql(p, '{ me { id } }', undefined, { token: 'hps_nope' }), 'UNAUTHORIZED');
    expectGqlError(await gql(p, '{ me { id } }', undefined, { headers: { authorization: 'Basic abc' } }), 'UNAUTHORIZED');
  });
});

describe('cookie authentication and CSRF', () => {
  test('the session cookie authenticates; a cookie write from a foreign Origin is FORBIDDEN (403)', async () => {
    const u = await p.newUser();
    const signin = await gql(p, SIGN_IN, { input: { email: u.email, password: u.password } });
    const cookie = sessionCookie(signin.headers)!;
    expect(expectData(await gql(p, '{ me { email } }', undefined, { cookie })).me.email).toBe(u.email);
    const sameOrigin = await gql(p, 'mutation { updateMe(input: { name: "Same" }) { name } }', undefined, { cookie, headers: { origin: p.url } });
    expect(expectData(sameOrigin).updateMe.name).toBe('Same');
    const evil = await gql(p, 'mutation { updateMe(input: { name: "Evil" }) { name } }', undefined, { cookie, headers: { origin: 'https://evil.example' } });
    expectGqlError(evil, 'FORBIDDEN', 403);
    expect(expectData(await gql(p, '{ me { name } }', undefined, { cookie })).me.name).toBe('Same');
  });

  test('a bearer token is not subject to the Origin check', async () => {
    const u = await p.newUser();
    const r = await gql(p, 'mutation { updateMe(input: { name: "Api" }) { name } }', undefined, { token: u.token, headers: { origin: 'https://elsewhere.example' } });
    expect(expectData(r).updateMe.name).toBe('Api');
  });
});

describe('me / updateMe', () => {
  test('me: anonymous UNAUTHORIZED; user gets itself without any hash', async () => {
    expectGqlError(await gql(p, '{ me { id } }'), 'UNAUTHORIZED');
    const u = await p.newUser('Bob');
    const r = await gql(p, '{ me { id email name role createdAt updatedAt } }', undefined, { token: u.token });
    expect(expectData(r).me).toMatchObject({ id: u.user.id, email: u.email, name: 'Bob', role: 'user' });
    expect(r.text).not.toMatch(/argon|passwordHash/i);
  });

  test('updateMe: name, email (ALREADY_EXISTS), password needs currentPassword and ends other sessions', async () => {
    const u = await p.newUser();
    const other = await p.newUser();
    const UPDATE = 'mutation($input: UpdateMeInput!) { updateMe(input: $input) { id name email } }';
    expect(expectData(await gql(p, UPDATE, { input: { name: 'Renamed' } }, { token: u.token })).updateMe.name).toBe('Renamed');
    const taken = await gql(p, UPDATE, { input: { email: other.email.toUpperCase(), currentPassword: u.password } }, { token: u.token });
    expectGqlError(taken, 'ALREADY_EXISTS');
    // an email change needs the current password, as over REST
    const noPassword = await gql(p, UPDATE, { input: { email: `moved.${u.email}` } }, { token: u.token });
    expectGqlError(noPassword, 'VALIDATION_ERROR');
    expect(Object.keys(noPassword.body.errors![0]!.extensions.details.fields)).toEqual(['currentPassword']);
    const wrongPassword = await gql(p, UPDATE, { input: { email: `moved.${u.email}`, currentPassword: 'wrong-password' } }, { token: u.token });
    expectGqlError(wrongPassword, 'VALIDATION_ERROR');
    const moved = await gql(p, UPDATE, { input: { email: `moved.${u.email}`, currentPassword: u.password } }, { token: u.token });
    expect(expectData(moved).updateMe.email).toBe(`moved.${u.email}`);

    const noCurrent = await gql(p, UPDATE, { input: { password: 'new-password-1' } }, { token: u.token });
    expectGqlError(noCurrent, 'VALIDATION_ERROR');
    const rest = await p.request('PATCH', '/api/v1/users/me', { token: u.token, body: { password: 'new-password-1' } });
    expect(noCurrent.body.errors![0]!.extensions.details.fields).toEqual(rest.body.error.details.fields);

    const second = await p.request('POST', '/api/v1/auth/signin', { body: { email: `moved.${u.email}`, password: u.password } });
    const secondToken = second.body.data.token as string;
    const changed = await gql(p, UPDATE, { input: { password: 'new-password-1', currentPassword: u.password } }, { token: u.token });
    expectData(changed);
    expectGqlError(await gql(p, '{ me { id } }', undefined, { token: secondToken }), 'UNAUTHORIZED');
    expectData(await gql(p, '{ me { id } }', undefined, { token: u.token }));
    expectGqlError(await gql(p, UPDATE, { input: { name: 'x' } }), 'UNAUTHORIZED');
  });
});

describe('API tokens', () => {
  test('create (secret once), list (paginated), use, revoke (stops at once), errors', async () => {
    const u = await p.newUser();
    const CREATE = 'mutation($input: CreateApiTokenInput!) { createApiToken(input: $input) { id name prefix token createdAt expiresAt } }';
    const created = expectData(await gql(p, CREATE, { input: { name: 'ci', expiresInDays: 30 } }, { token: u.token })).createApiToken;
    expect(created.token.startsWith(created.prefix)).toBe(true);
    expect(new Date(created.expiresAt).getTime()).toBeGreaterThan(Date.now());
    await gql(p, CREATE, { input: { name: 'second' } }, { token: u.token });

    const page = expectData(await gql(p, '{ apiTokens(page: 1, limit: 1) { items { id name prefix } total page limit } }', undefined, { token: u.token })).apiTokens;
    expect(page).toMatchObject({ total: 2, page: 1, limit: 1 });
    expect(page.items).toEqual([{ id: created.id, name: 'ci', prefix: created.prefix }]);
    expect(JSON.stringify(page)).not.toContain(created.token);
    const past = expectData(await gql(p, '{ apiTokens(page: 9) { items { id } total } }', undefined, { token: u.token })).apiTokens;
    expect(past).toEqual({ items: [], total: 2 });

    expect(expectData(await gql(p, '{ me { id } }', undefined, { token: created.token })).me.id).toBe(u.user.id);
    const session = expectData(await gql(p, '{ session { session { id kind expiresAt } } }', undefined, { token: created.token })).session.session;
    expect(session).toMatchObject({ id: created.id, kind: 'api_token' });

    // another user cannot revoke it (NOT_FOUND); a non-UUID id is NOT_FOUND too
    const other = await p.newUser();
    expectGqlError(await gql(p, 'mutation($id: ID!) { revokeApiToken(id: $id) }', { id: created.id }, { token: other.token }), 'NOT_FOUND');
    expectGqlError(await gql(p, 'mutation { revokeApiToken(id: "nope") }', undefined, { token: u.token }), 'NOT_FOUND');

    expect(expectData(await gql(p, 'mutation($id: ID!) { revokeApiToken(id: $id) }', { id: created.id }, { token: u.token })).revokeApiToken).toBe(true);
    expectGqlError(await gql(p, '{ me { id } }', undefined, { token: created.token }), 'UNAUTHORIZED');
    expectGqlError(await gql(p, 'mutation($id: ID!) { revokeApiToken(id: $id) }', { id: created.id }, { token: u.token }), 'NOT_FOUND');
  });

  test('pagination and input errors match REST', async () => {
    const u = await p.newUser();
    for (const [page, limit] of [[0, 20], [1, 101], [1, 0], [-1, 5]] as const) {
      const g = await gql(p, 'query($page: Int, $limit: Int) { apiTokens(page: $page, limit: $limit) { total } }', { page, limit }, { token: u.token });
      expectGqlError(g, 'VALIDATION_ERROR');
      const rest = await p.request('GET', `/api/v1/users/me/api-tokens?page=${page}&limit=${limit}`, { token: u.token });
      expect(g.body.errors![0]!.extensions.details.fields).toEqual(rest.body.error.details.fields);
    }
    expectGqlError(await gql(p, '{ apiTokens { total } }'), 'UNAUTHORIZED');
    expectGqlError(await gql(p, 'mutation { createApiToken(input: { name: "" }) { id } }', undefined, { token: u.token }), 'VALIDATION_ERROR');
    expectGqlError(await gql(p, 'mutation { createApiToken(input: { name: "x", expiresInDays: 0 }) { id } }', undefined, { token: u.token }), 'VALIDATION_ERROR');
    expectGqlError(await gql(p, 'mutation { createApiToken(input: { name: "x" }) { id } }'), 'UNAUTHORIZED');
  });
});

describe('request errors', () => {
  test('syntax errors, unknown fields, bad bodies and over-1-MiB bodies are 400s with a code', async () => {
    expectGqlError(await gql(p, '{ me { id '), 'GRAPHQL_PARSE_FAILED', 400);
    expectGqlError(await gql(p, '{ nope }'), 'GRAPHQL_VALIDATION_FAILED', 400);
    const malformed = await p.request('POST', '/graphql', { raw: '{"query": ', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    const huge = await p.request('POST', '/graphql', { body: { query: '{ me { id } }', variables: { pad: 'x'.repeat(1024 * 1024 + 10) } } });
    expect(huge.status).toBe(400);
    expect(huge.body.errors[0].extensions.code).toBe('BAD_REQUEST');
  });

  test('no stack traces in errors', async () => {
    const r = await gql(p, '{ me { id } }');
    expect(JSON.stringify(r.body)).not.toMatch(/stacktrace|exception/i);
    expect(Object.keys(r.body.errors![0]!.extensions).sort()).toEqual(['code', 'details']);
  });
});
