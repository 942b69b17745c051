/**
 * An explicit `null` on a nullable argument or input field (what generated clients send for an unset
 * variable) answers exactly like the omitted argument (src/resolvers/util.ts given()): each case runs
 * the operation twice over HTTP, once with nulls and once without the arguments, and compares the
 * outcome (the error code, or the fields that the defaults decide).
 */
import { createLocalDemoServer, blueprintsByKey, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';
import { given } from '../../src/resolvers/util.js';
import { gql } from './gql.js';

let p: TestPlatform;
let admin: { token: string };
let owner: { token: string };
let friendA: { email: string };
let friendB: { email: string };
let friendC: { email: string; user: any };
let serverId: string;
let scheduleId: string;
let nodeId: string;
let demoBlueprintId: string;

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0 });
  admin = await p.admin();
  owner = await p.newUser('Owner');
  [friendA, friendB, friendC] = await Promise.all([p.newUser('Friend A'), p.newUser('Friend B'), p.newUser('Friend C')]);
  serverId = await createLocalDemoServer(p, admin.token, owner.token, 'nulls');
  nodeId = await localNodeId(p, admin.token);
  demoBlueprintId = (await blueprintsByKey(p, owner.token))['demo-game'].id;
  const s = await p.request('POST', `/api/v1/servers/${serverId}/schedules`, { token: owner.token, body: { name: 'base', cron: '0 3 * * *', tasks: [{ action: 'command', payload: { command: 'say hi' } }] } });
  if (s.status !== 201) throw new Error(`schedule create failed: ${s.status} ${s.text}`);
  scheduleId = s.body.data.id;
  const sub = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friendC.email, permissions: ['control.console'], paths: ['/logs'] } });
  if (sub.status !== 201) throw new Error(`subuser create failed: ${sub.status} ${sub.text}`);
}, 120_000);
afterAll(async () => p?.stop(), 60_000);

type Op = [query: string, variables?: Record<string, unknown>];
interface Case {
  name: string;
  as?: 'owner' | 'admin';
  /** the operation with explicit nulls */
  nulls: () => Op;
  /** the same operation with those arguments left out */
  omitted: () => Op;
  /** what to compare of `data` (default: all of it) */
  view?: (data: any) => unknown;
  /** what the omitted operation answers: OK (default) or an error code */
  want?: string;
}

const page = (field: string) => (d: any) => ({ total: d[field].total, page: d[field].page, limit: d[field].limit });
const S = () => serverId;

