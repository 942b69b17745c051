/**
 * GraphQL over HTTP as the panel serves it (src/graphql/express-adapter.ts): GET and POST, Apollo's
 * CSRF prevention, the body's length with non-ASCII text, and the relation and date fields that are
 * resolved without type-graphql's wrapper (src/graphql/schema.ts) answering like the REST API.
 */
import { createNode } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { expectData, expectGqlError, gql } from './gql.js';

let p: TestPlatform;
let owner: { token: string; user: any; email: string };
let admin: string;
let nodeId: string;
let blueprintId: string;

beforeAll(async () => {
  p = await startTestPlatform();
  admin = (await p.admin()).token;
  owner = await p.newUser('Owner');
  nodeId = (await createNode(p, admin)).id;
  blueprintId = (await p.request('GET', '/api/v1/blueprints?limit=1', { token: owner.token })).body.data[0].id;
});
afterAll(async () => p?.stop());

const get = (query: string, headers: Record<string, string> = {}) =>
  p.request('GET', `/graphql?query=${encodeURIComponent(query)}`, { token: owner.token, headers });

test('GET runs a query when the request is not a "simple" one (Apollo CSRF prevention), and never a mutation', async () => {
  const ok = await get('{ me { email } }', { 'apollo-require-preflight': 'true' });
  expect(ok.status).toBe(200);
  expect(ok.body.data.me.email).toBe(owner.email);

  // a plain GET (what a foreign page's <img> or form could send) is refused before anything runs
  const simple = await get('{ me { email } }');
  expect(simple.status).toBe(400);
  expect(simple.body.errors[0].message).toMatch(/CSRF/);

  const mutation = await get('mutation { signOut }', { 'apollo-require-preflight': 'true' });
  expect(mutation.status).toBe(405);
  expect(mutation.headers.get('allow')).toBe('POST');
});

test('the body is sent whole: Content-Length counts bytes, with non-ASCII names; no ETag on operation results', async () => {
  const name = 'Mörser 日本語 🎮 "quoted" \\ back\u2028slash';
  const created = await gql(
    p,
    'mutation($input: CreateServerInput!) { createServer(input: $input) { id name } }',
    { input: { name, nodeId, blueprintId, memory: 128, disk: 128 } },
    { token: owner.token },
  );
  expect(expectData(created).createServer.name).toBe(name);
  expect(Number(created.headers.get('content-length'))).toBe(Buffer.byteLength(created.text));
  expect(created.headers.get('etag')).toBeNull();
  // nor on the REST API's: an ETag invites If-None-Match, whose 304 CONTRACT §1 does not list
  expect((await p.request('GET', '/api/v1/users/me', { token: owner.token })).headers.get('etag')).toBeNull();
});

test('relation and date fields answer as the REST API does, for every item of a page', async () => {
  for (let i = 0; i < 3; i++) {
    const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: `page ${i}`, nodeId, blueprintId, memory: 128, disk: 128 } });
    expect(r.status).toBe(201);
  }
  const rest = (await p.request('GET', '/api/v1/servers?limit=10', { token: owner.token })).body.data as any[];
  const page = expectData(
    await gql(p, '{ servers(limit: 10) { items { id createdAt updatedAt owner { id email } node { id } blueprint { id } } } }', undefined, { token: owner.token }),
  ).servers.items as any[];
  expect(page.map((s) => s.id)).toEqual(rest.map((s) => s.id));
  for (const [i, s] of page.entries()) {
    expect(s).toEqual({
      id: rest[i].id,
      createdAt: rest[i].createdAt,
      updatedAt: rest[i].updatedAt,
      owner: { id: owner.user.id, email: owner.email },
      node: { id: nodeId },
      blueprint: { id: blueprintId },
    });
  }
});

test('a field resolver that refuses still answers with its error code (node allocation: administrators only)', async () => {
  const s = (await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'alloc', nodeId, blueprintId, memory: 128, disk: 128 } })).body.data;
  expectGqlError(await gql(p, `{ server(id: "${s.id}") { node { allocated { memory } } } }`, undefined, { token: owner.token }), 'FORBIDDEN');
  const asAdmin = expectData(await gql(p, `{ server(id: "${s.id}") { node { allocated { memory } } } }`, undefined, { token: admin }));
  expect(asAdmin.server.node.allocated.memory).toBeGreaterThanOrEqual(128);
});
