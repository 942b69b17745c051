/**
 * The permission matrix of every server-scoped operation, REST and GraphQL alike: a subuser holding
 * exactly one key (each key of the catalogue in turn) and a subuser holding none (for the operations
 * on a schedule whose task makes backups, each also holds the backup keys that task needs). An operation whose
 * key the subuser holds gets past authorization (its answer is whatever the operation gives: 2xx, or
 * 422 from an unreachable node); every other subuser gets 403; a stranger gets 404. Operations kept to
 * the owner (delete, resources) are 403 for every subuser. The expectations are written here, apart
 * from the code, so that the code cannot agree with itself by mistake.
 */
import { randomBytes } from 'node:crypto';
import { blueprintsByKey, createNode } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { gql } from '../graphql/gql.js';
import { gqlWsClient, subscribe } from '../support/gql-ws.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let owner: { token: string; user: any };
let stranger: { token: string };
let serverId: string;
let keys: string[];
let backupId: string;
/** key → a subuser holding only that key; '' → a subuser holding none */
const holders = new Map<string, { token: string; user: any; email: string }>();
/** The keys a schedule's backup task needs of whoever makes or runs the schedule. */
const BACKUP_TASK_KEYS = ['backup.create', 'backup.delete'] as const;
/** key → a subuser holding that key and BACKUP_TASK_KEYS; '' → one holding BACKUP_TASK_KEYS alone */
const holdersWithBackupKeys = new Map<string, { token: string; user: any; email: string }>();

type Outcome = 'allowed' | 'forbidden' | 'hidden';
interface Op {
  name: string;
  /** the key (or any of the keys) that lets a subuser through; 'owner' for the owner's alone */
  key: string | string[];
  rest: (token: string) => Promise<{ status: number; body: any }>;
  /** absent: REST only (uploads and downloads) */
  graphql?: (token: string) => Promise<{ status: number; body: any }>;
  /** every holder also has BACKUP_TASK_KEYS for this operation (its schedule's backup task needs them) */
  withBackupTaskKeys?: true;
}

const uniq = () => randomBytes(4).toString('hex');

async function freshAccount(): Promise<{ email: string; user: any }> {
  const u = await p.newUser(`target ${uniq()}`);
  return { email: u.email, user: u.user };
}

/** A subuser of the server with no keys, to be changed or removed by the operation under test. */
async function freshSubuser(): Promise<string> {
  const t = await freshAccount();
  const r = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: t.email, permissions: [] } });
  if (r.status !== 201) throw new Error(r.text);
  return t.user.id;
}

const SCHEDULE = { name: 'matrix', cron: '0 4 * * *', tasks: [{ action: 'backup' }] };

/** A schedule of the server, made by its owner, for the operation under test to read, change or delete. */
async function freshSchedule(): Promise<string> {
  await p.orm.em.fork().getConnection().execute('delete from schedules where server_id = ?', [serverId]); // a server holds at most 50
  const r = await p.request('POST', `/api/v1/servers/${serverId}/schedules`, { token: owner.token, body: SCHEDULE });
  if (r.status !== 201) throw new Error(r.text);
  return r.body.data.id;
}

/** How many renames and resizes the matrix has asked for (each asks for a value the server does not have yet). */
let renames = 0;
const rest = (method: string, path: string, body?: (() => Promise<unknown>) | unknown) => async (token: string) => {
  const b = typeof body === 'function' ? await (body as () => Promise<unknown>)() : body;
  return p.request(method, `/api/v1${path.replace(':id', serverId)}`, { token, ...(b !== undefined ? { body: b } : {}) });
};
const graph = (query: string, vars: (() => Promise<Record<string, unknown>>) | Record<string, unknown> = {}) => async (token: string) => {
  const v = typeof vars === 'function' ? await vars() : vars;
  return gql(p, query, { id: serverId, ...v }, { token });
};

function outcomeOf(r: { status: number; body: any }, protocol: 'rest' | 'graphql'): Outcome {
  if (protocol === 'rest') return r.status === 403 ? 'forbidden' : r.status === 404 ? 'hidden' : 'allowed';
  const code = r.body.errors?.[0]?.extensions?.code;
  return code === 'FORBIDDEN' ? 'forbidden' : code === 'NOT_FOUND' ? 'hidden' : 'allowed';
}