const cases: Case[] = [
  // paginated lists and their filters
  { name: 'servers(page: null, limit: null)', nulls: () => ['query($p: Int, $l: Int) { servers(page: $p, limit: $l) { total page limit } }', { p: null, l: null }], omitted: () => ['{ servers { total page limit } }'] },
  { name: 'servers(status: null, nodeId: null)', nulls: () => ['query($s: ServerStatus, $n: ID) { servers(status: $s, nodeId: $n) { total page limit } }', { s: null, n: null }], omitted: () => ['{ servers { total page limit } }'] },
  { name: 'servers(literal nulls)', nulls: () => ['{ servers(page: null, limit: null, status: null, nodeId: null) { total page limit } }'], omitted: () => ['{ servers { total page limit } }'] },
  { name: 'apiTokens(page: null, limit: null)', nulls: () => ['query($p: Int) { apiTokens(page: $p, limit: null) { total page limit } }', { p: null }], omitted: () => ['{ apiTokens { total page limit } }'] },
  { name: 'myNodes(page: null, limit: null)', nulls: () => ['query($l: Int) { myNodes(page: null, limit: $l) { total page limit } }', { l: null }], omitted: () => ['{ myNodes { total page limit } }'] },
  { name: 'blueprints(page: null, limit: null)', nulls: () => ['{ blueprints(page: null, limit: null) { total page limit } }'], omitted: () => ['{ blueprints { total page limit } }'] },
  { name: 'files(path: null, page: null, limit: null)', nulls: () => ['query($id: ID!, $p: String) { files(serverId: $id, path: $p, page: null, limit: null) { total page limit } }', { id: serverId, p: null }], omitted: () => ['query($id: ID!) { files(serverId: $id) { total page limit } }', { id: serverId }] },
  { name: 'fileSearch(path: null)', nulls: () => ['query($id: ID!) { fileSearch(serverId: $id, query: "x", path: null) { name } }', { id: serverId }], omitted: () => ['query($id: ID!) { fileSearch(serverId: $id, query: "x") { name } }', { id: serverId }] },
  { name: 'nodes(page: null, limit: null)', as: 'admin', nulls: () => ['{ nodes(page: null, limit: null) { total page limit } }'], omitted: () => ['{ nodes { total page limit } }'] },
  { name: 'adminUsers(search: null, page: null, limit: null)', as: 'admin', nulls: () => ['query($s: String) { adminUsers(search: $s, page: null, limit: null) { total page limit } }', { s: null }], omitted: () => ['{ adminUsers { total page limit } }'] },
  { name: 'myActivity(filter: null, page: null, limit: null)', nulls: () => ['query($f: ActivityFilter, $p: Int, $l: Int) { myActivity(filter: $f, page: $p, limit: $l) { total page limit } }', { f: null, p: null, l: null }], omitted: () => ['{ myActivity { total page limit } }'] },
  {
    name: 'myActivity(filter: every field null)',
    nulls: () => ['query($e: String) { myActivity(filter: { event: $e, actorId: null, serverId: null, since: null, until: null }) { total page limit } }', { e: null }],
    omitted: () => ['{ myActivity(filter: {}) { total page limit } }'],
  },
  { name: 'serverActivity(filter: { event: null }, page: null)', nulls: () => ['query($id: ID!, $p: Int) { serverActivity(serverId: $id, page: $p, filter: { event: null }) { total page limit } }', { id: S(), p: null }], omitted: () => ['query($id: ID!) { serverActivity(serverId: $id) { total page limit } }', { id: S() }] },
  { name: 'adminActivity(filter: { since: null }, limit: null)', as: 'admin', nulls: () => ['{ adminActivity(filter: { since: null, until: null }, limit: null) { total page limit } }'], omitted: () => ['{ adminActivity { total page limit } }'] },
  { name: 'subusers(page: null, limit: null)', nulls: () => ['query($id: ID!) { subusers(serverId: $id, page: null, limit: null) { total page limit } }', { id: S() }], omitted: () => ['query($id: ID!) { subusers(serverId: $id) { total page limit } }', { id: S() }] },
  { name: 'schedules(limit: null)', nulls: () => ['query($id: ID!, $l: Int) { schedules(serverId: $id, limit: $l) { total page limit } }', { id: S(), l: null }], omitted: () => ['query($id: ID!) { schedules(serverId: $id) { total page limit } }', { id: S() }] },
  {
    name: 'scheduleRuns(page: null, limit: null)',
    nulls: () => ['query($id: ID!, $s: ID!) { scheduleRuns(serverId: $id, scheduleId: $s, page: null, limit: null) { total page limit } }', { id: S(), s: scheduleId }],
    omitted: () => ['query($id: ID!, $s: ID!) { scheduleRuns(serverId: $id, scheduleId: $s) { total page limit } }', { id: S(), s: scheduleId }],
  },
  { name: 'backups(limit: null)', nulls: () => ['query($id: ID!, $l: Int) { backups(serverId: $id, limit: $l) { total page limit } }', { id: S(), l: null }], omitted: () => ['query($id: ID!) { backups(serverId: $id) { total page limit } }', { id: S() }], view: page('backups') },

  // mutations: the defaults the omitted fields get
  {
    name: 'createApiToken(expiresInDays: null): no expiry',
    nulls: () => ['mutation($d: Int) { createApiToken(input: { name: "n", expiresInDays: $d }) { name expiresAt } }', { d: null }],
    omitted: () => ['mutation { createApiToken(input: { name: "n" }) { name expiresAt } }'],
  },
  {
    name: 'createBackup(input: null)',
    nulls: () => ['mutation($id: ID!, $i: CreateBackupInput) { createBackup(serverId: $id, input: $i) { serverId locked ignored } }', { id: S(), i: null }],
    omitted: () => ['mutation($id: ID!) { createBackup(serverId: $id) { serverId locked ignored } }', { id: S() }],
  },
  {
    name: 'createBackup(input: { name: null, ignored: null, locked: null })',
    nulls: () => ['mutation($id: ID!) { createBackup(serverId: $id, input: { name: null, ignored: null, locked: null }) { serverId locked ignored } }', { id: S() }],
    omitted: () => ['mutation($id: ID!) { createBackup(serverId: $id, input: {}) { serverId locked ignored } }', { id: S() }],
  },
  {
    name: 'createSchedule(enabled, timezone, onlyWhenOnline, task offsetSeconds/continueOnFailure: null)',
    nulls: () => [
      'mutation($id: ID!) { createSchedule(serverId: $id, input: { name: "s", cron: "0 1 * * *", enabled: null, timezone: null, onlyWhenOnline: null, tasks: [{ action: "command", payload: { command: "x" }, offsetSeconds: null, continueOnFailure: null }] }) { name enabled timezone onlyWhenOnline tasks { offsetSeconds continueOnFailure payload } } }',
      { id: S() },
    ],
    omitted: () => ['mutation($id: ID!) { createSchedule(serverId: $id, input: { name: "s", cron: "0 1 * * *", tasks: [{ action: "command", payload: { command: "x" } }] }) { name enabled timezone onlyWhenOnline tasks { offsetSeconds continueOnFailure payload } } }', { id: S() }],
  },
  {
    name: 'updateSchedule(every field null): unchanged',
    nulls: () => [
      'mutation($id: ID!, $s: ID!) { updateSchedule(serverId: $id, scheduleId: $s, input: { name: null, cron: null, enabled: null, onlyWhenOnline: null, timezone: null, tasks: null }) { name cron enabled timezone onlyWhenOnline tasks { action payload } } }',
      { id: S(), s: scheduleId },
    ],
    omitted: () => ['mutation($id: ID!, $s: ID!) { updateSchedule(serverId: $id, scheduleId: $s, input: {}) { name cron enabled timezone onlyWhenOnline tasks { action payload } } }', { id: S(), s: scheduleId }],
  },
  {
    name: 'updateServer(input: { description: null, … }): unchanged',
    nulls: () => [
      'mutation($id: ID!) { updateServer(id: $id, input: { description: null, name: null, memory: null, cpu: null, disk: null, autoRestart: null, backupLimit: null, variables: null }) { name description memory cpu disk autoRestart backupLimit variables } }',
      { id: S() },
    ],
    omitted: () => ['mutation($id: ID!) { updateServer(id: $id, input: {}) { name description memory cpu disk autoRestart backupLimit variables } }', { id: S() }],
  },
  {
    name: 'createServer(description, ownerId, cpu, variables…: null): the defaults',
    nulls: () => [
      'mutation($n: ID!, $b: ID!) { createServer(input: { name: "nulls-2", nodeId: $n, blueprintId: $b, memory: 256, disk: 512, cpu: null, description: null, ownerId: null, autoRestart: null, backupLimit: null, variables: null }) { name description cpu autoRestart backupLimit variables } }',
      { n: nodeId, b: demoBlueprintId },
    ],
    omitted: () => ['mutation($n: ID!, $b: ID!) { createServer(input: { name: "nulls-2", nodeId: $n, blueprintId: $b, memory: 256, disk: 512 }) { name description cpu autoRestart backupLimit variables } }', { n: nodeId, b: demoBlueprintId }],
  },
  {
    name: 'createSubuser(paths: null): the whole server',
    nulls: () => ['mutation($id: ID!, $e: String!) { createSubuser(serverId: $id, input: { email: $e, permissions: ["control.console"], paths: null }) { permissions paths } }', { id: S(), e: friendA.email }],
    omitted: () => ['mutation($id: ID!, $e: String!) { createSubuser(serverId: $id, input: { email: $e, permissions: ["control.console"] }) { permissions paths } }', { id: S(), e: friendB.email }],
  },
  {
    name: 'updateSubuser(paths: null, permissions: null): unchanged',
    nulls: () => ['mutation($id: ID!, $u: ID!) { updateSubuser(serverId: $id, userId: $u, input: { paths: null, permissions: null }) { permissions paths } }', { id: S(), u: friendC.user.id }],
    omitted: () => ['mutation($id: ID!, $u: ID!) { updateSubuser(serverId: $id, userId: $u, input: {}) { permissions paths } }', { id: S(), u: friendC.user.id }],
  },
  {
    name: 'updateMe(every field null): unchanged',
    nulls: () => ['mutation { updateMe(input: { name: null, email: null, password: null, currentPassword: null }) { name email } }'],
    omitted: () => ['mutation { updateMe(input: {}) { name email } }'],
  },
  {
    name: 'createNode(port, scheme, cpuCores: null): the defaults',
    as: 'admin',
    nulls: () => ['mutation { createNode(input: { name: "null-node", fqdn: "10.9.9.9", memory: 1024, disk: 1024, port: null, scheme: null, cpuCores: null }) { node { port scheme cpuCores } } }'],
    omitted: () => ['mutation { createNode(input: { name: "null-node-2", fqdn: "10.9.9.8", memory: 1024, disk: 1024 }) { node { port scheme cpuCores } } }'],
  },
  {
    name: 'restoreBackup(truncate: null) of an unknown backup',
    nulls: () => ['mutation($id: ID!, $b: ID!) { restoreBackup(serverId: $id, backupId: $b, truncate: null) { id } }', { id: S(), b: UNKNOWN }],
    omitted: () => ['mutation($id: ID!, $b: ID!) { restoreBackup(serverId: $id, backupId: $b) { id } }', { id: S(), b: UNKNOWN }],
    want: 'NOT_FOUND',
  },
  {
    name: 'deleteServer(force: null) of an unknown server',
    as: 'admin',
    nulls: () => ['mutation($id: ID!) { deleteServer(id: $id, force: null) }', { id: UNKNOWN }],
    omitted: () => ['mutation($id: ID!) { deleteServer(id: $id) }', { id: UNKNOWN }],
    want: 'NOT_FOUND',
  },
];

