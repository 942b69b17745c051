/**
 * Blueprint management by administrators over REST and GraphQL: create, change, delete (refused while
 * servers use it, and for built-in blueprints), the checks of templates, patterns and rules, the
 * activity log, and 403 for everyone else.
 */
import { blueprintsByKey, createNode, expectError, expectFieldError } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { expectData, gql } from '../graphql/gql.js';

let p: TestPlatform;
let admin: string;
let user: string;
let nodeId: string;
let n = 0;

beforeAll(async () => {
  p = await startTestPlatform();
  admin = (await p.admin()).token;
  user = (await p.newUser('bp user')).token;
  nodeId = (await createNode(p, admin)).id;
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

const body = (extra: Record<string, unknown> = {}) => ({
  key: `game-${Date.now()}-${++n}`,
  name: 'My game',
  description: 'A game',
  startup: './game --port {{PORT}} --motd {{MOTD}}',
  stop: 'stop',
  ready: 'Server started',
  variables: [
    { key: 'PORT', name: 'Port', default: '27015', rules: 'required|integer|between:1024,65535' },
    { key: 'MOTD', default: 'hi', rules: 'nullable|string|max:16', userEditable: false },
  ],
  defaults: { memory: 256, cpu: 50, disk: 512 },
  ...extra,
});
const create = (b: unknown, token = admin) => p.request('POST', '/api/v1/admin/blueprints', { token, body: b });
const server = (blueprintId: string, variables: Record<string, string> = {}) =>
  p.request('POST', '/api/v1/servers', { token: user, body: { name: 's', nodeId, blueprintId, variables } });

test('create: 201 with defaults filled in, readable by every user', async () => {
  const r = await create(body());
  expect(r.status).toBe(201);
  expect(r.body.data).toMatchObject({ name: 'My game', stop: 'stop', ready: 'Server started', install: null, builtin: false, defaults: { memory: 256, cpu: 50, disk: 512 } });
  expect(r.body.data.variables).toEqual([
    { key: 'PORT', name: 'Port', description: '', default: '27015', rules: 'required|integer|between:1024,65535', userViewable: true, userEditable: true },
    { key: 'MOTD', name: 'MOTD', description: '', default: 'hi', rules: 'nullable|string|max:16', userViewable: true, userEditable: false },
  ]);
  const seen = await p.request('GET', `/api/v1/blueprints/${r.body.data.id}`, { token: user });
  expect(seen.status).toBe(200);
  const minimal = await create({ key: `min-${++n}`, name: 'Minimal', startup: '/bin/true', stop: 'SIGTERM' });
  expect(minimal.body.data).toMatchObject({ ready: null, variables: [], defaults: { memory: 1024, cpu: 100, disk: 4096 } });
});

test('a server of the blueprint: defaults from it, variables checked by its rules', async () => {
  const bp = (await create(body())).body.data;
  const s = await server(bp.id);
  expect(s.status).toBe(201);
  expect(s.body.data).toMatchObject({ memory: 256, cpu: 50, disk: 512, variables: { PORT: '27015', MOTD: 'hi' } });
  expectFieldError(await server(bp.id, { PORT: '80' }), 'variables.PORT');
  expectFieldError(await server(bp.id, { MOTD: 'x'.repeat(17) }), 'variables.MOTD');
});

test.each([
  ['key', { key: 'Not A Slug' }],
  ['name', { name: '' }],
  ['startup', { startup: './game "unterminated' }],
  ['startup', { startup: '   ' }],
  ['stop', { stop: '' }],
  ['ready', { ready: '(unclosed' }],
  ['variables.0.key', { variables: [{ key: 'PATH' }] }],
  ['variables.0.key', { variables: [{ key: '1X' }] }],
  ['variables.1.key', { variables: [{ key: 'A' }, { key: 'A' }] }],
  ['variables.0.rules', { variables: [{ key: 'A', rules: 'required|frobnicate' }] }],
  ['variables.0.rules', { variables: [{ key: 'A', rules: 'regex:/[/' }] }],
  ['variables.0.rules', { variables: [{ key: 'A', rules: 'between:1' }] }],
  ['variables.0.rules', { variables: [{ key: 'A', rules: 'required|regex:/^(a+)+$/' }] }],
  // nested one group deeper, or repeating an alternation: they passed the check before and stalled the panel for seconds
  ['variables.0.rules', { variables: [{ key: 'A', rules: 'required|regex:/^((a)+)+$/' }] }],
  ['variables.0.rules', { variables: [{ key: 'A', rules: 'required|regex:/^(?:(?:a)+)+$/' }] }],
  ['variables.0.rules', { variables: [{ key: 'A', rules: 'required|regex:/^(a|a)*$/' }] }],
  ['variables.0.rules', { variables: [{ key: 'A', rules: 'required|regex:/^(?<n>\\w*){2,}$/' }] }],
  ['defaults.memory', { defaults: { memory: 1, cpu: 100, disk: 1024 } }],
  ['install', { install: 5 }],
])('create: a bad %s is 422 naming it', async (field, change) => {
  expectFieldError(await create(body(change)), field);
});

test('create: a key already taken is 422 ALREADY_EXISTS', async () => {
  const b = body();
  expect((await create(b)).status).toBe(201);
  const r = await create({ ...b, name: 'Other' });
  expectError(r, 422, 'ALREADY_EXISTS');
  expect(Object.keys(r.body.error.details.fields)).toEqual(['key']);
});

test('update: only the fields given; variables replace the list; checked like create', async () => {
  const bp = (await create(body())).body.data;
  const r = await p.request('PATCH', `/api/v1/admin/blueprints/${bp.id}`, { token: admin, body: { name: 'Renamed', ready: null, variables: [{ key: 'PORT', default: '25565', rules: 'required|integer' }] } });
  expect(r.status).toBe(200);
  expect(r.body.data).toMatchObject({ name: 'Renamed', ready: null, stop: 'stop', startup: bp.startup, variables: [{ key: 'PORT', default: '25565' }] });
  expectFieldError(await p.request('PATCH', `/api/v1/admin/blueprints/${bp.id}`, { token: admin, body: { variables: [{ key: 'X', rules: 'max:' }] } }), 'variables.0.rules');
  expectError(await p.request('PATCH', '/api/v1/admin/blueprints/00000000-0000-4000-8000-000000000000', { token: admin, body: {} }), 404, 'NOT_FOUND');
});

test('built-in blueprints cannot be changed or deleted (422 INVALID_STATE)', async () => {
  const demo = (await blueprintsByKey(p, admin))['demo-game'];
  expectError(await p.request('PATCH', `/api/v1/admin/blueprints/${demo.id}`, { token: admin, body: { name: 'Mine' } }), 422, 'INVALID_STATE');
  expectError(await p.request('DELETE', `/api/v1/admin/blueprints/${demo.id}`, { token: admin }), 422, 'INVALID_STATE');
});

test('delete: refused while a server uses it, then 204 and gone', async () => {
  const bp = (await create(body())).body.data;
  const s = (await server(bp.id)).body.data;
  const refused = await p.request('DELETE', `/api/v1/admin/blueprints/${bp.id}`, { token: admin });
  expectError(refused, 422, 'INVALID_STATE');
  expect(refused.body.error.details.servers).toBe(1);
  expect((await p.request('DELETE', `/api/v1/servers/${s.id}?force=true`, { token: admin })).status).toBe(204);
  expect((await p.request('DELETE', `/api/v1/admin/blueprints/${bp.id}`, { token: admin })).status).toBe(204);
  expectError(await p.request('GET', `/api/v1/blueprints/${bp.id}`, { token: admin }), 404, 'NOT_FOUND');
});

test('users get 403 for every write; the activity log has the admin\'s', async () => {
  const bp = (await create(body())).body.data;
  expectError(await create(body(), user), 403, 'FORBIDDEN');
  expectError(await p.request('PATCH', `/api/v1/admin/blueprints/${bp.id}`, { token: user, body: { name: 'x' } }), 403, 'FORBIDDEN');
  expectError(await p.request('DELETE', `/api/v1/admin/blueprints/${bp.id}`, { token: user }), 403, 'FORBIDDEN');
  // a whole form sent back with one field changed: the entry names that field only
  const { name: _name, ...unchanged } = body();
  await p.request('PATCH', `/api/v1/admin/blueprints/${bp.id}`, { token: admin, body: { ...unchanged, key: bp.key, name: 'Renamed' } });
  await p.request('DELETE', `/api/v1/admin/blueprints/${bp.id}`, { token: admin });
  const log = await p.request('GET', '/api/v1/admin/activity?event=blueprint:&limit=100', { token: admin });
  const mine = log.body.data.filter((e: any) => e.properties.blueprintId === bp.id);
  expect(mine.map((e: any) => e.event).sort()).toEqual(['blueprint:create', 'blueprint:delete', 'blueprint:update']);
  expect(mine.find((e: any) => e.event === 'blueprint:update').properties.fields).toEqual(['name']);
});

test('GraphQL: createBlueprint, updateBlueprint, deleteBlueprint; users refused', async () => {
  const input = body();
  const created = expectData(await gql(p, 'mutation($i: CreateBlueprintInput!) { createBlueprint(input: $i) { id key variables { key name userEditable } defaults { memory } } }', { i: input }, { token: admin })).createBlueprint;
  expect(created).toMatchObject({ key: input.key, defaults: { memory: 256 }, variables: [{ key: 'PORT', name: 'Port', userEditable: true }, { key: 'MOTD', name: 'MOTD', userEditable: false }] });
  const updated = expectData(await gql(p, 'mutation($id: ID!) { updateBlueprint(id: $id, input: { stop: "^C", ready: null }) { stop ready } }', { id: created.id }, { token: admin })).updateBlueprint;
  expect(updated).toEqual({ stop: '^C', ready: null });
  const bad = await gql(p, 'mutation($id: ID!) { updateBlueprint(id: $id, input: { variables: [{ key: "LD_PRELOAD" }] }) { id } }', { id: created.id }, { token: admin });
  expect(bad.body.errors?.[0]?.extensions.code).toBe('VALIDATION_ERROR');
  expect(Object.keys(bad.body.errors![0]!.extensions.details.fields)).toEqual(['variables.0.key']);
  const denied = await gql(p, 'mutation($id: ID!) { deleteBlueprint(id: $id) }', { id: created.id }, { token: user });
  expect(denied.body.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
  expect(expectData(await gql(p, 'mutation($id: ID!) { deleteBlueprint(id: $id) }', { id: created.id }, { token: admin })).deleteBlueprint).toBe(true);
});