const OPS: Op[] = [
  { name: 'get server', key: '', rest: rest('GET', '/servers/:id'), graphql: graph('query($id: ID!) { server(id: $id) { id permissions } }') },
  // a new value each time: a PATCH that changes nothing needs no key (src/services/servers.service.ts withoutUnchanged)
  { name: 'rename', key: 'settings.rename', rest: rest('PATCH', '/servers/:id', async () => ({ name: `renamed ${++renames}` })), graphql: graph('mutation($id: ID!, $d: String) { updateServer(id: $id, input: { description: $d }) { id } }', async () => ({ d: `described ${++renames}` })) },
  { name: 'resize', key: 'owner', rest: rest('PATCH', '/servers/:id', async () => ({ memory: 64 + ++renames })), graphql: graph('mutation($id: ID!, $m: Int) { updateServer(id: $id, input: { memory: $m }) { id } }', async () => ({ m: 64 + ++renames })) },
  { name: 'start', key: 'control.start', rest: rest('POST', '/servers/:id/start'), graphql: graph('mutation($id: ID!) { startServer(id: $id) { id } }') },
  { name: 'stop', key: 'control.stop', rest: rest('POST', '/servers/:id/stop'), graphql: graph('mutation($id: ID!) { stopServer(id: $id) { id } }') },
  { name: 'restart', key: 'control.restart', rest: rest('POST', '/servers/:id/restart'), graphql: graph('mutation($id: ID!) { restartServer(id: $id) { id } }') },
  { name: 'kill', key: 'control.stop', rest: rest('POST', '/servers/:id/kill'), graphql: graph('mutation($id: ID!) { killServer(id: $id) { id } }') },
  { name: 'console token', key: 'websocket.connect', rest: rest('GET', '/servers/:id/console-token'), graphql: graph('query($id: ID!) { consoleToken(serverId: $id) { token } }') },
  { name: 'list subusers', key: 'user.read', rest: rest('GET', '/servers/:id/subusers'), graphql: graph('query($id: ID!) { subusers(serverId: $id) { total } }') },
  {
    name: 'add subuser',
    key: 'user.create',
    rest: rest('POST', '/servers/:id/subusers', async () => ({ email: (await freshAccount()).email, permissions: [] })),
    graphql: graph('mutation($id: ID!, $email: String!) { createSubuser(serverId: $id, input: { email: $email, permissions: [] }) { userId } }', async () => ({ email: (await freshAccount()).email })),
  },
  {
    name: 'change subuser',
    key: 'user.update',
    rest: async (token) => rest('PATCH', `/servers/:id/subusers/${await freshSubuser()}`, { permissions: [] })(token),
    graphql: graph('mutation($id: ID!, $u: ID!) { updateSubuser(serverId: $id, userId: $u, input: { permissions: [] }) { userId } }', async () => ({ u: await freshSubuser() })),
  },
  {
    name: 'remove subuser',
    key: 'user.delete',
    rest: async (token) => rest('DELETE', `/servers/:id/subusers/${await freshSubuser()}`)(token),
    graphql: graph('mutation($id: ID!, $u: ID!) { deleteSubuser(serverId: $id, userId: $u) }', async () => ({ u: await freshSubuser() })),
  },
  { name: 'activity', key: 'activity.read', rest: rest('GET', '/servers/:id/activity'), graphql: graph('query($id: ID!) { serverActivity(serverId: $id) { total } }') },
  // schedules
  { name: 'list schedules', key: 'schedule.read', rest: rest('GET', '/servers/:id/schedules'), graphql: graph('query($id: ID!) { schedules(serverId: $id) { total } }') },
  {
    name: 'create a schedule',
    key: 'schedule.create',
    withBackupTaskKeys: true,
    rest: rest('POST', '/servers/:id/schedules', SCHEDULE),
    graphql: graph('mutation($id: ID!) { createSchedule(serverId: $id, input: { name: "m", cron: "0 4 * * *", tasks: [{ action: "backup" }] }) { id } }'),
  },
  {
    name: 'get a schedule',
    key: 'schedule.read',
    rest: async (token) => rest('GET', `/servers/:id/schedules/${await freshSchedule()}`)(token),
    graphql: graph('query($id: ID!, $s: ID!) { schedule(serverId: $id, scheduleId: $s) { id } }', async () => ({ s: await freshSchedule() })),
  },
  {
    name: 'change a schedule',
    key: 'schedule.update',
    withBackupTaskKeys: true,
    rest: async (token) => rest('PATCH', `/servers/:id/schedules/${await freshSchedule()}`, { enabled: false })(token),
    graphql: graph('mutation($id: ID!, $s: ID!) { updateSchedule(serverId: $id, scheduleId: $s, input: { enabled: false }) { id } }', async () => ({ s: await freshSchedule() })),
  },
  {
    name: 'delete a schedule',
    key: 'schedule.delete',
    rest: async (token) => rest('DELETE', `/servers/:id/schedules/${await freshSchedule()}`)(token),
    graphql: graph('mutation($id: ID!, $s: ID!) { deleteSchedule(serverId: $id, scheduleId: $s) }', async () => ({ s: await freshSchedule() })),
  },
  {
    name: 'run a schedule now',
    key: 'schedule.update',
    withBackupTaskKeys: true,
    rest: async (token) => rest('POST', `/servers/:id/schedules/${await freshSchedule()}/run`)(token),
    graphql: graph('mutation($id: ID!, $s: ID!) { runSchedule(serverId: $id, scheduleId: $s) { id } }', async () => ({ s: await freshSchedule() })),
  },
  {
    name: 'schedule runs',
    key: 'schedule.read',
    rest: async (token) => rest('GET', `/servers/:id/schedules/${await freshSchedule()}/runs`)(token),
    graphql: graph('query($id: ID!, $s: ID!) { scheduleRuns(serverId: $id, scheduleId: $s) { total } }', async () => ({ s: await freshSchedule() })),
  },
  // files: the node is unreachable, so an operation let through answers 422 NODE_UNAVAILABLE
  { name: 'list files', key: 'file.read', rest: rest('GET', '/servers/:id/files?path=/'), graphql: graph('query($id: ID!) { files(serverId: $id, path: "/") { total } }') },
  // backups: the node is unreachable, so the one backup (made in beforeAll) failed; an operation let through answers 200 or 422
  { name: 'list backups', key: 'backup.read', rest: rest('GET', '/servers/:id/backups'), graphql: graph('query($id: ID!) { backups(serverId: $id) { total } }') },
  { name: 'create a backup', key: 'backup.create', rest: rest('POST', '/servers/:id/backups', {}), graphql: graph('mutation($id: ID!) { createBackup(serverId: $id) { id } }') },
  { name: 'get a backup', key: 'backup.read', rest: (t) => rest('GET', `/servers/:id/backups/${backupId}`)(t), graphql: (t) => graph('query($id: ID!, $b: ID!) { backup(serverId: $id, backupId: $b) { id } }', { b: backupId })(t) },
  { name: 'download a backup', key: 'backup.download', rest: (t) => rest('GET', `/servers/:id/backups/${backupId}/download`)(t) },
  { name: 'restore a backup', key: 'backup.restore', rest: (t) => rest('POST', `/servers/:id/backups/${backupId}/restore`, {})(t), graphql: (t) => graph('mutation($id: ID!, $b: ID!) { restoreBackup(serverId: $id, backupId: $b) { id } }', { b: backupId })(t) },
  { name: 'lock a backup', key: 'backup.delete', rest: (t) => rest('POST', `/servers/:id/backups/${backupId}/lock`)(t), graphql: (t) => graph('mutation($id: ID!, $b: ID!) { lockBackup(serverId: $id, backupId: $b) { id } }', { b: backupId })(t) },
  { name: 'unlock a backup', key: 'backup.delete', rest: (t) => rest('POST', `/servers/:id/backups/${backupId}/unlock`)(t), graphql: (t) => graph('mutation($id: ID!, $b: ID!) { unlockBackup(serverId: $id, backupId: $b) { id } }', { b: backupId })(t) },
  { name: 'delete a backup', key: 'backup.delete', rest: (t) => rest('DELETE', `/servers/:id/backups/${backupId}`)(t), graphql: (t) => graph('mutation($id: ID!, $b: ID!) { deleteBackup(serverId: $id, backupId: $b) }', { b: backupId })(t) },
  { name: 'SFTP details', key: 'file.sftp', rest: rest('GET', '/servers/:id/sftp'), graphql: graph('query($id: ID!) { sftpDetails(serverId: $id) { username } }') },
  { name: 'search files', key: 'file.read', rest: rest('GET', '/servers/:id/files/search?path=/&query=a'), graphql: graph('query($id: ID!) { fileSearch(serverId: $id, path: "/", query: "a") { path } }') },
  { name: 'read a file', key: 'file.read-content', rest: rest('GET', '/servers/:id/files/contents?path=/a.txt'), graphql: graph('query($id: ID!) { fileContents(serverId: $id, path: "/a.txt") { contents } }') },
  { name: 'download a file', key: 'file.read-content', rest: rest('GET', '/servers/:id/files/download?path=/a.txt') },
  {
    name: 'write a file',
    key: ['file.update', 'file.create'],
    rest: (token) => p.request('PUT', `/api/v1/servers/${serverId}/files/contents?path=/a.txt`, { token, raw: 'x', headers: { 'content-type': 'text/plain' } }),
    graphql: graph('mutation($id: ID!) { writeFile(serverId: $id, path: "/a.txt", contents: "x") { path } }'),
  },
  {
    name: 'upload',
    key: 'file.create',
    rest: (token) =>
      p.request('POST', `/api/v1/servers/${serverId}/files/upload?path=/`, { token, raw: '--b\r\nContent-Disposition: form-data; name="f"; filename="u.txt"\r\n\r\nx\r\n--b--\r\n', headers: { 'content-type': 'multipart/form-data; boundary=b' } }),
  },
  { name: 'rename a file', key: 'file.update', rest: rest('POST', '/servers/:id/files/rename', { from: '/a', to: '/b' }), graphql: graph('mutation($id: ID!) { renameFile(serverId: $id, from: "/a", to: "/b") { path } }') },
  { name: 'copy a file', key: 'file.create', rest: rest('POST', '/servers/:id/files/copy', { path: '/a' }), graphql: graph('mutation($id: ID!) { copyFile(serverId: $id, path: "/a") { path } }') },
  { name: 'delete files', key: 'file.delete', rest: rest('POST', '/servers/:id/files/delete', { paths: ['/a'] }), graphql: graph('mutation($id: ID!) { deleteFiles(serverId: $id, paths: ["/a"]) }') },
  { name: 'make a folder', key: 'file.create', rest: rest('POST', '/servers/:id/files/directory', { path: '/d' }), graphql: graph('mutation($id: ID!) { createDirectory(serverId: $id, path: "/d") { path } }') },
  { name: 'chmod', key: 'file.update', rest: rest('POST', '/servers/:id/files/chmod', { path: '/a', mode: '644' }), graphql: graph('mutation($id: ID!) { chmodFile(serverId: $id, path: "/a", mode: "644") { path } }') },
  { name: 'compress', key: 'file.archive', rest: rest('POST', '/servers/:id/files/compress', { paths: ['/a'] }), graphql: graph('mutation($id: ID!) { compressFiles(serverId: $id, paths: ["/a"]) { path } }') },
  { name: 'decompress', key: 'file.archive', rest: rest('POST', '/servers/:id/files/decompress', { path: '/a.zip' }), graphql: graph('mutation($id: ID!) { decompressFile(serverId: $id, path: "/a.zip") { path } }') },
  { name: 'startup variables', key: 'startup.read', rest: rest('GET', '/servers/:id/startup'), graphql: graph('query($id: ID!) { serverStartup(serverId: $id) { startup } }') },
  {
    name: 'change startup variables',
    key: 'startup.update',
    rest: rest('PUT', '/servers/:id/startup', { variables: { COMMAND: 'echo matrix' } }),
    graphql: graph('mutation($id: ID!) { updateServerStartup(serverId: $id, variables: { COMMAND: "echo matrix" }) { startup } }'),
  },
  // kept to the owner: refused for every subuser before the node is asked
  { name: 'reinstall', key: 'owner', rest: rest('POST', '/servers/:id/reinstall'), graphql: graph('mutation($id: ID!) { reinstallServer(id: $id) { id } }') },
  // last: deleting the server (refused for everyone but the owner, who is not run here)
  { name: 'delete server', key: 'owner', rest: rest('DELETE', '/servers/:id'), graphql: graph('mutation($id: ID!) { deleteServer(id: $id) }') },
];

