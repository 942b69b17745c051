/**
 * Every operation of the API, once: its REST route and GraphQL twins, the rate-limit bucket it spends
 * from, whose budget it spends (the caller's or the client address's), and what it needs: a role, and
 * for a server's operations the permission key the policy (src/permissions/policy.ts) checks. REST's
 * and GraphQL's rate limiting both read their buckets here; test/api/operations.test.ts checks that every
 * route and root field is in the table and that REST and GraphQL twins spend the same.
 *
 * Buckets follow the paths: `/auth/*` → auth (10 a minute), `/admin/*` → admin (30), everything else
 * → general (60), `/nodes` included (administrators only, but not under /admin).
 */
import type { Bucket } from '../http/rate-limit.js';
import type { PermissionKey } from '../permissions/keys.js';

export type Role = 'public' | 'user' | 'admin';
/** Whose budget an authenticated request spends: its user's, or its address's (sign-in and sign-up). */
export type KeyedBy = 'user' | 'address';

export interface OperationSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** below /api/v1 (or `/plants`), Express style */
  path: string;
  /** GraphQL root fields doing the same (queries, mutations, subscriptions) */
  graphql: string[];
  bucket: Bucket;
  keyedBy: KeyedBy;
  role: Role;
  /** on a server: the key a subuser needs; `owner`: the owner and administrators only */
  key?: PermissionKey | 'owner';
}

type Row = [method: OperationSpec['method'], path: string, graphql: string[], role: Role, key?: PermissionKey | 'owner', keyedBy?: KeyedBy];

