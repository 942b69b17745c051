/**
 * Read-only rows of the tables a server refers to (its owner, node and blueprint), as the GraphQL
 * types show them: never a credential column (password hash, node token hash or sealed key).
 * Each table has one column map (property → column), used both by the GraphQL relation loaders
 * (`select … where id = any($1)`) and by the server list when it includes relations (one
 * `json_build_object` per row of the page, in the same round trip).
 */
import type { Blueprint } from '../entities/Blueprint.js';
import type { Node } from '../entities/Node.js';
import type { User } from '../entities/User.js';

export type UserRecord = Pick<User, 'id' | 'email' | 'name' | 'role' | 'createdAt' | 'updatedAt'>;
export type NodeRecord = Pick<Node, 'id' | 'name' | 'fqdn' | 'port' | 'scheme' | 'memory' | 'disk' | 'cpuCores' | 'status' | 'lastSeenAt' | 'tokenCreatedAt' | 'createdAt' | 'updatedAt'>;
export type BlueprintRecord = Pick<
  Blueprint,
  'id' | 'key' | 'name' | 'description' | 'startup' | 'stop' | 'ready' | 'install' | 'variables' | 'defaults' | 'builtin' | 'createdAt' | 'updatedAt'
>;

export interface RecordTable<T> {
  table: string;
  columns: Record<keyof T & string, string>;
  /** Properties that are timestamps (the driver hands them over as text). */
  dates: (keyof T & string)[];
}

/** Any of the tables above, for code that handles them alike. */
export type SomeRecordTable = { table: string; columns: Record<string, string>; dates: string[] };

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
    variables: 'variables',
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

/** `col as "prop", …` for a plain select of the table. */
export function selectList<T>(t: RecordTable<T>): string {
  return memo(t, 'select', () =>
    Object.entries(t.columns)
      .map(([prop, column]) => `${column as string} as "${prop}"`)
      .join(', '),
  );
}

/** `json_build_object('prop', alias.col, …)`: the row of a joined table as one JSON value. */
export function jsonObjectOf(t: SomeRecordTable, alias: string): string {
  return memo(t, `json:${alias}`, () => `json_build_object(${Object.entries(t.columns)
    .map(([prop, column]) => `'${prop}', ${alias}.${column}`)
    .join(', ')})`);
}

/** Timestamps (text from the driver, or ISO text inside JSON) made Dates, in place. */
export function reviveDates<T>(t: RecordTable<T> | SomeRecordTable, row: Record<string, unknown>): T {
  for (const d of t.dates) if (row[d] != null) row[d] = new Date(row[d] as string);
  return row as T;
}
