/**
 * The hot reads (src/db/read-rows.ts) are prepared statements that PostgreSQL plans once per
 * connection (a generic plan), not again on every call; filters whose best plan depends on their
 * value are planned per call. Checked in PostgreSQL's own bookkeeping (pg_prepared_statements counts
 * the generic and custom plans each prepared statement ran with), on a one-connection pool so that
 * every call lands on the session being inspected.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { openDatabase } from '../../src/db/orm.js';
import { readRows } from '../../src/db/read-rows.js';
import { User } from '../../src/entities/User.js';
import type { Actor } from '../../src/services/actor.js';
import { ServersService } from '../../src/services/servers.service.js';
import { parseServerListQuery } from '../../src/validation/servers.js';
import { blueprintsByKey, createNode } from '../support/fixtures.js';
import { ADMIN_EMAIL, startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform;
let orm: MikroORM;
let actor: Actor;

beforeAll(async () => {
  p = await startTestPlatform();
  const admin = (await p.admin()).token;
  const node = await createNode(p, admin);
  const blueprint = Object.values(await blueprintsByKey(p, admin))[0];
  for (let i = 0; i < 3; i++) {
    const r = await p.request('POST', '/api/v1/servers', { token: admin, body: { name: `plan-${i}`, nodeId: node.id, blueprintId: blueprint.id, memory: 64, disk: 128 } });
    expect(r.status).toBe(201);
  }
  orm = await openDatabase(p.config.databaseUrl!, { poolMax: 1 });
  const user = await orm.em.fork().findOneOrFail(User, { email: ADMIN_EMAIL });
  actor = { user, via: 'session', credentialId: '00000000-0000-0000-0000-000000000000', credentialCreatedAt: new Date(), credentialExpiresAt: null };
});
afterAll(async () => {
  await orm?.close(true);
  await p?.stop();
});

interface PlanCounts {
  statement: string;
  generic_plans: string;
  custom_plans: string;
}

const preparedStatements = () =>
  readRows<PlanCounts>(orm, 'select statement, generic_plans, custom_plans from pg_prepared_statements', [], { prepare: false });

test('the server page and its relations run on one generic plan, however often and whatever the page', async () => {
  const servers = new ServersService(orm);
  for (let i = 0; i < 8; i++) {
    const rest = await servers.list(actor, parseServerListQuery({ limit: String(1 + (i % 2)), page: String(1 + ((i >> 1) % 2)) }));
    expect(rest.items.length).toBeGreaterThan(0);
    const withRelations = await servers.list(actor, parseServerListQuery({ limit: 2 + (i % 2) }), { owner: true, node: true, blueprint: true });
    expect(withRelations.included.users.map((u) => u.email)).toEqual([ADMIN_EMAIL]);
  }
  const pages = (await preparedStatements()).filter((s) => s.statement.includes('from servers s'));
  expect(pages).toHaveLength(2); // the plain page and the one with its relations
  for (const s of pages) {
    expect(Number(s.custom_plans)).toBe(0);
    expect(Number(s.generic_plans)).toBe(8);
  }
});

test('a page filtered by status or node is planned for its values (never one plan for all values)', async () => {
  const servers = new ServersService(orm);
  const all = await servers.list(actor, parseServerListQuery({ limit: '100' }));
  const nodeId = all.items[0]!.nodeId;
  for (let i = 0; i < 6; i++) {
    const byStatus = await servers.list(actor, parseServerListQuery({ status: i % 2 ? 'running' : all.items[0]!.status }));
    expect(byStatus.items.every((s) => s.status === (i % 2 ? 'running' : all.items[0]!.status))).toBe(true);
    const byNode = await servers.list(actor, parseServerListQuery({ nodeId }));
    expect(byNode.meta.total).toBe(all.meta.total);
  }
  const filtered = (await preparedStatements()).filter((s) => /s\.(status|node_id) = \$/.test(s.statement));
  expect(filtered).toEqual([]);
});
