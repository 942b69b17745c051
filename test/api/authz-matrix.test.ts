/**
 * The authorization matrix: every route of the REST router (/api/v1), called as anonymous, as a user
 * who owns nothing, as the owner of the resource and as an admin, with the expected status of each.
 *
 * The first test walks the Express router stack (src/rest/route-list.ts): a route that exists in the
 * router without a row here makes this file FAIL, so new routes must be added to the table.
 *
 * Routes that reach a node agent (power, console-token, node stats) run against the local agent; for
 * the owner and the admin they accept 422 too (NODE_UNAVAILABLE / INVALID_STATE) because the result
 * depends on the agent, not on authorization. Another user's server is a 404, never a 403.
 */
import { randomBytes } from 'node:crypto';
import { listRoutes } from '../../src/rest/route-list.js';
import { blueprintsByKey, createNode } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { MINIMAL_EGG } from '../support/eggs.js';
import { until } from '../support/wait.js';

type Who = 'anonymous' | 'stranger' | 'owner' | 'admin';
const WHO: Who[] = ['anonymous', 'stranger', 'owner', 'admin'];
type Expect = number | number[];

interface Call {
  /** value for `:id` */
  id?: string;
  body?: unknown;
  /** override the caller's credential (e.g. a fresh session for sign-out) */
  token?: string;
  /** value for `:backupId` */
  backupId?: string;
  /** value for `:userId` */
  userId?: string;
  /** value for `:scheduleId` */
  scheduleId?: string;
  /** query string (without `?`) */
  query?: string;
  /** a raw body (sent as application/octet-stream) */
  raw?: string;
}

interface Row {
  method: string;
  /** the route as Express lists it, below /api/v1 */
  route: string;
  expect: [anonymous: Expect, stranger: Expect, owner: Expect, admin: Expect];
  /** builds the request for one caller (fresh resources for destructive routes) */
  call?: (who: Who) => Promise<Call> | Call;
  /** the route is not in the router yet (rows written ahead of the code); the test will not fail on it */
  pending?: boolean;
}

let p: TestPlatform;
const tokens: Record<Who, string | undefined> = { anonymous: undefined, stranger: undefined, owner: undefined, admin: undefined };
const creds: Record<string, { email: string; password: string }> = {};
let localNodeId: string;
let otherNodeId: string;
let blueprintId: string;
let serverId: string;
let n = 0;

const uniq = () => `${Date.now()}-${++n}-${randomBytes(2).toString('hex')}`;

async function signin(who: 'stranger' | 'owner' | 'admin'): Promise<string> {
  const r = await p.request('POST', '/api/v1/auth/signin', { body: creds[who] });
  if (r.status !== 200) throw new Error(`signin failed: ${r.text}`);
  return r.body.data.token;
}

async function newServer(): Promise<string> {
  const r = await p.request('POST', '/api/v1/servers', {
    token: tokens.owner,
    body: { name: `matrix ${uniq()}`, nodeId: localNodeId, blueprintId, memory: 64, cpu: 10, disk: 128 },
  });
  if (r.status !== 201) throw new Error(`server create failed: ${r.status} ${r.text}`);
  return r.body.data.id;
}

const AGENT: Expect = [200, 422]; // owner/admin on routes that depend on the agent
/** A file operation past authorization: done, or refused by the files themselves (missing, exists) or the node. */
const FILES: number[] = [200, 201, 204, 404, 422];

