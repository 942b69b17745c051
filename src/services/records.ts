/**
 * Read models: plain rows for the reads that only show data (the server list and its related owners,
 * nodes and blueprints), selected straight from PostgreSQL with the columns aliased to property names,
 * with no entity hydration (it cost more CPU than the rest of a list request). Writes go through
 * the MikroORM entities. Never a credential column (password hash, node token hash or sealed key).
 *
 * Each table has one column map (property → column) that yields its select list (`col as "prop"`),
 * its JSON object (`json_build_object`, for a joined row) and the properties that are timestamps.
 * The Server entity exposes the ServerRecord shape too (its `ownerId`, `nodeId` and `blueprintId`
 * getters), so presenters and GraphQL resolvers take either.
 */
import type { Blueprint } from '../entities/Blueprint.js';
import type { Node } from '../entities/Node.js';
import type { User } from '../entities/User.js';
import type { ServerStatus } from '../shared/node-protocol.js';
import { recordHolds } from '../permissions/policy.js';

export interface ServerRecord {
  id: string;
  name: string;
  description: string;
  ownerId: string;
  nodeId: string;
  blueprintId: string;
  memory: number;
  cpu: number;
  disk: number;
  backupLimit: number;
  status: ServerStatus;
  variables: Record<string, string>;
  autoRestart: boolean;
  lastExitCode: number | null;
  lastCrashAt: Date | null;
  lastStopReason: string | null;
  crashCount: number;
  createdAt: Date;
  updatedAt: Date;
  /** The keys the caller holds on the server (`["*"]`: every key); set for the caller by the service. */
  permissions?: string[];
  /** The folders the caller's file keys are limited to (empty: the whole server); set with `permissions`. */
  paths?: string[];
  /** The variables the caller may see (the blueprint's viewable ones); set by the service (absent: all, for administrators). */
  viewableVariables?: string[];
}

/**
 * The server's variables as the caller may see them: a subuser reads their values with `startup.read`
 * only (they hold secrets: an RCON or admin password), and only those the blueprint declares
 * viewable (never a hidden one, nor a value kept under a key the blueprint no longer declares).
 */
export function shownVariables(s: Pick<ServerRecord, 'variables' | 'viewableVariables' | 'permissions'>): Record<string, string> {
  if (!recordHolds(s.permissions, 'startup.read')) return {};
  if (!s.viewableVariables) return s.variables;
  const viewable = new Set(s.viewableVariables);
  return Object.fromEntries(Object.entries(s.variables).filter(([k]) => viewable.has(k)));
}

/**
 * Whether the caller sees the server's owner (GraphQL `owner`: their email and role): its owner and
 * administrators, and subusers holding user.read, who see the server's users; REST records carry
 * `ownerId` only.
 */
export function ownerShown(s: Pick<ServerRecord, 'permissions'>): boolean {
  return recordHolds(s.permissions, 'user.read');
}

export type UserRecord = Pick<User, 'id' | 'email' | 'name' | 'role' | 'createdAt' | 'updatedAt'>;
export type NodeRecord = Pick<Node, 'id' | 'name' | 'fqdn' | 'port' | 'scheme' | 'memory' | 'disk' | 'cpuCores' | 'status' | 'lastSeenAt' | 'tokenCreatedAt' | 'sftpPort' | 'sftpFingerprint' | 'createdAt' | 'updatedAt'>;
export type BlueprintRecord = Pick<
  Blueprint,
  'id' | 'key' | 'name' | 'description' | 'startup' | 'stop' | 'ready' | 'install' | 'installShell' | 'configFiles' | 'variables' | 'fileDenylist' | 'defaults' | 'builtin' | 'createdAt' | 'updatedAt'
>;

/** A table's column map; without a type argument, any of them (for code that handles them alike). */
export interface RecordTable<T = Record<string, unknown>> {
  table: string;
  columns: Record<keyof T & string, string>;
  /** Properties that are timestamps (the driver hands them over as text). */
  dates: (keyof T & string)[];
}

