/** Relations are batched with per-request DataLoaders: a page of servers costs a constant number of SQL queries. */
import { createNode } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { expectData, gql } from './gql.js';

let p: TestPlatform;
let admin: string;
const sql: string[] = [];
let counting = false;

beforeAll(async () => {
  p = await startTestPlatform();
  admin = (await p.admin()).token;
  const knex = p.orm.em.getConnection().getKnex();
  knex.on('query', (q: { sql: string }) => {
    if (counting) sql.push(q.sql);
  });
  const nodes = [(await createNode(p, admin)).id, (await createNode(p, admin)).id, (await createNode(p, admin)).id];
  const blueprints = expectData(await gql(p, '{ blueprints(limit: 100) { items { id } } }', undefined, { token: admin })).blueprints.items.map((b: any) => b.id);
  const owners = [];
  for (let i = 0; i < 5; i++) owners.push((await p.newUser()).user.id);
  for (let i = 0; i < 20; i++) {
    const input = { name: `s${i}`, nodeId: nodes[i % nodes.length], blueprintId: blueprints[i % blueprints.length], ownerId: owners[i % owners.length], memory: 64, disk: 128 };
    expectData(await gql(p, 'mutation($input: CreateServerInput!) { createServer(input: $input) { id } }', { input }, { token: admin }));
  }
});
afterAll(async () => p?.stop());

function countQueries(limit: number) {
  return countQueriesOf(`{ servers(limit: ${limit}) { total items { id ownerId nodeId blueprintId owner { id email } node { id name allocated { memory } } blueprint { id name } } } }`);
}

test('a page of 20 servers with owner, node (and its allocation) and blueprint costs a constant number of queries', async () => {
  const twenty = await countQueries(20);
  expect(twenty.items).toHaveLength(20);
  expect(new Set(twenty.items.map((s: any) => s.owner.id)).size).toBe(5);
  expect(new Set(twenty.items.map((s: any) => s.node.id)).size).toBe(3);
  // every item got its own relations (the page's related rows come once each, matched by id)
  for (const s of twenty.items) {
    expect([s.owner.id, s.node.id, s.blueprint.id]).toEqual([s.ownerId, s.nodeId, s.blueprintId]);
  }
  const two = await countQueries(2);
  // auth lookup + the page (its total, owners, nodes and blueprints joined in) + one batched query for allocations
  expect(twenty.n).toBeLessThanOrEqual(3);
  expect(twenty.n).toBe(two.n);
  const users = twenty.statements.filter((s) => /from "?users"?/.test(s) && /(in \(|= any\()/.test(s));
  expect(users.length).toBeLessThanOrEqual(1);
});

test('relations selected through fragments are prefetched the same way; unselected ones cost nothing', async () => {
  const plain = await countQueries(20);
  const viaFragments = await countQueriesOf(
    `query { servers(limit: 20) { total items { id ownerId nodeId blueprintId ...Rel ... on Server { blueprint { id name } } } } }
     fragment Rel on Server { owner { id email } node { id name allocated { memory } } }`,
  );
  expect(viaFragments.n).toBe(plain.n);
  expect(viaFragments.items).toEqual(plain.items);
  const bare = await countQueriesOf('{ servers(limit: 20) { total items { id ownerId nodeId blueprintId } } }');
  expect(bare.items.map((s: any) => s.ownerId)).toEqual(plain.items.map((s: any) => s.owner.id));
  // a later page (offset) carries its own related rows
  const later = expectData(await gql(p, '{ servers(limit: 7, page: 2) { items { ownerId nodeId owner { id } node { id } } } }', undefined, { token: admin })).servers.items;
  expect(later).toHaveLength(7);
  for (const s of later) expect([s.owner.id, s.node.id]).toEqual([s.ownerId, s.nodeId]);
  // no users / nodes / blueprints / allocation queries at all
  expect(bare.statements.filter((s) => /from "?(users|nodes|blueprints)"? /.test(s) && /(in \(|= any\()/.test(s))).toEqual([]);
  expect(bare.n).toBeLessThan(plain.n);
});

/**
 * The statements one request of `q` runs. The platform's own timers (the schedule runner's tick every
 * 5 s, the offline sweep every 10 s) query the same database and can fall inside a request's window
 * on a loaded machine; they only ever add statements, so the request is measured three times and the
 * run with the fewest statements is the request's own count.
 */
async function countQueriesOf(q: string) {
  await gql(p, q, undefined, { token: admin }); // warm-up (session last-used touch etc.)
  let fewest: { n: number; items: any[]; statements: string[] } | null = null;
  for (let i = 0; i < 3; i++) {
    sql.length = 0;
    counting = true;
    const r = await gql(p, q, undefined, { token: admin });
    counting = false;
    if (!fewest || sql.length < fewest.n) fewest = { n: sql.length, items: expectData(r).servers.items, statements: [...sql] };
  }
  return fewest!;
}
