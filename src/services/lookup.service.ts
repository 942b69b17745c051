/**
 * Read-only rows by id, for callers that batch many ids at once (the GraphQL relation loaders): one
 * `select … where id = any($1)` per table and call. The rows are plain records, not managed
 * entities: relations are only shown, and hydration was the largest single cost of a GraphQL page in
 * the benchmark's profile. No authorization here: the caller has already authorized the parent rows
 * whose relations these are.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { readRows } from '../db/read-rows.js';
import {
  BLUEPRINT_RECORDS,
  NODE_RECORDS,
  reviveDates,
  selectList,
  USER_RECORDS,
  type BlueprintRecord,
  type NodeRecord,
  type RecordTable,
  type UserRecord,
} from './records.js';

type ById<T> = (ids: readonly string[]) => Promise<T[]>;

/** The statement is built once per table. */
function rowsById<T extends { id: string }>(orm: MikroORM, t: RecordTable<T>): ById<T> {
  const sql = `select ${selectList(t)} from ${t.table} where id = any($1::uuid[])`;
  return async (ids) => (await readRows<Record<string, unknown>>(orm, sql, [ids])).map((row) => reviveDates(t, row));
}

export class LookupService {
  readonly users: ById<UserRecord>;
  readonly nodes: ById<NodeRecord>;
  readonly blueprints: ById<BlueprintRecord>;

  constructor(orm: MikroORM) {
    this.users = rowsById(orm, USER_RECORDS);
    this.nodes = rowsById(orm, NODE_RECORDS);
    this.blueprints = rowsById(orm, BLUEPRINT_RECORDS);
  }
}
