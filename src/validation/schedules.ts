/**
 * Inputs of a server's schedules. `cron` is five fields read with croner (src/schedules/cron.ts),
 * stored with single spaces between them; `timezone` an IANA name (default UTC), stored under its
 * canonical name (`utc` → `UTC`, `europe/berlin` → `Europe/Berlin`). Tasks come as a whole list (1..10), run in list order:
 * their `sequence` is their position. Payloads: `command` `{ command }`, `power` `{ action }`,
 * `backup` `{}`.
 */
import { z } from 'zod';
import { POWER_ACTIONS, type PowerAction } from '../shared/node-protocol.js';
import { cronProblem, isTimeZone, zoneName } from '../schedules/cron.js';
import { displayName, isWellFormed, UNICODE_MESSAGE } from './common.js';

export const MAX_TASKS = 10;
/** Schedules a server may hold (src/services/schedules.service.ts refuses more). */
export const MAX_SCHEDULES = 50;
export const MAX_OFFSET_SECONDS = 900;

const cron = z
  .string({ message: 'must be a string' })
  .trim()
  .max(200, 'must be at most 200 characters')
  .transform((s) => s.split(/\s+/).join(' '))
  .superRefine((s, ctx) => {
    const problem = cronProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', message: `not a valid cron expression: ${problem}` });
  })
  .meta({ description: 'Five fields: minute hour day-of-month month day-of-week (lists, ranges, steps, names). No seconds field.', example: '30 4 * * *' });

const timezone = z
  .string({ message: 'must be a string' })
  .refine(isTimeZone, 'must be an IANA time zone name, e.g. UTC or Europe/Berlin')
  .transform(zoneName)
  .meta({ description: 'IANA time zone the cron expression is read in.', example: 'Europe/Berlin' });

const command = z
  .string({ message: 'must be a string' })
  .min(1, 'must not be empty')
  .max(4096, 'must be at most 4096 characters')
  .refine((s) => !/[\r\n\0]/.test(s), 'must be a single line')
  .refine(isWellFormed, UNICODE_MESSAGE);

const common = {
  offsetSeconds: z.number({ message: 'must be an integer' }).int('must be an integer').min(0, `must be from 0 to ${MAX_OFFSET_SECONDS}`).max(MAX_OFFSET_SECONDS, `must be from 0 to ${MAX_OFFSET_SECONDS}`).default(0)
    .meta({ description: 'Seconds to wait after the previous task (the first task: after the run starts).' }),
  continueOnFailure: z.boolean({ message: 'must be true or false' }).default(false)
    .meta({ description: 'Whether the next tasks run when this one fails.' }),
};

const task = z.discriminatedUnion(
  'action',
  [
    z.object({ action: z.literal('command'), payload: z.object({ command }, { message: 'must be an object { command }' }), ...common }),
    z.object({ action: z.literal('power'), payload: z.object({ action: z.enum(POWER_ACTIONS as [PowerAction, ...PowerAction[]], { message: 'must be start, stop, restart or kill' }) }, { message: 'must be an object { action }' }), ...common }),
    z.object({ action: z.literal('backup'), payload: z.object({}).default({}), ...common }),
  ],
  { message: 'action must be command, power or backup' },
);

const tasks = z
  .array(task, { message: 'must be a list of tasks' })
  .min(1, 'must hold at least one task')
  .max(MAX_TASKS, `must hold at most ${MAX_TASKS} tasks`)
  .transform((list) => list.map((t, i) => ({ sequence: i + 1, action: t.action, payload: t.payload as Record<string, unknown>, offsetSeconds: t.offsetSeconds, continueOnFailure: t.continueOnFailure })));

export const createScheduleInput = z.object({
  name: displayName(100),
  cron,
  timezone: timezone.default('UTC'),
  enabled: z.boolean({ message: 'must be true or false' }).default(true),
  onlyWhenOnline: z.boolean({ message: 'must be true or false' }).default(false),
  tasks,
});

export const updateScheduleInput = z.object({
  name: displayName(100).optional(),
  cron: cron.optional(),
  timezone: timezone.optional(),
  enabled: z.boolean({ message: 'must be true or false' }).optional(),
  onlyWhenOnline: z.boolean({ message: 'must be true or false' }).optional(),
  tasks: tasks.optional(),
});

export type CreateScheduleInput = z.output<typeof createScheduleInput>;
export type UpdateScheduleInput = z.output<typeof updateScheduleInput>;
