/**
 * Requests that race each other on one account or one server (found by an audit that sent them
 * truly at once): each must get a documented answer, and what the database and the node hold
 * afterwards must be what the answers said.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { blueprintsByKey, localNodeId } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let admin: { token: string };
let nodeId: string;
let blueprints: Record<string, any>;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 3 });
  admin = await p.admin();
  nodeId = await localNodeId(p, admin.token);
  blueprints = await blueprintsByKey(p, admin.token);
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

async function createServers(n: number, key = 'demo-game'): Promise<string[]> {
  const body = (i: number) => ({ name: `race ${i}`, nodeId, blueprintId: blueprints[key].id, memory: 64, cpu: 10, disk: 128 });
  const created = await Promise.all(Array.from({ length: n }, (_, i) => p.request('POST', '/api/v1/servers', { token: admin.token, body: body(i) })));
  for (const r of created) if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`);
  return created.map((r) => r.body.data.id);
}

const UPDATE = 'mutation($id: ID!, $input: UpdateServerInput!) { updateServer(id: $id, input: $input) { id } }';

test('updates racing the delete of their server get 200 or 404, never a 500, and the node keeps no deleted server', async () => {
  const outcomes: Record<string, number> = {};
  const count = (k: string) => (outcomes[k] = (outcomes[k] ?? 0) + 1);
  const deleted: string[] = [];
  for (let round = 0; round < 3; round++) {
    const ids = await createServers(10);
    await Promise.all(
      ids.map(async (id) => {
        const [rest, graphql, del, rest2] = await Promise.all([
          p.request('PATCH', `/api/v1/servers/${id}`, { token: admin.token, body: { name: 'renamed', memory: 70 } }),
          p.request('POST', '/graphql', { token: admin.token, body: { query: UPDATE, variables: { id, input: { name: 'g', memory: 72 } } } }),
          p.request('DELETE', `/api/v1/servers/${id}`, { token: admin.token }),
          p.request('PATCH', `/api/v1/servers/${id}`, { token: admin.token, body: { description: 'x' } }),
        ]);
        count(`REST ${rest.status}`);
        count(`REST ${rest2.status}`);
        count(`GraphQL ${graphql.body.errors?.[0]?.extensions?.code ?? 'ok'}`);
        expect(del.status).toBe(204);
        deleted.push(id);
      }),
    );
  }
  expect(Object.keys(outcomes).filter((k) => !/^(REST (200|404)|GraphQL (ok|NOT_FOUND))$/.test(k))).toEqual([]);

  // the node has none of them: no files, and its server count is the panel's
  const serversDir = path.join(p.config.dataDir, 'agent', 'servers');
  await until(async () => deleted.every((id) => !existsSync(path.join(serversDir, id))), 10_000, 'the deleted servers\' files to be gone');
  const panelCount = (await p.request('GET', `/api/v1/servers?nodeId=${nodeId}&limit=1`, { token: admin.token })).body.meta.total;
  const stats = await p.request('GET', `/api/v1/nodes/${nodeId}/stats`, { token: admin.token });
  expect(stats.body.data.servers.total).toBe(panelCount);
}, 120_000);

test('concurrent updates of different variables of one server all take effect', async () => {
  const ids = await createServers(5);
  await Promise.all(
    ids.map((id, i) =>
      Promise.all([
        p.request('PATCH', `/api/v1/servers/${id}`, { token: admin.token, body: { variables: { MOTD: `motd ${i}` } } }),
        p.request('PATCH', `/api/v1/servers/${id}`, { token: admin.token, body: { variables: { MAX_PLAYERS: String(10 + i) } } }),
        p.request('POST', '/graphql', { token: admin.token, body: { query: UPDATE, variables: { id, input: { variables: { SERVER_PORT: String(30000 + i) } } } } }),
      ]),
    ),
  );
  const kept = await Promise.all(ids.map(async (id) => (await p.request('GET', `/api/v1/servers/${id}`, { token: admin.token })).body.data.variables));
  kept.forEach((v, i) => expect(v).toMatchObject({ MOTD: `motd ${i}`, MAX_PLAYERS: String(10 + i), SERVER_PORT: String(30000 + i) }));
}, 60_000);