const ROWS: Row[] = [
  // --- auth
  { method: 'POST', route: '/auth/signup', expect: [201, 201, 201, 201], call: () => ({ body: { email: `m${uniq()}@example.com`, password: 'password-123', name: 'M' } }) },
  { method: 'POST', route: '/auth/signin', expect: [200, 200, 200, 200], call: () => ({ body: creds.stranger }) },
  {
    method: 'POST',
    route: '/auth/signout',
    expect: [401, 204, 204, 204],
    call: async (who) => (who === 'anonymous' ? {} : { token: await signin(who) }), // a fresh session: sign-out ends it
  },
  { method: 'GET', route: '/auth/session', expect: [401, 200, 200, 200] },
  // --- the signed-in user
  { method: 'GET', route: '/users/me', expect: [401, 200, 200, 200] },
  { method: 'PATCH', route: '/users/me', expect: [401, 200, 200, 200], call: () => ({ body: { name: 'Renamed' } }) },
  { method: 'GET', route: '/users/me/nodes', expect: [401, 200, 200, 200] },
  { method: 'GET', route: '/users/me/api-tokens', expect: [401, 200, 200, 200] },
  { method: 'POST', route: '/users/me/api-tokens', expect: [401, 201, 201, 201], call: () => ({ body: { name: 'matrix' } }) },
  {
    method: 'DELETE',
    route: '/users/me/api-tokens/:id',
    expect: [401, 404, 204, 404], // always the owner's token: only its user may revoke it
    call: async () => {
      const r = await p.request('POST', '/api/v1/users/me/api-tokens', { token: tokens.owner, body: { name: 'to revoke' } });
      return { id: r.body.data.id };
    },
  },
  // --- servers (owner = the owner of the server)
  { method: 'GET', route: '/servers', expect: [401, 200, 200, 200] },
  {
    method: 'POST',
    route: '/servers',
    expect: [401, 201, 201, 201],
    call: () => ({ body: { name: `s ${uniq()}`, nodeId: otherNodeId, blueprintId, memory: 64, cpu: 10, disk: 128 } }),
  },
  { method: 'GET', route: '/servers/:id', expect: [401, 404, 200, 200] },
  { method: 'PATCH', route: '/servers/:id', expect: [401, 404, 200, 200], call: () => ({ body: { description: 'changed' } }) },
  { method: 'DELETE', route: '/servers/:id', expect: [401, 404, 204, 204], call: async () => ({ id: await newServer() }) },
  // a fresh server (offline: its blueprint has no install script), so that the others' calls find the shared one as they left it
  { method: 'POST', route: '/servers/:id/reinstall', expect: [401, 404, 200, 200], call: async () => ({ id: await newServer() }) },
  // Power and console routes (the lead's src/rest/power.routes.ts): they reach the node agent.
  { method: 'POST', route: '/servers/:id/start', expect: [401, 404, AGENT, AGENT] },
  { method: 'POST', route: '/servers/:id/stop', expect: [401, 404, AGENT, AGENT] },
  { method: 'POST', route: '/servers/:id/restart', expect: [401, 404, AGENT, AGENT] },
  { method: 'POST', route: '/servers/:id/kill', expect: [401, 404, AGENT, AGENT] },
  { method: 'GET', route: '/servers/:id/console-token', expect: [401, 404, AGENT, AGENT] },
  // --- startup variables (the permission matrix of subusers: test/api/permission-matrix.test.ts)
  { method: 'GET', route: '/servers/:id/startup', expect: [401, 404, 200, 200] },
  { method: 'PUT', route: '/servers/:id/startup', expect: [401, 404, 200, 200], call: () => ({ body: { variables: { COMMAND: `echo ${uniq()}` } } }) },
  // --- nodes (admin only)
  { method: 'GET', route: '/nodes', expect: [401, 403, 403, 200] },
  {
    method: 'POST',
    route: '/nodes',
    expect: [401, 403, 403, 201],
    call: () => ({ body: { name: `n ${uniq()}`, fqdn: '127.0.0.1', port: 1, memory: 1024, disk: 1024 } }),
  },
  { method: 'GET', route: '/nodes/:id', expect: [401, 403, 403, 200], call: () => ({ id: otherNodeId }) },
  { method: 'PATCH', route: '/nodes/:id', expect: [401, 403, 403, 200], call: () => ({ id: otherNodeId, body: { memory: 1_000_001 } }) },
  {
    method: 'DELETE',
    route: '/nodes/:id',
    expect: [401, 403, 403, 204],
    call: async () => {
      const adminToken = tokens.admin!;
      return { id: (await createNode(p, adminToken)).id };
    },
  },
  // Node statistics (the lead's power.routes.ts): 200 with online:false when the agent is unreachable.
  { method: 'GET', route: '/nodes/:id/stats', expect: [401, 403, 403, 200], call: () => ({ id: localNodeId }) },
  // --- blueprints (every signed-in user)
  { method: 'GET', route: '/blueprints', expect: [401, 200, 200, 200] },
  { method: 'GET', route: '/blueprints/:id', expect: [401, 200, 200, 200], call: () => ({ id: blueprintId }) },
  // --- admin
  { method: 'GET', route: '/admin/users', expect: [401, 403, 403, 200] },
  // fresh accounts: the admin's call changes or deletes them
  { method: 'GET', route: '/admin/users/:id', expect: [401, 403, 403, 200], call: async () => ({ id: (await p.newUser('looked up')).user.id }) },
  { method: 'PATCH', route: '/admin/users/:id', expect: [401, 403, 403, 200], call: async () => ({ id: (await p.newUser('renamed')).user.id, body: { name: 'Renamed' } }) },
  { method: 'DELETE', route: '/admin/users/:id', expect: [401, 403, 403, 204], call: async () => ({ id: (await p.newUser('deleted')).user.id }) },
  { method: 'GET', route: '/admin/stats', expect: [401, 403, 403, 200] },
  // never the local node: a new token would cut off its running agent
  { method: 'POST', route: '/admin/nodes/:id/token', expect: [401, 403, 403, 201], call: () => ({ id: otherNodeId }) },
  // --- blueprint management (fresh blueprints: the admin's call changes or deletes them)
  { method: 'POST', route: '/admin/blueprints', expect: [401, 403, 403, 201], call: () => ({ body: newBlueprintBody() }) },
  { method: 'POST', route: '/admin/blueprints/import', expect: [401, 403, 403, 201], call: () => ({ body: PAPER_EGG }) },
  { method: 'PATCH', route: '/admin/blueprints/:id', expect: [401, 403, 403, 200], call: async () => ({ id: await newBlueprint(), body: { name: 'Renamed' } }) },
  { method: 'DELETE', route: '/admin/blueprints/:id', expect: [401, 403, 403, 204], call: async () => ({ id: await newBlueprint() }) },
  // --- shared access (the permission matrix of subusers: test/api/permission-matrix.test.ts)
  { method: 'GET', route: '/permissions', expect: [401, 200, 200, 200] },
  { method: 'GET', route: '/servers/:id/subusers', expect: [401, 404, 200, 200] },
  { method: 'POST', route: '/servers/:id/subusers', expect: [401, 404, 201, 201], call: async () => ({ body: { email: (await p.newUser('invited')).email, permissions: [] } }) },
  { method: 'PATCH', route: '/servers/:id/subusers/:userId', expect: [401, 404, 200, 200], call: async () => ({ userId: await newSubuser(), body: { permissions: ['websocket.connect'] } }) },
  { method: 'DELETE', route: '/servers/:id/subusers/:userId', expect: [401, 404, 204, 204], call: async () => ({ userId: await newSubuser() }) },
  // --- schedules (the permission matrix of subusers: test/api/permission-matrix.test.ts)
  { method: 'GET', route: '/servers/:id/schedules', expect: [401, 404, 200, 200] },
  { method: 'POST', route: '/servers/:id/schedules', expect: [401, 404, 201, 201], call: () => ({ body: SCHEDULE }) },
  { method: 'GET', route: '/servers/:id/schedules/:scheduleId', expect: [401, 404, 200, 200], call: async () => ({ scheduleId: await newSchedule() }) },
  { method: 'PATCH', route: '/servers/:id/schedules/:scheduleId', expect: [401, 404, 200, 200], call: async () => ({ scheduleId: await newSchedule(), body: { enabled: false } }) },
  { method: 'DELETE', route: '/servers/:id/schedules/:scheduleId', expect: [401, 404, 204, 204], call: async () => ({ scheduleId: await newSchedule() }) },
  { method: 'POST', route: '/servers/:id/schedules/:scheduleId/run', expect: [401, 404, 201, 201], call: async () => ({ scheduleId: await newSchedule() }) },
  { method: 'GET', route: '/servers/:id/schedules/:scheduleId/runs', expect: [401, 404, 200, 200], call: async () => ({ scheduleId: await newSchedule() }) },
  // --- files (owner and admin: past authorization; the answer depends on the files, and the server may be installing)
  { method: 'GET', route: '/servers/:id/files', expect: [401, 404, FILES, FILES], call: () => ({ query: 'path=/' }) },
  { method: 'GET', route: '/servers/:id/files/search', expect: [401, 404, FILES, FILES], call: () => ({ query: 'path=/&query=a' }) },
  { method: 'GET', route: '/servers/:id/files/contents', expect: [401, 404, FILES, FILES], call: () => ({ query: 'path=/missing.txt' }) },
  { method: 'PUT', route: '/servers/:id/files/contents', expect: [401, 404, FILES, FILES], call: () => ({ query: `path=/m-${uniq()}.txt`, raw: 'hello' }) },
  { method: 'GET', route: '/servers/:id/files/download', expect: [401, 404, FILES, FILES], call: () => ({ query: 'path=/missing.txt' }) },
  { method: 'POST', route: '/servers/:id/files/upload', expect: [401, 404, [400, ...FILES], [400, ...FILES]], call: () => ({ query: 'path=/' }) },
  { method: 'POST', route: '/servers/:id/files/rename', expect: [401, 404, FILES, FILES], call: () => ({ body: { from: '/missing', to: `/r-${uniq()}` } }) },
  { method: 'POST', route: '/servers/:id/files/copy', expect: [401, 404, FILES, FILES], call: () => ({ body: { path: '/missing' } }) },
  { method: 'POST', route: '/servers/:id/files/delete', expect: [401, 404, FILES, FILES], call: () => ({ body: { paths: ['/missing'] } }) },
  { method: 'POST', route: '/servers/:id/files/directory', expect: [401, 404, FILES, FILES], call: () => ({ body: { path: `/d-${uniq()}` } }) },
  { method: 'POST', route: '/servers/:id/files/chmod', expect: [401, 404, FILES, FILES], call: () => ({ body: { path: '/missing', mode: '644' } }) },
  { method: 'POST', route: '/servers/:id/files/compress', expect: [401, 404, FILES, FILES], call: () => ({ body: { paths: ['/missing'] } }) },
  { method: 'POST', route: '/servers/:id/files/decompress', expect: [401, 404, FILES, FILES], call: () => ({ body: { path: '/missing.zip' } }) },
  { method: 'GET', route: '/servers/:id/sftp', expect: [401, 404, 200, 200] },
  // --- backups (owner and admin: past authorization; the answer depends on the backup's state)
  { method: 'GET', route: '/servers/:id/backups', expect: [401, 404, 200, 200] },
  { method: 'POST', route: '/servers/:id/backups', expect: [401, 404, [201, 422], [201, 422]], call: () => ({ body: {} }) },
  { method: 'GET', route: '/servers/:id/backups/:backupId', expect: [401, 404, 200, 200], call: async () => ({ backupId: await newBackup() }) },
  { method: 'GET', route: '/servers/:id/backups/:backupId/download', expect: [401, 404, [200, 422], [200, 422]], call: async () => ({ backupId: await newBackup() }) },
  { method: 'POST', route: '/servers/:id/backups/:backupId/restore', expect: [401, 404, [200, 422], [200, 422]], call: async () => ({ backupId: await newBackup(), body: {} }) },
  { method: 'POST', route: '/servers/:id/backups/:backupId/lock', expect: [401, 404, 200, 200], call: async () => ({ backupId: await newBackup() }) },
  { method: 'POST', route: '/servers/:id/backups/:backupId/unlock', expect: [401, 404, 200, 200], call: async () => ({ backupId: await newBackup() }) },
  { method: 'DELETE', route: '/servers/:id/backups/:backupId', expect: [401, 404, [204, 422], [204, 422]], call: async () => ({ backupId: await newBackup() }) },
  // --- the activity log
  { method: 'GET', route: '/servers/:id/activity', expect: [401, 404, 200, 200] },
  { method: 'GET', route: '/users/me/activity', expect: [401, 200, 200, 200] },
  { method: 'GET', route: '/admin/activity', expect: [401, 403, 403, 200] },
  // --- the OpenAPI document (src/openapi): public
  { method: 'GET', route: '/openapi.json', expect: [200, 200, 200, 200] },
];

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 2 });
  const admin = await p.admin();
  tokens.admin = admin.token;
  creds.admin = { email: 'root@example.com', password: 'admin-password-123' };
  for (const who of ['stranger', 'owner'] as const) {
    const u = await p.newUser(who);
    tokens[who] = u.token;
    creds[who] = { email: u.email, password: u.password };
  }
  const nodes = await p.request('GET', '/api/v1/nodes?limit=100', { token: admin.token });
  localNodeId = nodes.body.data.find((x: any) => x.name === 'local').id;
  otherNodeId = (await createNode(p, admin.token, { memory: 1_000_000, disk: 10_000_000 })).id;
  blueprintId = (await blueprintsByKey(p, admin.token))['shell-command'].id;
  serverId = await newServer();
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

