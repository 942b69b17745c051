/** GET /users/me/nodes (and GraphQL myNodes): the nodes a regular user may create servers on. */
import { gql } from '../graphql/gql.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => p?.stop());

test('a user sees every node with what it can still allocate, and nothing private', async () => {
  const admin = await p.admin();
  const node = (
    await p.request('POST', '/api/v1/nodes', { token: admin.token, body: { name: 'n1', fqdn: '10.0.0.5', port: 5000, memory: 2048, disk: 4096 } })
  ).body.data;
  const bp = (await p.request('GET', '/api/v1/blueprints', { token: admin.token })).body.data.find((b: any) => b.key === 'demo-game');
  const user = await p.newUser();
  const created = await p.request('POST', '/api/v1/servers', {
    token: user.token,
    body: { name: 's', nodeId: node.id, blueprintId: bp.id, memory: 512, cpu: 100, disk: 1024 },
  });
  expect(created.status).toBe(201);

  const r = await p.request('GET', '/api/v1/users/me/nodes', { token: user.token });
  expect(r.status).toBe(200);
  expect(r.body).toEqual({
    data: [{ id: node.id, name: 'n1', status: 'offline', available: { memory: 2048 - 512, disk: 4096 - 1024 } }],
    meta: { total: 1, page: 1, limit: 20 },
  });
  expect(JSON.stringify(r.body)).not.toMatch(/10\.0\.0\.5|token|key/i);

  const g = await gql(p, '{ myNodes { total items { id name status available { memory disk } } } }', undefined, { token: user.token });
  expect(g.body.data.myNodes).toEqual({ total: 1, items: r.body.data });

  expect((await p.request('GET', '/api/v1/users/me/nodes')).status).toBe(401);
  expect((await p.request('GET', '/api/v1/users/me/nodes?limit=0', { token: user.token })).status).toBe(422);
});
