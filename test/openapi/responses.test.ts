/**
 * The running API against its OpenAPI document:
 *  - every route of the Express app under /api/v1 (src/rest/route-list.ts), plus POST /plants, is an
 *    operation of the document, and every operation is a route;
 *  - a realistic scenario touches every operation (successes and the errors 400/401/403/404/422/429,
 *    power routes on the local agent → 200, with an unreachable node agent → 422 NODE_UNAVAILABLE)
 *    and EVERY response it gets
 *    is checked: the status is documented for the operation, the body validates against the schema
 *    (ajv, closed objects: an undocumented field fails too) and the rate-limit headers are there.
 */
import { buildOpenApiDocument } from '../../src/openapi/document.js';
import { listRoutes } from '../../src/rest/route-list.js';
import { createNode } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { ContractChecker, operationsOf } from './contract.js';
import { sleep, until } from '../support/wait.js';
import { MINIMAL_EGG } from '../support/eggs.js';

const doc = buildOpenApiDocument();
const checker = new ContractChecker(doc);

let p: TestPlatform;
let limited: TestPlatform;

beforeAll(async () => {
  // the local node agent runs: its servers answer power actions (200); other nodes point at a closed port (422)
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 2 }, {}, { record: true });
  limited = await startTestPlatform({ rateLimits: { general: 2, auth: 2, admin: 2 } }, {}, { record: true });
}, 120_000);
afterAll(async () => {
  await p?.stop();
  await limited?.stop();
}, 60_000);