export const SERVER_RECORDS: RecordTable<Omit<ServerRecord, 'permissions' | 'paths' | 'viewableVariables'>> = {
  table: 'servers',
  columns: {
    id: 'id',
    name: 'name',
    description: 'description',
    ownerId: 'owner_id',
    nodeId: 'node_id',
    blueprintId: 'blueprint_id',
    memory: 'memory',
    cpu: 'cpu',
    disk: 'disk',
    backupLimit: 'backup_limit',
    status: 'status',
    variables: 'variables',
    autoRestart: 'auto_restart',
    lastExitCode: 'last_exit_code',
    lastCrashAt: 'last_crash_at',
    lastStopReason: 'last_stop_reason',
    crashCount: 'crash_count',
    createdAt: 'created_at',
    updatedAt: 'updated_at',
  },
  dates: ['lastCrashAt', 'createdAt', 'updatedAt'],
};

export const USER_RECORDS: RecordTable<UserRecord> = {
  table: 'users',
  columns: { id: 'id', email: 'email', name: 'name', role: 'role', createdAt: 'created_at', updatedAt: 'updated_at' },
  dates: ['createdAt', 'updatedAt'],
};

export const NODE_RECORDS: RecordTable<NodeRecord> = {
  table: 'nodes',
  columns: {
    id: 'id',
    name: 'name',
    fqdn: 'fqdn',
    port: 'port',
    scheme: 'scheme',
    memory: 'memory',
    disk: 'disk',
    cpuCores: 'cpu_cores',
    status: 'status',
    lastSeenAt: 'last_seen_at',
    tokenCreatedAt: 'token_created_at',
    sftpPort: 'sftp_port',
    sftpFingerprint: 'sftp_fingerprint',
    createdAt: 'created_at',
    updatedAt: 'updated_at',
  },
  dates: ['lastSeenAt', 'tokenCreatedAt', 'createdAt', 'updatedAt'],
};

export const BLUEPRINT_RECORDS: RecordTable<BlueprintRecord> = {
  table: 'blueprints',
  columns: {
    id: 'id',
    key: 'key',
    name: 'name',
    description: 'description',
    startup: 'startup',
    stop: 'stop',
    ready: 'ready',
    install: 'install',
    installShell: 'install_shell',
    configFiles: 'config_files',
    variables: 'variables',
    fileDenylist: 'file_denylist',
    defaults: 'defaults',
    builtin: 'builtin',
    createdAt: 'created_at',
    updatedAt: 'updated_at',
  },
  dates: ['createdAt', 'updatedAt'],
};

/** SQL fragments are built once per table (and alias): they are constant, and asked for on every request. */
const fragments = new WeakMap<object, Map<string, string>>();

function memo(t: object, key: string, build: () => string): string {
  let m = fragments.get(t);
  if (!m) fragments.set(t, (m = new Map()));
  let sql = m.get(key);
  if (sql === undefined) m.set(key, (sql = build()));
  return sql;
}

/** `alias.col as "prop", …` (or unqualified without an alias) for a select of the table. */
export function selectList<T>(t: RecordTable<T>, alias = ''): string {
  const prefix = alias ? `${alias}.` : '';
  return memo(t, `select:${alias}`, () =>
    Object.entries(t.columns)
      .map(([prop, column]) => `${prefix}${column as string} as "${prop}"`)
      .join(', '),
  );
}

/** `json_build_object('prop', alias.col, …)`: the row of a joined table as one JSON value. */
export function jsonObjectOf(t: RecordTable, alias: string): string {
  return memo(t, `json:${alias}`, () => `json_build_object(${Object.entries(t.columns)
    .map(([prop, column]) => `'${prop}', ${alias}.${column}`)
    .join(', ')})`);
}

/** Timestamps (text from the driver, or ISO text inside JSON) made Dates, in place. */
export function reviveDates<T>(t: RecordTable<T>, row: Record<string, unknown>): T {
  for (const d of t.dates) if (row[d] != null) row[d] = new Date(row[d] as string);
  return row as T;
}