const ROWS: Row[] = [
  ['POST', '/auth/signup', ['signUp'], 'public', undefined, 'address'],
  ['POST', '/auth/signin', ['signIn'], 'public', undefined, 'address'],
  // every /auth/* operation spends the client address's budget (CONTRACT §6), signed in or not
  ['POST', '/auth/signout', ['signOut'], 'user', undefined, 'address'],
  ['GET', '/auth/session', ['session'], 'user', undefined, 'address'],
  ['GET', '/users/me', ['me'], 'user'],
  ['PATCH', '/users/me', ['updateMe'], 'user'],
  ['GET', '/users/me/nodes', ['myNodes'], 'user'],
  ['GET', '/users/me/api-tokens', ['apiTokens'], 'user'],
  ['POST', '/users/me/api-tokens', ['createApiToken'], 'user'],
  ['DELETE', '/users/me/api-tokens/:id', ['revokeApiToken'], 'user'],
  ['GET', '/users/me/activity', ['myActivity'], 'user'],
  ['GET', '/permissions', ['permissions'], 'user'],
  ['GET', '/servers', ['servers'], 'user'],
  ['POST', '/servers', ['createServer'], 'user'],
  ['GET', '/servers/:id', ['server'], 'user'],
  // name and description need settings.rename; resources and variables are the owner's
  ['PATCH', '/servers/:id', ['updateServer'], 'user', 'settings.rename'],
  ['DELETE', '/servers/:id', ['deleteServer'], 'user', 'owner'],
  ['POST', '/servers/:id/reinstall', ['reinstallServer'], 'user', 'owner'],
  ['POST', '/servers/:id/start', ['startServer'], 'user', 'control.start'],
  ['POST', '/servers/:id/stop', ['stopServer'], 'user', 'control.stop'],
  ['POST', '/servers/:id/restart', ['restartServer'], 'user', 'control.restart'],
  ['POST', '/servers/:id/kill', ['killServer'], 'user', 'control.stop'],
  ['GET', '/servers/:id/console-token', ['consoleToken', 'consoleOutput', 'consoleBatches', 'serverStatus', 'serverStats'], 'user', 'websocket.connect'],
  ['GET', '/servers/:id/subusers', ['subusers'], 'user', 'user.read'],
  ['POST', '/servers/:id/subusers', ['createSubuser'], 'user', 'user.create'],
  ['PATCH', '/servers/:id/subusers/:userId', ['updateSubuser'], 'user', 'user.update'],
  ['DELETE', '/servers/:id/subusers/:userId', ['deleteSubuser'], 'user', 'user.delete'],
  ['GET', '/servers/:id/activity', ['serverActivity'], 'user', 'activity.read'],
  ['GET', '/servers/:id/schedules', ['schedules'], 'user', 'schedule.read'],
  ['POST', '/servers/:id/schedules', ['createSchedule'], 'user', 'schedule.create'],
  ['GET', '/servers/:id/schedules/:scheduleId', ['schedule'], 'user', 'schedule.read'],
  ['PATCH', '/servers/:id/schedules/:scheduleId', ['updateSchedule'], 'user', 'schedule.update'],
  ['DELETE', '/servers/:id/schedules/:scheduleId', ['deleteSchedule'], 'user', 'schedule.delete'],
  ['POST', '/servers/:id/schedules/:scheduleId/run', ['runSchedule'], 'user', 'schedule.update'],
  ['GET', '/servers/:id/schedules/:scheduleId/runs', ['scheduleRuns'], 'user', 'schedule.read'],
  ['GET', '/servers/:id/files', ['files'], 'user', 'file.read'],
  ['GET', '/servers/:id/files/search', ['fileSearch'], 'user', 'file.read'],
  ['GET', '/servers/:id/files/contents', ['fileContents'], 'user', 'file.read-content'],
  ['PUT', '/servers/:id/files/contents', ['writeFile'], 'user', 'file.update'],
  ['GET', '/servers/:id/files/download', [], 'user', 'file.read-content'],
  ['POST', '/servers/:id/files/upload', [], 'user', 'file.create'],
  ['POST', '/servers/:id/files/rename', ['renameFile'], 'user', 'file.update'],
  ['POST', '/servers/:id/files/copy', ['copyFile'], 'user', 'file.create'],
  ['POST', '/servers/:id/files/delete', ['deleteFiles'], 'user', 'file.delete'],
  ['POST', '/servers/:id/files/directory', ['createDirectory'], 'user', 'file.create'],
  ['POST', '/servers/:id/files/chmod', ['chmodFile'], 'user', 'file.update'],
  ['POST', '/servers/:id/files/compress', ['compressFiles'], 'user', 'file.archive'],
  ['POST', '/servers/:id/files/decompress', ['decompressFile'], 'user', 'file.archive'],
  ['GET', '/servers/:id/sftp', ['sftpDetails'], 'user', 'file.sftp'],
  ['GET', '/servers/:id/backups', ['backups', 'serverBackups'], 'user', 'backup.read'],
  ['POST', '/servers/:id/backups', ['createBackup'], 'user', 'backup.create'],
  ['GET', '/servers/:id/backups/:backupId', ['backup'], 'user', 'backup.read'],
  ['GET', '/servers/:id/backups/:backupId/download', [], 'user', 'backup.download'],
  ['POST', '/servers/:id/backups/:backupId/restore', ['restoreBackup'], 'user', 'backup.restore'],
  ['POST', '/servers/:id/backups/:backupId/lock', ['lockBackup'], 'user', 'backup.delete'],
  ['POST', '/servers/:id/backups/:backupId/unlock', ['unlockBackup'], 'user', 'backup.delete'],
  ['DELETE', '/servers/:id/backups/:backupId', ['deleteBackup'], 'user', 'backup.delete'],
  ['GET', '/servers/:id/startup', ['serverStartup'], 'user', 'startup.read'],
  ['PUT', '/servers/:id/startup', ['updateServerStartup'], 'user', 'startup.update'],
  ['GET', '/nodes', ['nodes'], 'admin'],
  ['POST', '/nodes', ['createNode'], 'admin'],
  ['GET', '/nodes/:id', ['node'], 'admin'],
  ['PATCH', '/nodes/:id', ['updateNode'], 'admin'],
  ['DELETE', '/nodes/:id', ['deleteNode'], 'admin'],
  ['GET', '/nodes/:id/stats', ['nodeStats'], 'admin'],
  ['GET', '/blueprints', ['blueprints'], 'user'],
  ['GET', '/blueprints/:id', ['blueprint'], 'user'],
  ['GET', '/admin/users', ['adminUsers'], 'admin'],
  ['GET', '/admin/users/:id', ['adminUser'], 'admin'],
  ['PATCH', '/admin/users/:id', ['updateUser'], 'admin'],
  ['DELETE', '/admin/users/:id', ['deleteUser'], 'admin'],
  ['GET', '/admin/stats', ['adminStats'], 'admin'],
  ['POST', '/admin/nodes/:id/token', ['createNodeToken'], 'admin'],
  ['POST', '/admin/blueprints', ['createBlueprint'], 'admin'],
  ['POST', '/admin/blueprints/import', ['importBlueprint', 'importBlueprintYaml'], 'admin'],
  ['PATCH', '/admin/blueprints/:id', ['updateBlueprint'], 'admin'],
  ['DELETE', '/admin/blueprints/:id', ['deleteBlueprint'], 'admin'],
  ['GET', '/admin/activity', ['adminActivity'], 'admin'],
  ['GET', '/openapi.json', [], 'public'],
  ['POST', '/plants', ['addPlant', 'plant'], 'user'],
];

/** The bucket of a path under /api/v1: by its first segment (Express matches routes regardless of case). */
export function bucketOfPath(path: string): Bucket {
  const first = path.toLowerCase().split('/')[1] ?? '';
  return first === 'auth' ? 'auth' : first === 'admin' ? 'admin' : 'general';
}

export const OPERATIONS: readonly OperationSpec[] = ROWS.map(([method, path, graphql, role, key, keyedBy]) => ({
  method,
  path,
  graphql,
  role,
  ...(key ? { key } : {}),
  bucket: path === '/plants' ? 'general' : bucketOfPath(path),
  keyedBy: keyedBy ?? 'user',
}));

const BY_FIELD = new Map<string, OperationSpec>(OPERATIONS.flatMap((op) => op.graphql.map((f) => [f, op] as const)));

/** The operation of a GraphQL root field (undefined for meta fields such as __typename). */
export const operationOfField = (field: string): OperationSpec | undefined => BY_FIELD.get(field);

const ROUTES = OPERATIONS.filter((op) => op.path !== '/plants').map((op) => ({
  op,
  regex: new RegExp('^' + op.path.replace(/:[a-zA-Z]+/g, '[^/]+') + '/?$', 'i'),
}));

/** The operation of a REST request under /api/v1 (undefined for a path that is none). */
export function operationOfRequest(method: string, path: string): OperationSpec | undefined {
  const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  return ROUTES.find((r) => r.op.method === m && r.regex.test(path))?.op;
}