const expectStatus = (r: { status: number; text: string }, status: number, what: string) => {
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${r.text.slice(0, 300)}`);
};

test('the routes of the app and the operations of the document are the same', () => {
  const toTemplate = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  const routes = listRoutes(p.app, '/api/v1').map((r) => `${r.method} ${toTemplate(r.path)}`);
  routes.push(...listRoutes(p.app, '/plants').map((r) => `${r.method} ${toTemplate(r.path)}`));
  const documented = operationsOf(doc).map((o) => `${o.method} ${o.template}`);
  expect(routes.length).toBeGreaterThan(25);
  expect(routes.filter((r) => !documented.includes(r))).toEqual([]); // routes missing from the document
  expect(documented.filter((d) => !routes.includes(d))).toEqual([]); // documented operations without a route
});

describe('a scenario over every operation', () => {
  let admin: string;
  let user: { token: string; user: any; email: string; password: string };
  let other: { token: string; user: any; email: string };
  let nodeId: string;
  let blueprintId: string;
  let serverId: string;

  test('auth', async () => {
    const email = `oa-${Date.now()}@example.com`;
    expectStatus(await p.request('GET', '/api/v1/openapi.json'), 200, 'openapi.json');
    expectStatus(await p.request('POST', '/api/v1/auth/signup', { body: { email, password: 'password-123', name: 'OpenAPI' } }), 201, 'signup');
    expectStatus(await p.request('POST', '/api/v1/auth/signup', { body: { email: email.toUpperCase(), password: 'password-123', name: 'Again' } }), 422, 'signup taken');
    expectStatus(await p.request('POST', '/api/v1/auth/signup', { body: { email: 'nope', password: 'short', name: '' } }), 422, 'signup invalid');
    expectStatus(await p.request('POST', '/api/v1/auth/signup', { raw: '{"email":', headers: { 'content-type': 'application/json' } }), 400, 'signup malformed');
    const signin = await p.request('POST', '/api/v1/auth/signin', { body: { email, password: 'password-123' } });
    expectStatus(signin, 200, 'signin');
    user = { token: signin.body.data.token, user: signin.body.data.user, email, password: 'password-123' };
    expectStatus(await p.request('POST', '/api/v1/auth/signin', { body: { email, password: 'wrong-password' } }), 401, 'signin wrong');
    expectStatus(await p.request('POST', '/api/v1/auth/signin', { body: {} }), 422, 'signin empty');
    expectStatus(await p.request('GET', '/api/v1/auth/session', { token: user.token }), 200, 'session');
    expectStatus(await p.request('GET', '/api/v1/auth/session'), 401, 'session anonymous');
    expectStatus(await p.request('GET', '/api/v1/auth/session', { token: 'hps_not-a-real-token' }), 401, 'session unknown token');
    admin = (await p.admin()).token;
    other = await p.newUser('Other');
  });

  test('users and API tokens', async () => {
    expectStatus(await p.request('GET', '/api/v1/users/me', { token: user.token }), 200, 'me');
    expectStatus(await p.request('GET', '/api/v1/users/me'), 401, 'me anonymous');
    expectStatus(await p.request('PATCH', '/api/v1/users/me', { token: user.token, body: { name: 'Renamed' } }), 200, 'patch me');
    expectStatus(await p.request('PATCH', '/api/v1/users/me', { token: user.token, body: { password: 'new-password-1' } }), 422, 'patch me without currentPassword');
    expectStatus(await p.request('PATCH', '/api/v1/users/me', { token: user.token, raw: 'name=x', headers: { 'content-type': 'text/plain' } }), 400, 'patch me not JSON');
    // cookie-authenticated write from another origin: CSRF → 403
    expectStatus(
      await p.request('PATCH', '/api/v1/users/me', { cookie: `hp_session=${user.token}`, headers: { origin: 'http://evil.example' }, body: { name: 'x' } }),
      403,
      'patch me cross-site',
    );
    expectStatus(await p.request('GET', '/api/v1/users/me/nodes', { token: user.token }), 200, 'node choices');
    expectStatus(await p.request('GET', '/api/v1/users/me/nodes?page=0', { token: user.token }), 422, 'node choices bad page');
    const created = await p.request('POST', '/api/v1/users/me/api-tokens', { token: user.token, body: { name: 'ci', expiresInDays: 30 } });
    expectStatus(created, 201, 'create api token');
    expectStatus(await p.request('POST', '/api/v1/users/me/api-tokens', { token: user.token, body: { name: 'forever' } }), 201, 'create api token without expiry');
    expectStatus(await p.request('POST', '/api/v1/users/me/api-tokens', { token: user.token, body: { name: 'x', expiresInDays: 0 } }), 422, 'create api token invalid');
    expectStatus(await p.request('GET', '/api/v1/users/me/api-tokens', { token: user.token }), 200, 'list api tokens');
    expectStatus(await p.request('GET', '/api/v1/users/me/api-tokens?page=99', { token: user.token }), 200, 'list api tokens past the end');
    expectStatus(await p.request('GET', '/api/v1/users/me/api-tokens?limit=101', { token: user.token }), 422, 'list api tokens bad limit');
    expectStatus(await p.request('GET', '/api/v1/auth/session', { token: created.body.data.token }), 200, 'session via api token');
    expectStatus(await p.request('DELETE', `/api/v1/users/me/api-tokens/${created.body.data.id}`, { token: user.token }), 204, 'revoke api token');
    expectStatus(await p.request('DELETE', `/api/v1/users/me/api-tokens/${created.body.data.id}`, { token: user.token }), 404, 'revoke again');
    expectStatus(await p.request('GET', '/api/v1/users/me', { token: created.body.data.token }), 401, 'revoked token');
  });

  test('nodes and blueprints', async () => {
    const node = await createNode(p, admin, { memory: 4096, disk: 8192, cpuCores: 2 });
    nodeId = node.id;
    expectStatus(await p.request('POST', '/api/v1/nodes', { token: admin, body: { name: node.name, fqdn: '127.0.0.1', memory: 1024, disk: 1024 } }), 422, 'node name taken');
    expectStatus(await p.request('POST', '/api/v1/nodes', { token: user.token, body: { name: 'x', fqdn: 'x.example', memory: 1024, disk: 1024 } }), 403, 'node create by user');
    expectStatus(await p.request('GET', '/api/v1/nodes?limit=5', { token: admin }), 200, 'list nodes');
    expectStatus(await p.request('GET', '/api/v1/nodes', { token: user.token }), 403, 'list nodes by user');
    expectStatus(await p.request('GET', `/api/v1/nodes/${nodeId}`, { token: admin }), 200, 'get node');
    expectStatus(await p.request('GET', '/api/v1/nodes/00000000-0000-4000-8000-000000000000', { token: admin }), 404, 'get unknown node');
    expectStatus(await p.request('PATCH', `/api/v1/nodes/${nodeId}`, { token: admin, body: { memory: 1_000_000, disk: 10_000_000 } }), 200, 'change node');
    expectStatus(await p.request('PATCH', `/api/v1/nodes/${nodeId}`, { token: admin, body: { port: 0 } }), 422, 'change node: bad port');
    expectStatus(await p.request('PATCH', `/api/v1/nodes/${nodeId}`, { token: user.token, body: { memory: 2048 } }), 403, 'change node by user');
    expectStatus(await p.request('PATCH', '/api/v1/nodes/00000000-0000-4000-8000-000000000000', { token: admin, body: { memory: 2048 } }), 404, 'change unknown node');
    expectStatus(await p.request('GET', `/api/v1/nodes/${nodeId}/stats`, { token: admin }), 200, 'node stats (unreachable: online false)');
    expectStatus(await p.request('GET', `/api/v1/nodes/${nodeId}/stats`, { token: user.token }), 403, 'node stats by user');
    const list = await p.request('GET', '/api/v1/blueprints?limit=100', { token: user.token });
    expectStatus(list, 200, 'list blueprints');
    blueprintId = list.body.data.find((b: any) => b.key === 'shell-command')?.id ?? list.body.data[0].id;
    expectStatus(await p.request('GET', `/api/v1/blueprints/${blueprintId}`, { token: user.token }), 200, 'get blueprint');
    expectStatus(await p.request('GET', '/api/v1/blueprints/not-a-uuid', { token: user.token }), 404, 'get unknown blueprint');
    expectStatus(await p.request('GET', '/api/v1/blueprints'), 401, 'blueprints anonymous');
  });

  test('servers, power and console tokens', async () => {
    const base = { name: 'OpenAPI server', nodeId, blueprintId, memory: 256, cpu: 50, disk: 512 };
    const created = await p.request('POST', '/api/v1/servers', { token: user.token, body: { ...base, description: 'described', autoRestart: true } });
    expectStatus(created, 201, 'create server');
    serverId = created.body.data.id;
    expectStatus(await p.request('POST', '/api/v1/servers', { token: user.token, body: { ...base, memory: 1_000_000 } }), 422, 'create server over capacity');
    expectStatus(await p.request('POST', '/api/v1/servers', { token: user.token, body: { ...base, cpu: 'lots' } }), 422, 'create server invalid');
    expectStatus(await p.request('POST', '/api/v1/servers', { token: user.token, body: { ...base, ownerId: other.user.id } }), 403, 'create server for another user');
    expectStatus(await p.request('GET', '/api/v1/servers', { token: user.token }), 200, 'list servers');
    expectStatus(await p.request('GET', `/api/v1/servers?status=running&nodeId=${nodeId}`, { token: admin }), 200, 'list servers filtered');
    expectStatus(await p.request('GET', '/api/v1/servers?status=exploded', { token: user.token }), 422, 'list servers bad filter');
    expectStatus(await p.request('GET', `/api/v1/servers/${serverId}`, { token: user.token }), 200, 'get server');
    expectStatus(await p.request('GET', `/api/v1/servers/${serverId}`, { token: other.token }), 404, "another user's server");
    expectStatus(await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: user.token, body: { name: 'Renamed server', memory: 300 } }), 200, 'patch server');
    expectStatus(await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: user.token, body: { nodeId: '00000000-0000-4000-8000-000000000000' } }), 422, 'patch server nodeId (another node)');
    for (const action of ['start', 'stop', 'restart', 'kill']) {
      const r = await p.request('POST', `/api/v1/servers/${serverId}/${action}`, { token: user.token });
      expectStatus(r, 422, `${action} (node unreachable or installing)`);
      expect(['NODE_UNAVAILABLE', 'INVALID_STATE']).toContain(r.body.error.code);
      expectStatus(await p.request('POST', `/api/v1/servers/${serverId}/${action}`, { token: other.token }), 404, `${action} by another user`);
    }
    const reinstall = await p.request('POST', `/api/v1/servers/${serverId}/reinstall`, { token: user.token });
    expectStatus(reinstall, 422, 'reinstall (node unreachable or installing)');
    expect(['NODE_UNAVAILABLE', 'INVALID_STATE']).toContain(reinstall.body.error.code);
    expectStatus(await p.request('POST', `/api/v1/servers/${serverId}/reinstall`, { token: other.token }), 404, 'reinstall by another user');
    expectStatus(await p.request('GET', `/api/v1/servers/${serverId}/console-token`, { token: user.token }), 200, 'console token');
    expectStatus(await p.request('GET', `/api/v1/servers/${serverId}/console-token`), 401, 'console token anonymous');
  });

  test('shared access and the activity log', async () => {
    expectStatus(await p.request('GET', '/api/v1/permissions', { token: other.token }), 200, 'permission keys');
    const added = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: user.token, body: { email: other.email, permissions: ['websocket.connect'], paths: ['/plugins'] } });
    expectStatus(added, 201, 'add subuser');
    expectStatus(await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: user.token, body: { email: other.email, permissions: [] } }), 422, 'add subuser again');
    expectStatus(await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: other.token, body: { email: user.email, permissions: [] } }), 403, 'add subuser without user.create');
    expectStatus(await p.request('GET', `/api/v1/servers/${serverId}/subusers`, { token: user.token }), 200, 'list subusers');
    expectStatus(await p.request('PATCH', `/api/v1/servers/${serverId}/subusers/${other.user.id}`, { token: user.token, body: { permissions: ['websocket.connect', 'activity.read'] } }), 200, 'change subuser');
    expectStatus(await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:`, { token: other.token }), 200, 'server activity');
    expectStatus(await p.request('GET', '/api/v1/users/me/activity?limit=5', { token: user.token }), 200, 'my activity');
    expectStatus(await p.request('GET', '/api/v1/admin/activity?since=2020-01-01T00:00:00Z', { token: admin }), 200, 'all activity');
    expectStatus(await p.request('GET', '/api/v1/admin/activity', { token: user.token }), 403, 'all activity by user');
    expectStatus(await p.request('DELETE', `/api/v1/servers/${serverId}/subusers/${other.user.id}`, { token: user.token }), 204, 'remove subuser');
  });

  test('schedules', async () => {
    const S = (sub = '') => `/api/v1/servers/${serverId}/schedules${sub}`;
    const body = { name: 'Nightly', cron: '30 4 * * *', timezone: 'Europe/Berlin', tasks: [{ action: 'command', payload: { command: 'say hi' } }, { action: 'power', payload: { action: 'restart' }, offsetSeconds: 0, continueOnFailure: true }] };
    const created = await p.request('POST', S(), { token: user.token, body });
    expectStatus(created, 201, 'create schedule');
    const id = created.body.data.id as string;
    expectStatus(await p.request('POST', S(), { token: user.token, body: { ...body, cron: '* * * * * *' } }), 422, 'create schedule with seconds');
    expectStatus(await p.request('POST', S(), { token: user.token, body: { ...body, timezone: 'Mars/Olympus' } }), 422, 'create schedule with a bad zone');
    expectStatus(await p.request('POST', S(), { token: user.token, raw: '{', headers: { 'content-type': 'application/json' } }), 400, 'create schedule malformed');
    expectStatus(await p.request('POST', S(), { token: other.token, body }), 404, "create schedule on another user's server");
    expectStatus(await p.request('GET', S(), { token: user.token }), 200, 'list schedules');
    expectStatus(await p.request('GET', S('?limit=0'), { token: user.token }), 422, 'list schedules bad limit');
    expectStatus(await p.request('GET', S(`/${id}`), { token: user.token }), 200, 'get schedule');
    expectStatus(await p.request('GET', S('/00000000-0000-4000-8000-000000000000'), { token: user.token }), 404, 'get missing schedule');
    expectStatus(await p.request('PATCH', S(`/${id}`), { token: user.token, body: { enabled: false } }), 200, 'disable schedule');
    expectStatus(await p.request('PATCH', S(`/${id}`), { token: user.token, body: { cron: 'every day' } }), 422, 'change schedule bad cron');
    expectStatus(await p.request('POST', S(`/${id}/run`), { token: user.token }), 201, 'run schedule now');
    await p.services.scheduleRunner.idle();
    expectStatus(await p.request('GET', S(`/${id}/runs`), { token: user.token }), 200, 'schedule runs');
    expectStatus(await p.request('DELETE', S(`/${id}`), { token: user.token }), 204, 'delete schedule');
    expectStatus(await p.request('GET', S(`/${id}/runs`)), 401, 'schedule runs anonymous');
  });

  test('startup variables', async () => {
    const S = `/api/v1/servers/${serverId}/startup`;
    expectStatus(await p.request('GET', S, { token: user.token }), 200, 'startup');
    expectStatus(await p.request('GET', S, { token: other.token }), 404, "another user's startup");
    expectStatus(await p.request('PUT', S, { token: user.token, body: { variables: { COMMAND: 'echo hello' } } }), 200, 'change startup');
    expectStatus(await p.request('PUT', S, { token: user.token, body: { variables: { COMMAND: '', NOPE: 'x' } } }), 422, 'change startup breaking rules');
    expectStatus(await p.request('PUT', S, { token: user.token, body: { variables: 'COMMAND=x' } }), 422, 'change startup not an object');
    expectStatus(await p.request('PUT', S, { token: user.token, raw: '{', headers: { 'content-type': 'application/json' } }), 400, 'change startup malformed');
    expectStatus(await p.request('PUT', S), 401, 'change startup anonymous');
    const added = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: user.token, body: { email: other.email, permissions: ['startup.read'] } });
    expectStatus(added, 201, 'add a subuser who reads the startup');
    expectStatus(await p.request('GET', S, { token: other.token }), 200, 'startup as subuser');
    expectStatus(await p.request('PUT', S, { token: other.token, body: { variables: {} } }), 403, 'change startup without startup.update');
    expectStatus(await p.request('DELETE', `/api/v1/servers/${serverId}/subusers/${other.user.id}`, { token: user.token }), 204, 'remove that subuser');
  });

  test('files on the local node agent', async () => {
    const nodes = await p.request('GET', '/api/v1/nodes?limit=100', { token: admin });
    const local = nodes.body.data.find((n: any) => n.name === 'local');
    const created = await p.request('POST', '/api/v1/servers', { token: user.token, body: { name: 'Files server', nodeId: local.id, blueprintId, memory: 64, cpu: 10, disk: 128 } });
    const id = created.body.data.id as string;
    const F = (sub: string, q = '') => `/api/v1/servers/${id}/files${sub}${q ? `?${q}` : ''}`;
    expectStatus(await p.request('POST', F('/directory'), { token: user.token, body: { path: '/cfg' } }), 201, 'create folder');
    expectStatus(await p.request('PUT', F('/contents', 'path=/cfg/a.txt'), { token: user.token, raw: 'hello', headers: { 'content-type': 'text/plain' } }), 200, 'write file');
    expectStatus(await p.request('GET', F('', 'path=/cfg'), { token: user.token }), 200, 'list files');
    expectStatus(await p.request('GET', F('/search', 'path=/&query=a'), { token: user.token }), 200, 'search files');
    expectStatus(await p.request('GET', `/api/v1/servers/${id}/sftp`, { token: user.token }), 200, 'SFTP connection details');
    expectStatus(await p.request('GET', F('/contents', 'path=/cfg/a.txt'), { token: user.token }), 200, 'read file');
    expectStatus(await p.request('GET', F('/contents', 'path=../x'), { token: user.token }), 422, 'read file outside');
    expectStatus(await p.request('GET', F('/download', 'path=/cfg/a.txt'), { token: user.token }), 200, 'download file');
    expectStatus(await p.request('GET', F('/download', 'path=/cfg/a.txt'), { token: user.token, headers: { range: 'bytes=0-1' } }), 206, 'download range');
    const form = `--b\r\nContent-Disposition: form-data; name="f"; filename="up.txt"\r\n\r\nuploaded\r\n--b--\r\n`;
    expectStatus(await p.request('POST', F('/upload', 'path=/cfg'), { token: user.token, raw: form, headers: { 'content-type': 'multipart/form-data; boundary=b' } }), 201, 'upload');
    expectStatus(await p.request('POST', F('/rename'), { token: user.token, body: { from: '/cfg/up.txt', to: '/cfg/b.txt' } }), 200, 'rename file');
    expectStatus(await p.request('POST', F('/copy'), { token: user.token, body: { path: '/cfg/b.txt' } }), 201, 'copy file');
    expectStatus(await p.request('POST', F('/chmod'), { token: user.token, body: { path: '/cfg/b.txt', mode: '640' } }), 200, 'chmod file');
    expectStatus(await p.request('POST', F('/compress'), { token: user.token, body: { paths: ['/cfg'], destination: '/cfg.tar.gz' } }), 201, 'compress files');
    expectStatus(await p.request('POST', F('/decompress'), { token: user.token, body: { path: '/cfg.tar.gz', destination: '/restored' } }), 200, 'decompress file');
    expectStatus(await p.request('POST', F('/decompress'), { token: user.token, body: { path: '/cfg/b.txt' } }), 422, 'decompress a text file');
    expectStatus(await p.request('POST', F('/delete'), { token: user.token, body: { paths: ['/cfg'] } }), 204, 'delete files');
    // backups of the same server
    const B = (sub = '') => `/api/v1/servers/${id}/backups${sub}`;
    const made = await p.request('POST', B(), { token: user.token, body: { name: 'First', ignored: ['*.log'] } });
    expectStatus(made, 201, 'create backup');
    const backupId = made.body.data.id as string;
    await until(async () => (await p.request('GET', B(`/${backupId}`), { token: user.token })).body.data?.status === 'completed', 20_000, 'the backup');
    expectStatus(await p.request('GET', B(), { token: user.token }), 200, 'list backups');
    expectStatus(await p.request('GET', B(`/${backupId}`), { token: user.token }), 200, 'get backup');
    expectStatus(await p.request('GET', B(`/${backupId}/download`), { token: user.token }), 200, 'download backup');
    expectStatus(await p.request('POST', B(`/${backupId}/lock`), { token: user.token }), 200, 'lock backup');
    expectStatus(await p.request('DELETE', B(`/${backupId}`), { token: user.token }), 422, 'delete locked backup');
    expectStatus(await p.request('POST', B(`/${backupId}/unlock`), { token: user.token }), 200, 'unlock backup');
    expectStatus(await p.request('POST', B(`/${backupId}/restore`), { token: user.token, body: { truncate: false } }), 200, 'restore backup');
    await until(async () => (await p.request('GET', `/api/v1/servers/${id}`, { token: user.token })).body.data?.status === 'offline', 20_000, 'the restore');
    expectStatus(await p.request('DELETE', B(`/${backupId}`), { token: user.token }), 204, 'delete backup');
    expectStatus(await p.request('GET', B(`/${backupId}`), { token: user.token }), 404, 'get deleted backup');
    expectStatus(await p.request('GET', F('', 'path=/cfg'), { token: user.token }), 404, 'list deleted folder');
    expectStatus(await p.request('DELETE', `/api/v1/servers/${id}`, { token: user.token }), 204, 'delete files server');
  }, 60_000);

  test('power actions on the local node agent', async () => {
    const nodes = await p.request('GET', '/api/v1/nodes?limit=100', { token: admin });
    const local = nodes.body.data.find((n: any) => n.name === 'local');
    expectStatus(await p.request('GET', `/api/v1/nodes/${local.id}/stats`, { token: admin }), 200, 'node stats (online)');
    const created = await p.request('POST', '/api/v1/servers', {
      token: user.token,
      body: { name: 'Local server', nodeId: local.id, blueprintId, memory: 64, cpu: 10, disk: 128 },
    });
    expectStatus(created, 201, 'create server on the local node');
    const id = created.body.data.id as string;
    const until = Date.now() + 30_000;
    let status = created.body.data.status as string;
    while (status === 'installing' && Date.now() < until) {
      await sleep(200);
      status = (await p.request('GET', `/api/v1/servers/${id}`, { token: user.token })).body.data.status;
    }
    expect(status).toBe('offline');
    // its blueprint has no install script: offline again at once
    expectStatus(await p.request('POST', `/api/v1/servers/${id}/reinstall`, { token: user.token }), 200, 'reinstall on the local node');
    for (const action of ['start', 'stop', 'restart', 'kill']) {
      expectStatus(await p.request('POST', `/api/v1/servers/${id}/${action}`, { token: user.token }), 200, `${action} on the local node`);
    }
    expectStatus(await p.request('GET', `/api/v1/servers/${id}/console-token`, { token: user.token }), 200, 'console token (local node)');
    expectStatus(await p.request('DELETE', `/api/v1/servers/${id}`, { token: user.token }), 204, 'delete server on the local node');
  }, 60_000);

  test('deletes: node unreachable, force, node with servers', async () => {
    const r = await p.request('DELETE', `/api/v1/servers/${serverId}`, { token: user.token });
    expectStatus(r, 422, 'delete server (node unreachable)');
    expect(r.body.error.code).toBe('NODE_UNAVAILABLE');
    expectStatus(await p.request('DELETE', `/api/v1/servers/${serverId}?force=true`, { token: user.token }), 403, 'force by user');
    expectStatus(await p.request('DELETE', `/api/v1/servers/${serverId}?force=maybe`, { token: admin }), 422, 'bad force');
    const hosts = await p.request('DELETE', `/api/v1/nodes/${nodeId}`, { token: admin });
    expectStatus(hosts, 422, 'delete node with servers');
    expect(hosts.body.error.code).toBe('NODE_HAS_SERVERS');
    expectStatus(await p.request('DELETE', `/api/v1/servers/${serverId}?force=true`, { token: admin }), 204, 'force delete');
    expectStatus(await p.request('DELETE', `/api/v1/servers/${serverId}`, { token: admin }), 404, 'delete again');
    expectStatus(await p.request('DELETE', `/api/v1/nodes/${nodeId}`, { token: user.token }), 403, 'delete node by user');
    expectStatus(await p.request('DELETE', `/api/v1/nodes/${nodeId}`, { token: admin }), 204, 'delete node');
  });

  test('admin', async () => {
    expectStatus(await p.request('GET', '/api/v1/admin/users?limit=2', { token: admin }), 200, 'admin users');
    expectStatus(await p.request('GET', '/api/v1/admin/users?search=openapi', { token: admin }), 200, 'admin users search');
    expectStatus(await p.request('GET', '/api/v1/admin/users?page=0', { token: admin }), 422, 'admin users bad page');
    expectStatus(await p.request('GET', '/api/v1/admin/users', { token: user.token }), 403, 'admin users by user');
    expectStatus(await p.request('GET', '/api/v1/admin/stats', { token: admin }), 200, 'admin stats');
    expectStatus(await p.request('GET', '/api/v1/admin/stats'), 401, 'admin stats anonymous');
    const node = await createNode(p, admin);
    expectStatus(await p.request('POST', `/api/v1/admin/nodes/${node.id}/token`, { token: admin }), 201, 'rotate node token');
    expectStatus(await p.request('POST', '/api/v1/admin/nodes/00000000-0000-4000-8000-000000000000/token', { token: admin }), 404, 'rotate unknown node');
  });

  test('blueprint management and egg import', async () => {
    const body = { key: `openapi-${Date.now()}`, name: 'OpenAPI blueprint', startup: '/bin/sh -c {{COMMAND}}', stop: 'SIGTERM', variables: [{ key: 'COMMAND', default: 'sleep 1', rules: 'required|string|max:64' }] };
    const created = await p.request('POST', '/api/v1/admin/blueprints', { token: admin, body });
    expectStatus(created, 201, 'create blueprint');
    expectStatus(await p.request('POST', '/api/v1/admin/blueprints', { token: admin, body }), 422, 'blueprint key taken');
    expectStatus(await p.request('POST', '/api/v1/admin/blueprints', { token: user.token, body }), 403, 'create blueprint by user');
    expectStatus(await p.request('POST', '/api/v1/admin/blueprints', { token: admin, raw: '[', headers: { 'content-type': 'application/json' } }), 400, 'create blueprint malformed');
    expectStatus(await p.request('PATCH', `/api/v1/admin/blueprints/${created.body.data.id}`, { token: admin, body: { name: 'Renamed' } }), 200, 'update blueprint');
    expectStatus(await p.request('PATCH', `/api/v1/admin/blueprints/${blueprintId}`, { token: admin, body: { name: 'Renamed' } }), 422, 'update built-in blueprint');
    expectStatus(await p.request('PATCH', '/api/v1/admin/blueprints/00000000-0000-4000-8000-000000000000', { token: admin, body: {} }), 404, 'update unknown blueprint');
    const egg = MINIMAL_EGG;
    expectStatus(await p.request('POST', '/api/v1/admin/blueprints/import', { token: admin, body: egg }), 201, 'import egg');
    expectStatus(await p.request('POST', '/api/v1/admin/blueprints/import', { token: admin, body: { ...egg, meta: { version: 'PTDL_v9' } } }), 422, 'import bad egg');
    expectStatus(await p.request('POST', '/api/v1/admin/blueprints/import', { token: user.token, body: egg }), 403, 'import egg by user');
    expectStatus(await p.request('DELETE', `/api/v1/admin/blueprints/${blueprintId}`, { token: admin }), 422, 'delete built-in blueprint');
    expectStatus(await p.request('DELETE', `/api/v1/admin/blueprints/${created.body.data.id}`, { token: user.token }), 403, 'delete blueprint by user');
    expectStatus(await p.request('DELETE', `/api/v1/admin/blueprints/${created.body.data.id}`, { token: admin }), 204, 'delete blueprint');
    expectStatus(await p.request('DELETE', `/api/v1/admin/blueprints/${created.body.data.id}`), 401, 'delete blueprint anonymous');
    expectStatus(await p.request('DELETE', `/api/v1/admin/blueprints/${created.body.data.id}`, { token: admin }), 404, 'delete blueprint again');
  });

  test('accounts, by an administrator', async () => {
    const recorded = await p.newUser('Recorded');
    const U = `/api/v1/admin/users/${recorded.user.id}`;
    expectStatus(await p.request('GET', U, { token: admin }), 200, 'get user');
    expectStatus(await p.request('GET', U, { token: user.token }), 403, 'get user by user');
    expectStatus(await p.request('GET', '/api/v1/admin/users/00000000-0000-4000-8000-000000000000', { token: admin }), 404, 'get unknown user');
    expectStatus(await p.request('PATCH', U, { token: admin, body: { name: 'Renamed', role: 'user' } }), 200, 'update user');
    expectStatus(await p.request('PATCH', U, { token: admin, body: { role: 'root' } }), 422, 'update user invalid');
    expectStatus(await p.request('PATCH', U, { token: admin, raw: '{', headers: { 'content-type': 'application/json' } }), 400, 'update user malformed');
    expectStatus(await p.request('PATCH', U), 401, 'update user anonymous');
    expectStatus(await p.request('DELETE', `/api/v1/admin/users/${user.user.id}`, { token: user.token }), 403, 'delete user by user');
    expectStatus(await p.request('DELETE', U, { token: admin }), 204, 'delete user');
    expectStatus(await p.request('DELETE', U, { token: admin }), 404, 'delete user again');
  });

  test('plants', async () => {
    const id = '9223372036854775807';
    expectStatus(await p.request('POST', '/plants', { token: user.token, raw: `{"id": ${id}, "name": "Monstera", "tag": "indoor"}`, headers: { 'content-type': 'application/json' } }), 200, 'plant');
    expectStatus(await p.request('POST', '/plants', { token: user.token, body: { id: 7, name: 'Fern' } }), 200, 'plant without tag');
    expectStatus(await p.request('POST', '/plants', { token: user.token, body: { id: 7, name: 'Fern' } }), 400, 'plant id taken');
    expectStatus(await p.request('POST', '/plants', { token: user.token, body: { id: 1.5, name: '' } }), 400, 'plant invalid');
    expectStatus(await p.request('POST', '/plants', { token: user.token, raw: '{', headers: { 'content-type': 'application/json' } }), 400, 'plant malformed');
    expectStatus(await p.request('POST', '/plants', { body: { id: 8, name: 'Fern' } }), 401, 'plant anonymous');
  });

  test('sign-out', async () => {
    const session = await p.request('POST', '/api/v1/auth/signin', { body: { email: user.email, password: user.password } });
    expectStatus(await p.request('POST', '/api/v1/auth/signout', { token: session.body.data.token }), 204, 'signout');
    expectStatus(await p.request('POST', '/api/v1/auth/signout', { token: session.body.data.token }), 401, 'signout again');
  });

  test('rate limits: 429 everywhere, with Retry-After (REST and the plant store)', async () => {
    const q = limited;
    const signins = [];
    for (let i = 0; i < 3; i++) signins.push(await q.request('POST', '/api/v1/auth/signin', { body: { email: 'root@example.com', password: 'admin-password-123' } }));
    expect(signins.map((r) => r.status)).toEqual([200, 200, 429]);
    const token = signins[0]!.body.data.token as string;
    const gets = [];
    for (let i = 0; i < 3; i++) gets.push(await q.request('GET', '/api/v1/users/me', { token }));
    expect(gets.map((r) => r.status)).toEqual([200, 200, 429]);
    expectStatus(await q.request('POST', '/plants', { token, body: { id: 1, name: 'Fern' } }), 429, 'plants over the limit');
    expectStatus(await q.request('GET', '/api/v1/openapi.json', { token }), 429, 'openapi.json over the limit (general bucket)');
    const stats = [];
    for (let i = 0; i < 3; i++) stats.push(await q.request('GET', '/api/v1/admin/stats', { token }));
    expect(stats.map((r) => r.status)).toEqual([200, 200, 429]);
  });
});

