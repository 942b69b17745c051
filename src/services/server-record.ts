/**
 * The read model of a server: its columns with the relations as ids. The hot list path
 * (`GET /servers`, GraphQL `servers`) selects these straight from PostgreSQL, aliased to these
 * names, with no entity hydration; the Server entity exposes the same shape (its `ownerId`,
 * `nodeId` and `blueprintId` getters), so presenters and GraphQL resolvers take either.
 */
import type { ServerStatus } from '../shared/node-protocol.js';

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
  status: ServerStatus;
  variables: Record<string, string>;
  autoRestart: boolean;
  lastExitCode: number | null;
  lastCrashAt: Date | null;
  lastStopReason: string | null;
  crashCount: number;
  createdAt: Date;
  updatedAt: Date;
}

/** The select list that yields a ServerRecord per row of `servers` (aliased `s` in the query). */
export const SERVER_RECORD_COLUMNS = [
  's.id',
  's.name',
  's.description',
  's.owner_id as "ownerId"',
  's.node_id as "nodeId"',
  's.blueprint_id as "blueprintId"',
  's.memory',
  's.cpu',
  's.disk',
  's.status',
  's.variables',
  's.auto_restart as "autoRestart"',
  's.last_exit_code as "lastExitCode"',
  's.last_crash_at as "lastCrashAt"',
  's.last_stop_reason as "lastStopReason"',
  's.crash_count as "crashCount"',
  's.created_at as "createdAt"',
  's.updated_at as "updatedAt"',
].join(', ');

/** Timestamps come back from the driver as text (MikroORM's pg setup): make them Dates. */
export function serverRecordOf(row: ServerRecord): ServerRecord {
  row.createdAt = new Date(row.createdAt);
  row.updatedAt = new Date(row.updatedAt);
  if (row.lastCrashAt !== null) row.lastCrashAt = new Date(row.lastCrashAt);
  return row;
}
