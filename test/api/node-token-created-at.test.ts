/**
 * `tokenCreatedAt` ("when the current node token was issued") is part of a node in REST as in GraphQL:
 * GET /nodes, GET /nodes/:id and POST /nodes give the same value as GraphQL's Node, and a new token
 * (POST /admin/nodes/:id/token) moves it in both.
 */
import { createNode } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { gql } from '../graphql/gql.js';

let p: TestPlatform;
let admin: { token: string };

beforeAll(async () => {
  p = await startTestPlatform();
  admin = await p.admin();
});
afterAll(async () => p?.stop());

async function viaGraphQL(id: string): Promise<string | null> {
  const g = await gql(p, 'query($id: ID!) { node(id: $id) { tokenCreatedAt } }', { id }, { token: admin.token });
  expect(g.body.errors).toBeUndefined();
  return g.body.data.node.tokenCreatedAt;
}

async function viaList(id: string): Promise<unknown> {
  const r = await p.request('GET', '/api/v1/nodes?limit=100', { token: admin.token });
  expect(r.status).toBe(200);
  const n = r.body.data.find((x: any) => x.id === id);
  expect(n).toHaveProperty('tokenCreatedAt');
  return n.tokenCreatedAt;
}

test('REST and GraphQL give the same tokenCreatedAt, before and after a new token', async () => {
  const created = await createNode(p, admin.token);
  expect(created.tokenCreatedAt).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
  const one = await p.request('GET', `/api/v1/nodes/${created.id}`, { token: admin.token });
  expect(one.status).toBe(200);
  expect(one.body.data.tokenCreatedAt).toBe(created.tokenCreatedAt);
  expect(await viaGraphQL(created.id)).toBe(created.tokenCreatedAt);
  expect(await viaList(created.id)).toBe(created.tokenCreatedAt);

  await new Promise((r) => setTimeout(r, 5));
  const rotated = await p.request('POST', `/api/v1/admin/nodes/${created.id}/token`, { token: admin.token });
  expect(rotated.status).toBeLessThan(300);
  const after = (await p.request('GET', `/api/v1/nodes/${created.id}`, { token: admin.token })).body.data.tokenCreatedAt;
  expect(after).not.toBe(created.tokenCreatedAt);
  expect(Date.parse(after)).toBeGreaterThan(Date.parse(created.tokenCreatedAt));
  expect(await viaGraphQL(created.id)).toBe(after);
  expect(await viaList(created.id)).toBe(after);
});

test('every node of GET /nodes carries tokenCreatedAt, equal to GraphQL nodes', async () => {
  const r = await p.request('GET', '/api/v1/nodes?limit=100', { token: admin.token });
  const g = await gql(p, '{ nodes(limit: 100) { items { id tokenCreatedAt } } }', {}, { token: admin.token });
  expect(g.body.errors).toBeUndefined();
  const rest = r.body.data.map((n: any) => ({ id: n.id, tokenCreatedAt: n.tokenCreatedAt }));
  expect(rest.length).toBeGreaterThan(0);
  expect(rest).toEqual(g.body.data.nodes.items);
});