/** A subuser of the matrix's server (with no keys), added by its owner; their user id. */
/**
 * A backup of the server (its outcome does not matter here). The restore row's earlier call may still
 * be putting a backup back, and a server being restored takes no backup (422 INVALID_STATE): asked
 * again until that restore is done.
 */
async function newBackup(): Promise<string> {
  // (past BACKUP_LIMIT_DEFAULT: an administrator's to set)
  await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: tokens.admin, body: { backupLimit: 1000 } });
  const r = await until(async () => {
    const r = await p.request('POST', `/api/v1/servers/${serverId}/backups`, { token: tokens.owner, body: {} });
    if (r.status === 201) return r;
    if (r.status === 422 && /restore of this server is under way/.test(r.body?.error?.message ?? '')) return null;
    throw new Error(`backup failed: ${r.text}`);
  }, 20_000, 'a backup (a restore of the server under way)');
  return r.body.data.id;
}

async function newSubuser(): Promise<string> {
  const u = await p.newUser('subuser');
  const r = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: tokens.owner, body: { email: u.email, permissions: [] } });
  if (r.status !== 201) throw new Error(`subuser failed: ${r.text}`);
  return u.user.id;
}

const newBlueprintBody = () => ({ key: `matrix-${uniq()}`.toLowerCase(), name: 'Matrix blueprint', startup: '/bin/true', stop: 'SIGTERM' });
const PAPER_EGG = MINIMAL_EGG;