beforeAll(async () => {
  p = await startTestPlatform({ rateLimits: { general: 1_000_000, auth: 1_000_000, admin: 1_000_000 } });
  const admin = await p.admin();
  owner = await p.newUser('owner');
  stranger = await p.newUser('stranger');
  const node = await createNode(p, admin.token);
  const bp = (await blueprintsByKey(p, owner.token))['shell-command'].id;
  const created = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'matrix', nodeId: node.id, blueprintId: bp, memory: 64, cpu: 10, disk: 128 } });
  serverId = created.body.data.id;
  // a backup record (failed: the node cannot be reached) for the operations on one backup
  await p.request('POST', `/api/v1/servers/${serverId}/backups`, { token: owner.token, body: {} });
  backupId = (await p.request('GET', `/api/v1/servers/${serverId}/backups`, { token: owner.token })).body.data[0].id;
  keys = (await p.request('GET', '/api/v1/permissions', { token: owner.token })).body.data.map((k: any) => k.key);
  for (const key of ['', ...keys]) {
    const u = await p.newUser(`holder ${key || 'none'}`);
    const r = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: u.email, permissions: key ? [key] : [] } });
    if (r.status !== 201) throw new Error(r.text);
    holders.set(key, u);
    const w = await p.newUser(`holder ${key || 'none'} with the backup keys`);
    const withKeys = [...new Set([...(key ? [key] : []), ...BACKUP_TASK_KEYS])];
    const rw = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: w.email, permissions: withKeys } });
    if (rw.status !== 201) throw new Error(rw.text);
    holdersWithBackupKeys.set(key, w);
  }
}, 120_000);

