/**
 * `configFiles` set by administrators through `POST`/`PATCH /admin/blueprints` and GraphQL: stored,
 * shown, checked as the egg import checks them (src/shared/config-file-checks.ts), except that a
 * placeholder outside the allow-list is a 422 here, and written by the local node's agent into the
 * server's files at start.
 */
import { localNodeId, expectError, expectFieldError, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { expectData, gql } from '../graphql/gql.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let admin: string;
let user: string;
let nodeId: string;
let n = 0;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 2 });
  admin = (await p.admin()).token;
  user = (await p.newUser('config files user')).token;
  nodeId = await localNodeId(p, admin);
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

const CONFIG_FILES = [
  { file: 'server.properties', parser: 'properties', find: { 'server-port': '{{server.build.default.port}}', motd: 'hello {{env.GREETING}}' } },
  { file: 'conf/app.json', parser: 'json', find: { 'net.port': '{{server.build.env.SERVER_PORT}}', 'net.memory': '{{server.build.memory}}' } },
];

const body = (extra: Record<string, unknown> = {}) => ({
  key: `config-files-${Date.now()}-${++n}`,
  name: 'Config files',
  startup: 'sleep 60',
  stop: 'SIGTERM',
  variables: [
    { key: 'SERVER_PORT', default: '25565', rules: 'required|integer|between:1,65535' },
    { key: 'GREETING', default: 'world', rules: 'nullable|string' },
  ],
  configFiles: CONFIG_FILES,
  ...extra,
});
const create = (b: unknown, token = admin) => p.request('POST', '/api/v1/admin/blueprints', { token, body: b });
const patch = (id: string, b: unknown) => p.request('PATCH', `/api/v1/admin/blueprints/${id}`, { token: admin, body: b });

test('POST stores configFiles; GET shows them; PATCH replaces the list', async () => {
  const r = await create(body());
  expect(r.status).toBe(201);
  expect(r.body.data.configFiles).toEqual(CONFIG_FILES);
  const seen = await p.request('GET', `/api/v1/blueprints/${r.body.data.id}`, { token: user });
  expect(seen.body.data.configFiles).toEqual(CONFIG_FILES);
  const changed = await patch(r.body.data.id, { configFiles: [{ file: 'a.ini', parser: 'ini', find: { 'Server.port': '{{server.build.default.port}}' } }] });
  expect(changed.status).toBe(200);
  expect(changed.body.data.configFiles).toEqual([{ file: 'a.ini', parser: 'ini', find: { 'Server.port': '{{server.build.default.port}}' } }]);
  expect((await patch(r.body.data.id, { name: 'Renamed' })).body.data.configFiles).toHaveLength(1);
  expect((await patch(r.body.data.id, { configFiles: [] })).body.data.configFiles).toEqual([]);
  // without the field, a new blueprint has none
  expect((await create(body({ configFiles: undefined }))).body.data.configFiles).toEqual([]);
});