/** A blueprint made by the admin; its id. */
async function newBlueprint(): Promise<string> {
  const r = await p.request('POST', '/api/v1/admin/blueprints', { token: tokens.admin, body: newBlueprintBody() });
  if (r.status !== 201) throw new Error(`blueprint failed: ${r.text}`);
  return r.body.data.id;
}

const SCHEDULE = { name: 'matrix', cron: '0 4 * * *', tasks: [{ action: 'backup' }] };

/** A schedule of the matrix's server, made by its owner; its id. */
async function newSchedule(): Promise<string> {
  const r = await p.request('POST', `/api/v1/servers/${serverId}/schedules`, { token: tokens.owner, body: SCHEDULE });
  if (r.status !== 201) throw new Error(`schedule failed: ${r.text}`);
  return r.body.data.id;
}

const key = (method: string, route: string) => `${method} ${route}`;

test('every route of the REST router has a row in the matrix (and no row is stale)', () => {
  const routes = listRoutes(p.app, '/api/v1').map((r) => key(r.method, r.path.slice('/api/v1'.length)));
  expect(routes.length).toBeGreaterThan(20);
  const rows = new Set(ROWS.map((r) => key(r.method, r.route)));
  const missing = routes.filter((r) => !rows.has(r));
  expect(missing).toEqual([]); // add a row to ROWS for each of these
  const stale = ROWS.filter((r) => !r.pending && !routes.includes(key(r.method, r.route))).map((r) => key(r.method, r.route));
  expect(stale).toEqual([]); // a row for a route that is gone: remove it, or mark it pending
  expect(ROWS.length).toBe(rows.size); // no duplicate rows
});

