/**
 * Inputs of the servers resource. Units: memory and disk in MiB, cpu in percent of one
 * core. Integers only: `1.5` and `"512"` are 422. The upper bound of cpu depends on the node
 * (cores × 100) and the upper bound of memory/disk on what the node can still allocate, so both are
 * checked by the service once the node is known.
 */
import { z } from 'zod';
import { SERVER_STATUSES } from '../shared/node-protocol.js';
import { displayName, isWellFormed, parseInput, UNICODE_MESSAGE, uuid } from './common.js';
import { parsePagination, type Page } from './pagination.js';

export const MIN_MEMORY_MIB = 64;
export const MIN_DISK_MIB = 128;
/** Columns are int4: anything above cannot be stored (and no node has that much). */
export const INT32_MAX = 2_147_483_647;

const int = (min: number, max = INT32_MAX) =>
  z
    .number({ message: 'must be an integer' })
    .int('must be an integer')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

// Free text: newlines and tabs are fine, other control characters are not.
const TEXT_CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
export const description = z
  .string({ message: 'must be a string' })
  .max(2000, 'must be at most 2000 characters')
  .refine((s) => !TEXT_CONTROL.test(s), 'must not contain control characters')
  .refine(isWellFormed, UNICODE_MESSAGE);

/** Values are strings; their rules come from the blueprint (checked by the service, src/blueprints/builtin.ts). */
export const variablesInput = z.record(
  z.string().max(100, 'variable names are at most 100 characters'),
  z
    .string({ message: 'must be a string' })
    .max(8192, 'must be at most 8192 characters')
    .refine((s) => !s.includes('\u0000'), 'must not contain NUL characters')
    .refine(isWellFormed, UNICODE_MESSAGE),
  { message: 'must be an object of string values' },
);

// memory and disk have no upper bound of their own: above what the node can still allocate (and any
// node holds less than INT32_MAX) is CAPACITY_EXCEEDED, checked by the service (CONTRACT §3)
export const memory = int(MIN_MEMORY_MIB, Number.MAX_SAFE_INTEGER).meta({ description: 'Memory limit in MiB (≥ 64); at most what the node can still allocate (else 422 CAPACITY_EXCEEDED).', example: 1024 });
export const disk = int(MIN_DISK_MIB, Number.MAX_SAFE_INTEGER).meta({ description: 'Disk limit in MiB (≥ 128); at most what the node can still allocate (else 422 CAPACITY_EXCEEDED).', example: 2048 });
export const backupLimit = z
  .number({ message: 'must be an integer from 0 to 1000' })
  .int('must be an integer from 0 to 1000')
  .min(0, 'must be an integer from 0 to 1000')
  .max(1000, 'must be an integer from 0 to 1000')
  .meta({
    description:
      'How many backups the server may keep, 0 to 1000 (0: none); default BACKUP_LIMIT_DEFAULT. Its owner may set at most its limit now or BACKUP_LIMIT_DEFAULT, whichever is larger (lower it, and raise it back); only administrators may set more (backups take the node\'s disk): 422 VALIDATION_ERROR with `fields.backupLimit` otherwise, at creation too.',
    example: 5,
  });
export const cpu = int(1).meta({ description: "CPU limit in percent of one core: 100 = one core; 1..(node's cores × 100).", example: 100 });

export const createServerInput = z.object({
  name: displayName(100),
  description: description.optional(),
  nodeId: z.string({ message: 'must be a string' }).pipe(uuid).meta({ format: 'uuid', description: 'The node that hosts the server (cannot change later).' }),
  blueprintId: z.string({ message: 'must be a string' }).pipe(uuid).meta({ format: 'uuid', description: 'The blueprint the server runs (cannot change later).' }),
  /** Defaults to the blueprint's `defaults.memory`. */
  memory: memory.optional(),
  /** Defaults to the blueprint's `defaults.cpu` (capped to the node's cores × 100). */
  cpu: cpu.optional(),
  /** Defaults to the blueprint's `defaults.disk`. */
  disk: disk.optional(),
  backupLimit: backupLimit.optional(),
  variables: variablesInput.optional(),
  autoRestart: z.boolean({ message: 'must be true or false' }).optional(),
  /** Administrators only: create the server for another user. */
  ownerId: z.string({ message: 'must be a string' }).pipe(uuid).meta({ format: 'uuid', description: 'Administrators only (403 otherwise): create the server for another user.' }).optional(),
});
export type CreateServerInput = z.output<typeof createServerInput>;

/** A field that cannot change: its current value is accepted (a record sent back as GET gave it), any other is refused by the service (fixedFieldsGiven). */
const fixed = (what: string) =>
  z
    .unknown()
    .meta({ description: `Cannot be changed: the server's current value is accepted and ignored; any other is a 422 VALIDATION_ERROR (create a new server on another ${what} instead).` })
    .optional();

/** The fields that cannot change, and what a server of another one is. */
const FIXED = { nodeId: 'node', blueprintId: 'blueprint', ownerId: 'owner' } as const;
export const FIXED_FIELDS = Object.keys(FIXED) as (keyof typeof FIXED)[];

/** The fields of an update that cannot change and are given (once those equal to the server's are left out), with their messages. */
export function fixedFieldsGiven(data: UpdateServerInput): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const key of FIXED_FIELDS) if (data[key] !== undefined) fields[key] = `cannot be changed: create a new server on another ${FIXED[key]} instead`;
  return fields;
}

export const updateServerInput = z.object({
  name: displayName(100).optional(),
  description: description.optional(),
  memory: memory.optional(),
  cpu: cpu.optional(),
  disk: disk.optional(),
  backupLimit: backupLimit.optional(),
  /** Merged into the current values and validated against the blueprint's rules. */
  variables: variablesInput.optional(),
  autoRestart: z.boolean({ message: 'must be true or false' }).optional(),
  nodeId: fixed('node'),
  blueprintId: fixed('blueprint'),
  ownerId: fixed('owner'),
});
export type UpdateServerInput = z.output<typeof updateServerInput>;

const one = (v: unknown) => (Array.isArray(v) ? { __many: true } : v === '' ? undefined : v);

/** `GET /servers` filters (besides page/limit). */
export const serverListQuery = z.object({
  status: z.preprocess(one, z.enum(SERVER_STATUSES as [string, ...string[]], { message: `must be one of ${SERVER_STATUSES.join(', ')}` }).optional()).meta({ description: 'Only servers in this state.' }),
  nodeId: z.preprocess(one, z.string({ message: 'must be a UUID' }).pipe(uuid).optional()).meta({ format: 'uuid', description: 'Only servers on this node.' }),
});

export interface ServerListQuery {
  page: Page;
  status?: string;
  nodeId?: string;
}

/** `GET /servers` query (REST strings or GraphQL arguments) as the service's typed argument. */
export function parseServerListQuery(raw: unknown): ServerListQuery {
  const q = (raw ?? {}) as Record<string, unknown>;
  return { page: parsePagination(q), ...parseInput(serverListQuery, { status: q.status, nodeId: q.nodeId }) };
}

/** `DELETE /servers/:id?force=true` (administrators): drop the record even when the node is unreachable. */
export const deleteServerQuery = z.object({
  force: z.preprocess(
    one,
    z
      .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
      .optional()
      .transform((v) => v === 'true' || v === '1'),
  ).meta({ description: 'Administrators only (403 otherwise): remove the record even when the node cannot be reached (its files may stay on the node).' }),
});
