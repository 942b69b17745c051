/**
 * Rate limits that a single request must not multiply or dodge: aliased GraphQL fields are charged one
 * by one, a refused document runs nothing; per-account sign-in throttling; session and sign-out spend
 * the address's budget as every /auth/* operation does; X-Forwarded-For counts only behind a trusted proxy.
 */
import { randomBytes } from 'node:crypto';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

const uniq = () => randomBytes(4).toString('hex');

describe('aliases and throttling', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ rateLimits: { general: 1000, auth: 10, admin: 1000 } });
  });
  afterAll(async () => {
    await p?.stop();
  });

  test('20 aliased signUp fields are 20 auth requests: refused whole, no account created', async () => {
    const tag = uniq();
    const fields = Array.from({ length: 20 }, (_, i) => `a${i}: signUp(input: { email: "alias-${tag}-${i}@example.com", password: "password-123", name: "A" }) { token }`);
    const r = await p.request('POST', '/graphql', { body: { query: `mutation { ${fields.join(' ')} }` }, headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(r.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(r.body.data ?? null).toBeNull();
    const rows = await p.orm.em.fork().getConnection().execute(`select count(*) as n from users where email like 'alias-${tag}-%'`);
    expect(Number(rows[0].n)).toBe(0);
  });

  test('aliased mutations of a user are charged per alias in the general bucket', async () => {
    const q = await startTestPlatform({ rateLimits: { general: 5, auth: 100, admin: 100 } });
    try {
      const u = await q.newUser('aliases');
      const six = Array.from({ length: 6 }, (_, i) => `t${i}: createApiToken(input: { name: "t${i}" }) { id }`).join(' ');
      const r = await q.request('POST', '/graphql', { token: u.token, body: { query: `mutation { ${six} }` } });
      expect(r.body.errors[0].extensions.code).toBe('RATE_LIMITED');
      const rows = await q.orm.em.fork().getConnection().execute('select count(*) as n from api_tokens where user_id = ?', [u.user.id]);
      expect(Number(rows[0].n)).toBe(0); // refused whole: no resolver ran
    } finally {
      await q.stop();
    }
  });

  test('10 failed sign-ins lock the account for a while, even with the right password; REST and GraphQL', async () => {
    const q = await startTestPlatform({ rateLimits: { general: 1000, auth: 1000, admin: 1000 } });
    try {
      const u = await q.newUser('locked');
      for (let i = 0; i < 10; i++) expect((await q.request('POST', '/api/v1/auth/signin', { body: { email: u.email, password: 'wrong-password-1' } })).status).toBe(401);
      const right = await q.request('POST', '/api/v1/auth/signin', { body: { email: u.email, password: u.password } });
      expect([right.status, right.body.error.code, Number(right.headers.get('retry-after')) > 0]).toEqual([429, 'RATE_LIMITED', true]);
      const g = await q.request('POST', '/graphql', { body: { query: `mutation { signIn(input: { email: "${u.email}", password: "${u.password}" }) { token } }` } });
      expect(g.body.errors[0].extensions.code).toBe('RATE_LIMITED');
      // another account is not affected
      const other = await q.newUser('free');
      expect((await q.request('POST', '/api/v1/auth/signin', { body: { email: other.email, password: other.password } })).status).toBe(200);
    } finally {
      await q.stop();
    }
  });

  test('sign-ins sent at once get no more tries than sign-ins sent one by one', async () => {
    // the throttle counted a failure after the (slow) password check: guesses sent at once were all
    // checked (13 of 30 in a probe, and the right password among 40 got in)
    const q = await startTestPlatform({ rateLimits: { general: 1000, auth: 1000, admin: 1000 } });
    try {
      const u = await q.newUser('burst');
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => q.request('POST', '/api/v1/auth/signin', { body: { email: i % 2 ? u.email.toUpperCase() : u.email, password: `wrong-password-${i}` } })));
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 401)).toHaveLength(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(30);
      expect((await q.request('POST', '/api/v1/auth/signin', { body: { email: u.email, password: u.password } })).status).toBe(429);
    } finally {
      await q.stop();
    }
  });

  test('session and sign-out calls spend the address\'s budget, as every /auth/* operation does (CONTRACT §6)', async () => {
    const q = await startTestPlatform({ rateLimits: { general: 1000, auth: 4, admin: 1000 } });
    try {
      const a = await q.newUser('session-a');
      const b = await q.newUser('session-b');
      // newUser signed both up and in from this address: the window may already be spent; a fresh one starts below
      const first = await q.request('GET', '/api/v1/auth/session', { token: a.token });
      const left = Number(first.headers.get('x-ratelimit-remaining'));
      expect(first.headers.get('x-ratelimit-limit')).toBe('4');
      const second = await q.request('GET', '/api/v1/auth/session', { token: b.token });
      if (first.status === 200 && second.status === 200) expect(Number(second.headers.get('x-ratelimit-remaining'))).toBe(left - 1);
      // the address's four are soon spent, whichever user asks
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push((await q.request('GET', '/api/v1/auth/session', { token: i % 2 ? a.token : b.token })).status);
      expect(answers).toContain(429);
      expect((await q.request('POST', '/api/v1/auth/signout', { token: a.token })).status).toBe(429);
      const gql = await q.request('POST', '/graphql', { token: b.token, body: { query: '{ session { session { id } } }' } });
      expect(gql.body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    } finally {
      await q.stop();
    }
  });
});

describe('TRUST_PROXY', () => {
  test('behind a trusted proxy, clients differing only in X-Forwarded-For have their own budgets and addresses', async () => {
    const p = await startTestPlatform({ rateLimits: { general: 1000, auth: 2, admin: 1000 } }, { TRUST_PROXY: 'loopback' });
    try {
      const signin = (xff: string) => p.request('POST', '/api/v1/auth/signin', { body: { email: 'nobody@example.com', password: 'password-1' }, headers: { 'x-forwarded-for': xff } });
      expect((await signin('198.51.100.1')).status).toBe(401);
      expect((await signin('198.51.100.1')).status).toBe(401);
      expect((await signin('198.51.100.1')).status).toBe(429);
      expect((await signin('198.51.100.2')).status).toBe(401);
      const admin = await p.admin();
      const failed = (await p.request('GET', '/api/v1/admin/activity?event=auth:signin-failed&limit=10', { token: admin.token })).body.data;
      expect(failed.map((e: any) => e.ip)).toEqual(expect.arrayContaining(['198.51.100.1', '198.51.100.2']));
    } finally {
      await p.stop();
    }
  });

  test('without it, X-Forwarded-For is ignored: a client cannot claim another address', async () => {
    const p = await startTestPlatform({ rateLimits: { general: 1000, auth: 2, admin: 1000 } });
    try {
      const signin = (xff: string) => p.request('POST', '/api/v1/auth/signin', { body: { email: 'nobody@example.com', password: 'password-1' }, headers: { 'x-forwarded-for': xff } });
      expect((await signin('198.51.100.1')).status).toBe(401);
      expect((await signin('198.51.100.2')).status).toBe(401);
      expect((await signin('198.51.100.3')).status).toBe(429);
    } finally {
      await p.stop();
    }
  });
});