describe.each(ROWS.map((r) => [key(r.method, r.route), r] as const))('%s', (_name, row) => {
  test.each(WHO.map((who, i) => [who, row.expect[i]!] as const))('as %s → %p', async (who, expected) => {
    const call = (await row.call?.(who)) ?? {};
    const id = call.id ?? serverId;
    const path = '/api/v1' + row.route.replace(':id', id).replace(':userId', call.userId ?? '').replace(':backupId', call.backupId ?? '').replace(':scheduleId', call.scheduleId ?? '') + (call.query ? `?${call.query}` : '');
    const token = 'token' in call ? call.token : tokens[who];
    const r = await p.request(row.method, path, call.raw !== undefined ? { token, raw: call.raw, headers: { 'content-type': 'application/octet-stream' } } : { token, body: call.body ?? (['POST', 'PATCH'].includes(row.method) ? {} : undefined) });
    const allowed = Array.isArray(expected) ? expected : [expected];
    if (!allowed.includes(r.status)) throw new Error(`${row.method} ${path} as ${who}: expected ${allowed.join('|')}, got ${r.status} ${r.text.slice(0, 300)}`);
    if (r.status >= 400) {
      expect(r.body).toEqual({ error: { code: expect.any(String), message: expect.any(String), details: expect.any(Object) } });
      if (r.status === 422) expect(['NODE_UNAVAILABLE', 'INVALID_STATE', 'ALREADY_EXISTS']).toContain(r.body.error.code);
    }
  });
});
