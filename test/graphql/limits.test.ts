/** Rate limits shared with REST, depth/cost limits, introspection switch. */
import { getIntrospectionQuery, parse } from 'graphql';
import { buildGraphQLSchema } from '../../src/graphql/schema.js';
import { checkLimits } from '../../src/graphql/limits.js';
import { chargesForDocument } from '../../src/graphql/buckets.js';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { expectData, expectGqlError, gql } from './gql.js';

describe('rate limits are shared with REST (one limiter, same keys and buckets)', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ rateLimits: { general: 5, auth: 50, admin: 7 } });
  });
  afterAll(async () => p?.stop());

  test('3 REST + 2 GraphQL requests spend the general budget of 5; the next is limited on both', async () => {
    const u = await p.newUser();
    for (let i = 0; i < 3; i++) expect((await p.request('GET', '/api/v1/users/me', { token: u.token })).status).toBe(200);
    const g1 = await gql(p, '{ me { id } }', undefined, { token: u.token });
    expectData(g1);
    expect(g1.headers.get('x-ratelimit-limit')).toBe('5');
    expect(g1.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(Number(g1.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    const g2 = await gql(p, '{ me { id } }', undefined, { token: u.token });
    expect(g2.headers.get('x-ratelimit-remaining')).toBe('0');

    const limited = await gql(p, '{ me { id } }', undefined, { token: u.token });
    expectGqlError(limited, 'RATE_LIMITED', 429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.body.errors![0]!.extensions.details.retryAfter).toBeGreaterThan(0);
    const rest = await p.request('GET', '/api/v1/users/me', { token: u.token });
    expect(rest.status).toBe(429);
    expect(rest.body.error.code).toBe('RATE_LIMITED');

    // another user has their own budget
    const v = await p.newUser();
    expectData(await gql(p, '{ me { id } }', undefined, { token: v.token }));
  });

  test('auth fields spend from the auth bucket, admin fields from the admin bucket, as their REST twins', async () => {
    const signIn = await gql(p, 'mutation { signIn(input: { email: "nobody@example.com", password: "whatever-123" }) { token } }');
    expect(signIn.headers.get('x-ratelimit-limit')).toBe('50');
    const authLeft = Number(signIn.headers.get('x-ratelimit-remaining'));
    const { token } = await p.admin(); // a REST sign-in from the same address: the address's auth budget
    const stats = await gql(p, '{ adminStats { users } }', undefined, { token });
    expect(stats.headers.get('x-ratelimit-limit')).toBe('7');
    const restAdmin = await p.request('GET', '/api/v1/admin/stats', { token });
    expect(Number(restAdmin.headers.get('x-ratelimit-remaining'))).toBe(Number(stats.headers.get('x-ratelimit-remaining')) - 1);
    // a query mixing an auth field with admin ones spends from both buckets (the headers show the
    // one with fewer requests left), so the auth field buys no extra admin requests
    const adminLeft = Number(stats.headers.get('x-ratelimit-remaining')) - 1; // after the REST call
    const mixed = await gql(p, '{ session { user { id } } adminStats { users } }', undefined, { token });
    expect(mixed.headers.get('x-ratelimit-limit')).toBe('7');
    expect(Number(mixed.headers.get('x-ratelimit-remaining'))).toBe(adminLeft - 1);
    // every auth field spends the address's auth budget (CONTRACT §6): signIn above, admin(), session
    const again = await gql(p, 'mutation { signIn(input: { email: "nobody@example.com", password: "whatever-123" }) { token } }');
    expect(Number(again.headers.get('x-ratelimit-remaining'))).toBe(authLeft - 3);
  });

  test('operations over WebSocket spend from the same budget', async () => {
    const u = await p.newUser();
    expect((await p.request('GET', '/api/v1/users/me', { token: u.token })).status).toBe(200);
    const c = createClient({ url: p.url.replace(/^http/, 'ws') + '/graphql', webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { authorization: `Bearer ${u.token}` } });
    const codes: Array<string | undefined> = [];
    try {
      for (let i = 0; i < 5; i++) {
        const r = await new Promise<any>((resolve, reject) => {
          let last: any;
          c.subscribe({ query: '{ me { id } }' }, { next: (x) => (last = x), error: reject, complete: () => resolve(last) });
        });
        codes.push(r.errors?.[0]?.extensions?.code);
      }
    } finally {
      await c.dispose();
    }
    expect(codes).toEqual([undefined, undefined, undefined, undefined, 'RATE_LIMITED']);
    expect((await p.request('GET', '/api/v1/users/me', { token: u.token })).status).toBe(429);
  });

  test('charges from the document: one request per root field, aliases included, from its operation\'s bucket and budget', () => {
    const c = (q: string, name?: string) => chargesForDocument(parse(q), name);
    expect(c('{ me { id } }')).toEqual([{ bucket: 'general', keyedBy: 'user', points: 1 }]);
    expect(c('mutation { signOut }')).toEqual([{ bucket: 'auth', keyedBy: 'address', points: 1 }]);
    expect(c('mutation { signOut __typename }')).toEqual([{ bucket: 'auth', keyedBy: 'address', points: 1 }]);
    expect(c('{ __typename }')).toEqual([{ bucket: 'general', keyedBy: 'user', points: 1 }]);
    expect(c('{ ...F } fragment F on Query { adminStats { users } }')).toEqual([{ bucket: 'admin', keyedBy: 'user', points: 1 }]);
    expect(c('query A { me { id } } query B { nodes { total } }', 'A')).toEqual([{ bucket: 'general', keyedBy: 'user', points: 1 }]);
    // /nodes is not under /admin: its GraphQL twins spend the general bucket, as REST does
    expect(c('query A { me { id } } query B { nodes { total } }', 'B')).toEqual([{ bucket: 'general', keyedBy: 'user', points: 1 }]);
    expect(c('{ session { user { id } } servers { total } nodes { total } adminStats { users } }')).toEqual([
      { bucket: 'auth', keyedBy: 'address', points: 1 },
      { bucket: 'admin', keyedBy: 'user', points: 1 },
      { bucket: 'general', keyedBy: 'user', points: 2 },
    ]);
    expect(c('mutation { a: signUp(input: $i) { token } b: signUp(input: $i) { token } c: signIn(input: $j) { token } }')).toEqual([{ bucket: 'auth', keyedBy: 'address', points: 3 }]);
  });
});

describe('depth and cost limits', () => {
  let p: TestPlatform;
  let token: string;
  beforeAll(async () => {
    p = await startTestPlatform();
    token = (await p.newUser()).token;
  });
  afterAll(async () => p?.stop());

  test('an abusively deep query is refused with QUERY_TOO_DEEP (400) before running', async () => {
    let inner = 'name';
    for (let i = 0; i < 20; i++) inner = `ofType { ${inner} }`;
    const r = await gql(p, `{ __schema { types { fields { type { ${inner} } } } } }`, undefined, { token });
    expectGqlError(r, 'QUERY_TOO_DEEP', 400);
    expect(r.body.data).toBeUndefined();
  });

  test('the regular depth limit (unit: limit 3 on a 5-level query)', async () => {
    const schema = await buildGraphQLSchema();
    const doc = parse('{ servers { items { node { allocated { memory } } } } }');
    expect(checkLimits(schema, doc, {}, null, { maxDepth: 3, maxCost: 1e9 })?.extensions.code).toBe('QUERY_TOO_DEEP');
    expect(checkLimits(schema, doc, {}, null)).toBeNull();
    const viaFragment = parse('{ ...A } fragment A on Query { servers { items { ...B } } } fragment B on Server { node { allocated { memory } } }');
    expect(checkLimits(schema, viaFragment, {}, null, { maxDepth: 4, maxCost: 1e9 })?.extensions.details).toEqual({ depth: 5, maxDepth: 4 });
  });

  test('an expensive query (big pages × many fields, aliased) is refused with QUERY_TOO_COMPLEX (400)', async () => {
    const page = 'servers(limit: 100) { items { id owner { id email name } node { id name allocated { memory disk } } blueprint { id variables { key rules } } } }';
    const r = await gql(p, `{ a: ${page} b: ${page} c: ${page} d: ${page} }`, undefined, { token });
    expectGqlError(r, 'QUERY_TOO_COMPLEX', 400);
    expect(r.body.errors![0]!.extensions.details.cost).toBeGreaterThan(r.body.errors![0]!.extensions.details.maxCost);
    // the limit comes from variables too
    const varPage = page.replace('limit: 100', 'limit: $l');
    const byVars = `query($l: Int) { a: ${varPage} b: ${varPage} c: ${varPage} d: ${varPage} }`;
    // accepted with small pages first: the verdict is remembered per document AND variables
    expectData(await gql(p, byVars, { l: 1 }, { token }));
    expectData(await gql(p, byVars, { l: 1 }, { token }));
    for (let i = 0; i < 2; i++) expectGqlError(await gql(p, byVars, { l: 100 }, { token }), 'QUERY_TOO_COMPLEX', 400);
    // one ordinary page is fine
    expectData(await gql(p, `{ ${page} }`, undefined, { token }));
  });

  test('the standard introspection query is allowed (introspection on by default)', async () => {
    const r = await gql(p, getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, inputValueDeprecation: true }));
    expect(expectData(r).__schema.queryType.name).toBe('Query');
  });
});

describe('introspection switched off', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ graphqlIntrospection: false });
  });
  afterAll(async () => p?.stop());

  test('introspection is refused and there is no landing page; queries still work', async () => {
    const token = (await p.newUser()).token;
    const r = await gql(p, '{ __schema { types { name } } }', undefined, { token });
    expect(r.status).toBe(400);
    expect(r.body.errors![0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const page = await p.request('GET', '/graphql', { headers: { accept: 'text/html' } });
    expect(page.text).not.toMatch(/<html/i);
    expectData(await gql(p, '{ me { id } }', undefined, { token }));
  });
});
