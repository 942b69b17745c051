/**
 * USER_COMMAND_BLUEPRINTS=admins: only administrators create servers from built-in blueprints that run a
 * command the user chooses ("Shell command"), over REST and GraphQL alike; the default lets everyone.
 */
import { loadConfig } from '../../src/config.js';
import { blueprintsByKey, createNode, expectError } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { expectGqlError, gql } from '../graphql/gql.js';

let p: TestPlatform;
let admin: { token: string; user: any };
let bp: Record<string, any>;
let node: { id: string };

beforeAll(async () => {
  p = await startTestPlatform({ userCommandBlueprints: 'admins' });
  admin = await p.admin();
  bp = await blueprintsByKey(p, admin.token);
  node = await createNode(p, admin.token);
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

const shell = () => ({ name: 'shell', nodeId: node.id, blueprintId: bp['shell-command'].id, memory: 128, cpu: 100, disk: 256 });

test('the setting: everyone by default, admins on request, anything else stops the start', () => {
  expect(loadConfig({}).userCommandBlueprints).toBe('everyone');
  expect(loadConfig({ USER_COMMAND_BLUEPRINTS: 'admins' }).userCommandBlueprints).toBe('admins');
  expect(() => loadConfig({ USER_COMMAND_BLUEPRINTS: 'nobody' })).toThrow(/USER_COMMAND_BLUEPRINTS/);
});

test('a user creating a shell-command server gets 422 with fields.blueprintId, saying an admin must create it', async () => {
  const u = await p.newUser();
  const r = await p.request('POST', '/api/v1/servers', { token: u.token, body: shell() });
  expectError(r, 422, 'VALIDATION_ERROR');
  expect(Object.keys(r.body.error.details.fields)).toEqual(['blueprintId']);
  expect(r.body.error.message).toMatch(/administrator must create/);
  expect((await p.request('GET', '/api/v1/servers', { token: u.token })).body.meta.total).toBe(0);
});

test('GraphQL createServer refuses it the same way', async () => {
  const u = await p.newUser();
  const r = await gql(p, 'mutation($input: CreateServerInput!) { createServer(input: $input) { id } }', { input: shell() }, { token: u.token });
  expectGqlError(r, 'VALIDATION_ERROR');
  expect(Object.keys(r.body.errors![0]!.extensions.details.fields)).toEqual(['blueprintId']);
  expect(r.body.errors![0]!.message).toMatch(/administrator must create/);
});

test('other blueprints stay open to users', async () => {
  const u = await p.newUser();
  const r = await p.request('POST', '/api/v1/servers', { token: u.token, body: { ...shell(), blueprintId: bp['nodejs-script'].id } });
  expect(r.status).toBe(201);
});

test('an admin may create one for a user; the user may rename it but not change its command', async () => {
  const u = await p.newUser();
  const r = await p.request('POST', '/api/v1/servers', { token: admin.token, body: { ...shell(), ownerId: u.user.id, variables: { COMMAND: 'echo hi' } } });
  expect(r.status).toBe(201);
  const id = r.body.data.id;
  const change = await p.request('PATCH', `/api/v1/servers/${id}`, { token: u.token, body: { variables: { COMMAND: 'cat /etc/passwd' } } });
  expectError(change, 422, 'VALIDATION_ERROR');
  expect(Object.keys(change.body.error.details.fields)).toEqual(['variables']);
  expect((await p.request('PATCH', `/api/v1/servers/${id}`, { token: u.token, body: { name: 'renamed' } })).status).toBe(200);
  const byAdmin = await p.request('PATCH', `/api/v1/servers/${id}`, { token: admin.token, body: { variables: { COMMAND: 'echo bye' } } });
  expect(byAdmin.status).toBe(200);
  expect(byAdmin.body.data.variables.COMMAND).toBe('echo bye');
});

test('with the default (everyone) a user may create one', async () => {
  const open = await startTestPlatform();
  try {
    const a = await open.admin();
    const n = await createNode(open, a.token);
    const b = await blueprintsByKey(open, a.token);
    const u = await open.newUser();
    const r = await open.request('POST', '/api/v1/servers', { token: u.token, body: { ...shell(), nodeId: n.id, blueprintId: b['shell-command'].id } });
    expect(r.status).toBe(201);
  } finally {
    await open.stop();
  }
}, 60_000);