test('every recorded response matches the document', () => {
  const all = [...p.recorded, ...limited.recorded];
  expect(all.length).toBeGreaterThan(80);
  const problems = all.flatMap((x) => checker.check(x));
  expect(problems).toEqual([]);

  // rate-limit headers on every response, Retry-After on every 429
  for (const x of all) {
    const missing = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', ...(x.status === 429 ? ['retry-after'] : [])].filter((h) => !(h in x.headers));
    expect([`${x.method} ${x.path} → ${x.status}`, missing]).toEqual([`${x.method} ${x.path} → ${x.status}`, []]);
  }

  // the error codes match their statuses
  const STATUS_OF: Record<string, number> = {
    BAD_REQUEST: 400,
    UNAUTHORIZED: 401,
    FORBIDDEN: 403,
    NOT_FOUND: 404,
    RATE_LIMITED: 429,
    INTERNAL_ERROR: 500,
  };
  for (const x of all.filter((e) => e.status >= 400 && !e.path.startsWith('/plants'))) {
    const code = (x.body as any).error.code as string;
    expect([`${x.method} ${x.path}`, code, x.status]).toEqual([`${x.method} ${x.path}`, code, STATUS_OF[code] ?? 422]);
  }

  // coverage: every operation was called, and got its success status at least once
  const seen = new Map<string, Set<number>>();
  for (const x of all) {
    const op = checker.find(x.method, x.path);
    if (!op) continue;
    const key = `${op.method} ${op.template}`;
    if (!seen.has(key)) seen.set(key, new Set());
    seen.get(key)!.add(x.status);
  }
  const notCovered = checker.ops
    .filter((o) => {
      const success = Number(Object.keys(o.op.responses).find((s) => s < '300'));
      return !seen.get(`${o.method} ${o.template}`)?.has(success);
    })
    .map((o) => `${o.method} ${o.template}`);
  expect(notCovered).toEqual([]);
  const errorStatuses = new Set(all.map((x) => x.status).filter((s) => s >= 400));
  expect([...errorStatuses].sort()).toEqual([400, 401, 403, 404, 422, 429]);
});
