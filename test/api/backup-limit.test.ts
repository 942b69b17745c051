/**
 * Who may set a server's `backupLimit` (real HTTP, real database). Backups take the node's disk and
 * count against no quota: an owner may set any value up to the server's limit now or
 * BACKUP_LIMIT_DEFAULT, whichever is larger (so they may lower it and raise it back); only an
 * administrator may go past that, up to 1,000. The owner could set 1,000 (REST and GraphQL alike).
 */
import { gql } from '../graphql/gql.js';
import { blueprintsByKey, createNode, expectFieldError } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

const DEFAULT = 3;
let p: TestPlatform;
let admin: { token: string; user: any };
let owner: { token: string; user: any };
let body: () => Record<string, unknown>;

beforeAll(async () => {
  p = await startTestPlatform({ backupLimitDefault: DEFAULT });
  admin = await p.admin();
  owner = await p.newUser('Owner');
  const bp = await blueprintsByKey(p, owner.token);
  const node = await createNode(p, admin.token, { memory: 65536, disk: 655360, cpuCores: 4 });
  body = () => ({ name: 'limits', nodeId: node.id, blueprintId: bp['shell-command'].id, memory: 128, cpu: 10, disk: 128 });
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

const patch = (id: string, backupLimit: number, token = owner.token) => p.request('PATCH', `/api/v1/servers/${id}`, { token, body: { backupLimit } });
const limitOf = async (id: string) => (await p.request('GET', `/api/v1/servers/${id}`, { token: owner.token })).body.data.backupLimit;
async function newServer(extra: Record<string, unknown> = {}, token = owner.token): Promise<string> {
  const r = await p.request('POST', '/api/v1/servers', { token, body: { ...body(), ...extra } });
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`);
  return r.body.data.id;
}

test('an owner may not raise the backup limit past BACKUP_LIMIT_DEFAULT: 422 naming the most they may set', async () => {
  const id = await newServer();
  expect(await limitOf(id)).toBe(DEFAULT);
  for (const n of [DEFAULT + 1, 1000]) {
    const r = await patch(id, n);
    expectFieldError(r, 'backupLimit');
    expect(r.body.error.details.fields).toEqual({ backupLimit: `at most ${DEFAULT}; an administrator can raise it` });
  }
  expect(await limitOf(id)).toBe(DEFAULT);
  // nothing else of the request was applied either
  const both = await p.request('PATCH', `/api/v1/servers/${id}`, { token: owner.token, body: { name: 'renamed', backupLimit: 1000 } });
  expectFieldError(both, 'backupLimit');
  expect((await p.request('GET', `/api/v1/servers/${id}`, { token: owner.token })).body.data.name).toBe('limits');
});

test('an owner may lower the limit and raise it back to the default', async () => {
  const id = await newServer();
  for (const n of [0, 1, DEFAULT]) {
    const r = await patch(id, n);
    expect([r.status, r.body.data?.backupLimit]).toEqual([200, n]);
  }
});

test('an administrator may set 1,000; the owner may then keep it, or lower it', async () => {
  const id = await newServer();
  const r = await patch(id, 1000, admin.token);
  expect([r.status, r.body.data?.backupLimit]).toEqual([200, 1000]);
  // the server's limit now is theirs to keep (a form sending every field back) or lower
  expect((await patch(id, 1000)).status).toBe(200);
  expect((await patch(id, 40)).body.data.backupLimit).toBe(40);
  expectFieldError(await patch(id, 41), 'backupLimit');
  expect(await limitOf(id)).toBe(40);
  // 1,000 is the most anyone may set
  expectFieldError(await patch(id, 1001, admin.token), 'backupLimit');
});

test('creating a server: an owner may ask for at most the default, an administrator for up to 1,000', async () => {
  const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { ...body(), backupLimit: DEFAULT + 1 } });
  expectFieldError(r, 'backupLimit');
  expect(r.body.error.details.fields).toEqual({ backupLimit: `at most ${DEFAULT}; an administrator can raise it` });
  expect(await limitOf(await newServer({ backupLimit: 0 }))).toBe(0);
  expect(await limitOf(await newServer({ backupLimit: DEFAULT }))).toBe(DEFAULT);
  const forOwner = await newServer({ backupLimit: 1000, ownerId: owner.user.id }, admin.token);
  expect(await limitOf(forOwner)).toBe(1000);
});

test('GraphQL: updateServer and createServer refuse an owner the same way; an administrator may', async () => {
  const id = await newServer();
  const UPDATE = 'mutation($id: ID!, $input: UpdateServerInput!) { updateServer(id: $id, input: $input) { backupLimit } }';
  const refused = await gql(p, UPDATE, { id, input: { backupLimit: 1000 } }, { token: owner.token });
  expect(refused.body.errors?.[0]?.extensions).toEqual({ code: 'VALIDATION_ERROR', details: { fields: { backupLimit: `at most ${DEFAULT}; an administrator can raise it` } } });
  expect(await limitOf(id)).toBe(DEFAULT);
  expect((await gql(p, UPDATE, { id, input: { backupLimit: 1 } }, { token: owner.token })).body.data?.updateServer).toEqual({ backupLimit: 1 });
  expect((await gql(p, UPDATE, { id, input: { backupLimit: 1000 } }, { token: admin.token })).body.data?.updateServer).toEqual({ backupLimit: 1000 });
  const CREATE = 'mutation($input: CreateServerInput!) { createServer(input: $input) { backupLimit } }';
  const made = await gql(p, CREATE, { input: { ...body(), backupLimit: DEFAULT + 1 } }, { token: owner.token });
  expect(made.body.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
  expect(made.body.errors?.[0]?.extensions?.details).toEqual({ fields: { backupLimit: `at most ${DEFAULT}; an administrator can raise it` } });
});
