/** Filters of the activity lists: event prefix, server, actor, and a time range. */
import { z } from 'zod';
import { parseInput, uuid } from './common.js';
import { parsePagination, type Page } from './pagination.js';

/** Whether the date part names a day the calendar has (Date.parse takes 2024-02-30 for 1 March). */
function realDay(s: string): boolean {
  const [y, m, d] = s.slice(0, 10).split('-').map(Number) as [number, number, number];
  const day = new Date(0);
  day.setUTCFullYear(y, m - 1, d); // Date.UTC would read the years 0-99 as 1900-1999
  return day.getUTCFullYear() === y && day.getUTCMonth() === m - 1 && day.getUTCDate() === d;
}

/** The instants the database stores: years 0001 to 9999 (UTC). */
const FIRST = Date.parse('0001-01-01T00:00:00.000Z');
const LAST = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * An ISO-8601 timestamp with any offset. One that falls outside years 0001-9999 once in UTC (9999-12-31
 * at -14:00) is taken as the nearest instant inside: before or after every entry, as it is.
 */
const instant = z
  .string({ message: 'must be an ISO-8601 timestamp' })
  .refine((s) => /^\d{4}-\d{2}-\d{2}/.test(s) && !Number.isNaN(Date.parse(s)) && realDay(s), 'must be an ISO-8601 timestamp')
  .transform((s) => new Date(Math.min(LAST, Math.max(FIRST, Date.parse(s)))));

export const activityFilter = z.object({
  event: z
    .string({ message: 'must be a string' })
    .max(64, 'must be at most 64 characters')
    .regex(/^[a-z:.-]*$/, 'must be one event name or its prefix, e.g. server:file or server:subuser.create (ask once per event for several)')
    .optional()
    .meta({ description: 'Event name prefix, e.g. `server:power` or `auth:signin`.' }),
  serverId: uuid.optional(),
  actorId: uuid.optional(),
  since: instant.optional().meta({ description: 'Only entries at or after this time.' }),
  until: instant.optional().meta({ description: 'Only entries before this time.' }),
});

export type ActivityFilter = z.output<typeof activityFilter>;

export interface ActivityQuery {
  filter: ActivityFilter;
  page: Page;
}

/** The lists' query (REST strings or GraphQL arguments); a repeated REST parameter is a 422. */
export function parseActivityQuery(raw: unknown): ActivityQuery {
  const query = (raw ?? {}) as Record<string, unknown>;
  const one = (v: unknown) => (Array.isArray(v) ? 0 : v);
  const filter = parseInput(activityFilter, {
    event: one(query.event),
    serverId: one(query.serverId),
    actorId: one(query.actorId),
    since: one(query.since),
    until: one(query.until),
  });
  return { filter, page: parsePagination(query) };
}