async function outcome(c: Case, [query, variables]: Op): Promise<unknown> {
  const r = await gql(p, query, variables, { token: c.as === 'admin' ? admin.token : owner.token });
  const e = r.body.errors?.[0];
  if (e) return { error: e.extensions?.code, fields: e.extensions?.details?.fields };
  return c.view ? c.view(r.body.data) : r.body.data;
}

test.each(cases.map((c) => [c.name, c] as const))('%s answers like the omitted arguments', async (_name, c) => {
  const withNulls = await outcome(c, c.nulls());
  const without = await outcome(c, c.omitted());
  if (c.want) expect(without).toMatchObject({ error: c.want });
  else expect(without).not.toHaveProperty('error');
  expect(withNulls).toEqual(without);
});

test('restoreBackup(truncate: null) restores a completed backup like the omitted truncate', async () => {
  const made = await gql(p, 'mutation($id: ID!) { createBackup(serverId: $id, input: { name: "for-restore" }) { id } }', { id: S() }, { token: owner.token });
  const backupId = made.body.data.createBackup.id as string;
  await until(async () => (await gql(p, 'query($id: ID!, $b: ID!) { backup(serverId: $id, backupId: $b) { status } }', { id: S(), b: backupId }, { token: owner.token })).body.data?.backup.status === 'completed', 30_000, 'the backup');
  for (const q of ['mutation($id: ID!, $b: ID!) { restoreBackup(serverId: $id, backupId: $b, truncate: null) { id } }', 'mutation($id: ID!, $b: ID!) { restoreBackup(serverId: $id, backupId: $b) { id } }']) {
    await waitForStatus(p, owner.token, S(), 'offline');
    const r = await gql(p, q, { id: S(), b: backupId }, { token: owner.token });
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.restoreBackup.id).toBe(backupId);
  }
  await waitForStatus(p, owner.token, S(), 'offline');
}, 90_000);

test('a null inside a JSON scalar is the client\u2019s data, not an absent field', async () => {
  // createSchedule's task payload is a JSONObject: a null in it reaches the service (and its validation) as sent
  const r = await gql(
    p,
    'mutation($id: ID!) { createSchedule(serverId: $id, input: { name: "p", cron: "0 1 * * *", tasks: [{ action: "command", payload: { command: null } }] }) { id } }',
    { id: S() },
    { token: owner.token },
  );
  expect(r.body.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
});

test('given(): null and undefined are left out, except the fields a caller keeps (a null that means something)', () => {
  expect(given({ page: null, limit: undefined, search: 'x', n: 0, b: false, s: '' })).toEqual({ search: 'x', n: 0, b: false, s: '' });
  expect(given(null)).toEqual({});
  expect(given(undefined)).toEqual({});
  expect(given({ install: null, ready: null, name: null }, { keepNull: ['install', 'ready'] })).toEqual({ install: null, ready: null });
  // JSON values are not walked into
  expect(given({ variables: { A: null } })).toEqual({ variables: { A: null } });
});