afterAll(async () => {
  await p?.stop();
});

for (const protocol of ['rest', 'graphql'] as const) {
  test(`${protocol}: every server operation lets through exactly the holders of its key`, async () => {
    const wrong: string[] = [];
    for (const op of OPS) {
      const call = op[protocol];
      if (!call) continue;
      const allowed = typeof op.key === 'string' ? [op.key] : op.key;
      for (const [key, holder] of op.withBackupTaskKeys ? holdersWithBackupKeys : holders) {
        const expected: Outcome = op.key === '' || allowed.includes(key) ? 'allowed' : 'forbidden';
        const got = outcomeOf(await call(holder.token), protocol);
        if (got !== expected) wrong.push(`${op.name} as holder of "${key || 'no key'}": expected ${expected}, got ${got}`);
      }
      const asStranger = outcomeOf(await call(stranger.token), protocol);
      if (asStranger !== 'hidden') wrong.push(`${op.name} as a stranger: expected hidden, got ${asStranger}`);
    }
    expect(wrong).toEqual([]);
  }, 120_000);
}

test('subscriptions: console and status need websocket.connect, the activity feed activity.read', async () => {
  const subs = [
    { key: 'websocket.connect', query: 'subscription($id: ID!) { consoleOutput(serverId: $id) { line } }' },
    { key: 'websocket.connect', query: 'subscription($id: ID!) { consoleBatches(serverId: $id) { skipped lines { line } } }' },
    { key: 'websocket.connect', query: 'subscription($id: ID!) { serverStatus(serverId: $id) { status } }' },
    { key: 'websocket.connect', query: 'subscription($id: ID!) { serverStats(serverId: $id) { cpu } }' },
    { key: 'activity.read', query: 'subscription($id: ID!) { serverActivity(serverId: $id) { event } }' },
  ];
  for (const { key, query } of subs) {
    for (const who of [key, '', 'control.console']) {
      const c = gqlWsClient(p.url, holders.get(who)!.token);
      try {
        const sub = subscribe(c, query, { id: serverId });
        if (who === key) {
          // allowed: the subscription is live (a rename reaches the activity feed; the others open the console feed)
          if (key === 'activity.read') {
            await until(async () => {
              await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: owner.token, body: { description: uniq() } });
              return sub.items.length > 0;
            }, 10_000, 'an activity entry');
            expect(sub.items[0].serverActivity.event).toBe('server:update');
          } else await until(() => p.services.console.hub.subscriberCount(serverId) > 0, 10_000, 'the console subscription');
          expect(sub.errors).toEqual([]);
        } else {
          await until(() => sub.errors.length > 0 || sub.done, 10_000, 'the refusal');
          expect(sub.errors.map((e: any) => e.extensions?.code)).toEqual(['FORBIDDEN']);
        }
        sub.stop();
      } finally {
        await c.dispose();
      }
    }
  }
});

test('the owner passes every operation (the server is deleted last)', async () => {
  for (const op of OPS) {
    const r = await op.rest(owner.token);
    expect([r.status, outcomeOf(r, 'rest')]).toEqual([r.status, 'allowed']);
  }
});