describe('the checks of the egg import, as 422s naming configFiles.N.…', () => {
  const cases: [string, unknown, string][] = [
    ['a path outside the server directory', [{ file: '../../etc/passwd', parser: 'file', find: { root: 'x' } }], 'configFiles.0.file'],
    ['an absolute path', [{ file: '/etc/passwd', parser: 'file', find: { root: 'x' } }], 'configFiles.0.file'],
    ['a parser the agent does not apply', [{ file: 'a.toml', parser: 'toml', find: { a: 'b' } }], 'configFiles.0.parser'],
    ['a refused placeholder', [CONFIG_FILES[0], { file: 'b.json', parser: 'json', find: { 'net.bind': '{{config.docker.interface}}' } }], 'configFiles.1.find.net.bind'],
    ['a secret of the agent', [{ file: 'a.properties', parser: 'properties', find: { token: '{{config.token}}' } }], 'configFiles.0.find.token'],
    ['a value of two lines', [{ file: 'a.properties', parser: 'properties', find: { motd: 'a\nb' } }], 'configFiles.0.find.motd'],
    ['a value over 4096 characters', [{ file: 'a.properties', parser: 'properties', find: { motd: 'x'.repeat(4097) } }], 'configFiles.0.find.motd'],
    ['a value that is an object (a conditional replacement)', [{ file: 'a.yml', parser: 'yaml', find: { 'servers.*.address': { '127.0.0.1': '{{server.build.default.ip}}' } } }], 'configFiles.0.find.servers.*.address'],
    ['a key over 255 characters', [{ file: 'a.properties', parser: 'properties', find: { ['k'.repeat(256)]: 'v' } }], `configFiles.0.find.${'k'.repeat(256)}`],
    ['an xml key with `*`', [{ file: 'a.xml', parser: 'xml', find: { 'Config.*': 'x' } }], 'configFiles.0.find.Config.*'],
    ['an xml key without the root element', [{ file: 'a.xml', parser: 'xml', find: { Port: '1' } }], 'configFiles.0.find.Port'],
    ['no keys', [{ file: 'a.properties', parser: 'properties', find: {} }], 'configFiles.0.find'],
    ['more than 100 keys', [{ file: 'a.properties', parser: 'properties', find: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, 'v'])) }], 'configFiles.0.find'],
    ['more than 20 files', Array.from({ length: 21 }, (_, i) => ({ file: `f${i}.properties`, parser: 'properties', find: { a: 'b' } })), 'configFiles'],
    ['not a list', { 'server.properties': CONFIG_FILES[0] }, 'configFiles'],
  ];
  test.each(cases)('%s', async (_what, configFiles, field) => {
    const created = await create(body({ configFiles }));
    expectFieldError(created, field);
    expect(created.body.error.details.fields[field]).toBeTruthy();
    const existing = (await create(body({ configFiles: [] }))).body.data.id;
    expectFieldError(await patch(existing, { configFiles }), field);
  });

  test('the message of a refused placeholder names it and the allow-list', async () => {
    const r = await create(body({ configFiles: [{ file: 'a.properties', parser: 'properties', find: { token: 'x{{config.token}}' } }] }));
    expect(r.body.error.details.fields['configFiles.0.find.token']).toMatch(/^the placeholder \{\{config\.token\}\} is not allowed \(only \{\{server\.build\.default\.port\}\}/);
  });
});

test('users may not set them (403)', async () => {
  expectError(await create(body(), user), 403, 'FORBIDDEN');
});

test('GraphQL createBlueprint and updateBlueprint take configFiles; a refused placeholder is a VALIDATION_ERROR', async () => {
  const mutation = 'mutation($input: CreateBlueprintInput!) { createBlueprint(input: $input) { id configFiles { file parser find } } }';
  const made = expectData(await gql(p, mutation, { input: body() }, { token: admin })).createBlueprint;
  expect(made.configFiles).toEqual(CONFIG_FILES);
  const update = 'mutation($id: ID!, $input: UpdateBlueprintInput!) { updateBlueprint(id: $id, input: $input) { configFiles { file parser find } } }';
  const one = [{ file: 'x.yml', parser: 'yaml', find: { 'a.b': '{{env.GREETING}}' } }];
  expect(expectData(await gql(p, update, { id: made.id, input: { configFiles: one } }, { token: admin })).updateBlueprint.configFiles).toEqual(one);
  const bad = await gql(p, update, { id: made.id, input: { configFiles: [{ file: 'x.yml', parser: 'yaml', find: { a: '{{config.token}}' } }] } }, { token: admin });
  expect(bad.body.errors?.[0]?.extensions.code).toBe('VALIDATION_ERROR');
  expect(Object.keys(bad.body.errors![0]!.extensions.details.fields)).toEqual(['configFiles.0.find.a']);
});

test('at start, the local agent writes them into the server\'s files', async () => {
  const bp = await create(body());
  expect(bp.status).toBe(201);
  const s = await p.request('POST', '/api/v1/servers', { token: admin, body: { name: 'config files', nodeId, blueprintId: bp.body.data.id, memory: 96, cpu: 50, disk: 256, variables: { SERVER_PORT: '27999', GREETING: 'admins' } } });
  expect(s.status).toBe(201);
  const id = s.body.data.id;
  await waitForStatus(p, admin, id, 'offline');
  expect((await p.request('POST', `/api/v1/servers/${id}/start`, { token: admin })).status).toBe(200);
  const read = (file: string) => p.request('GET', `/api/v1/servers/${id}/files/contents?path=${encodeURIComponent(file)}`, { token: admin });
  await until(async () => (await read('/conf/app.json')).status === 200, 15_000, 'conf/app.json written');
  expect((await read('/server.properties')).text.split('\n').filter(Boolean).sort()).toEqual(['motd=hello admins', 'server-port=27999']);
  expect(JSON.parse((await read('/conf/app.json')).text)).toEqual({ net: { port: 27999, memory: 96 } });
  expect((await p.request('POST', `/api/v1/servers/${id}/kill`, { token: admin })).status).toBe(200);
  await waitForStatus(p, admin, id, 'offline');
}, 60_000);
