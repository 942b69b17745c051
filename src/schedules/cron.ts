/**
 * Cron expressions of schedules, read and iterated with croner: exactly five fields (minute hour
 * day-of-month month day-of-week; lists, ranges, steps and names), in an IANA time zone.
 *
 * DST (CONTRACT §13): every pattern names wall-clock times. A time that does not exist that day
 * (spring forward) runs at the first valid instant after the gap, once however many of the
 * pattern's times the gap swallowed (gapBefore: croner moves only some of them). A time that
 * happens twice (fall back) runs once, at its first occurrence (croner's `no-wildcard` rule does
 * that for patterns without a wildcard or step in minute and hour; `repeated` for the others).
 * test/schedules/dst.test.ts checks the runs across both changes.
 */
import { Cron } from 'croner';

interface Field {
  name: string;
  min: number;
  max: number;
  /** names standing for values, from `min` on (JAN = 1, SUN = 0), any case */
  names?: string[];
}

const FIELDS: Field[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] },
  { name: 'day of week', min: 0, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
];
const FIELD_NAMES = FIELDS.map((f) => f.name);

/** One item of a field's list: `*`, a value or a range of two, each with an optional `/step`. */
const ITEM = /^(\*|[0-9A-Za-z]+(?:-[0-9A-Za-z]+)?)(?:\/([0-9]+))?$/;

/**
 * What is wrong with one field, in the user's own terms, or null. The syntax is CONTRACT §13's
 * (lists, ranges, steps, names): croner's extensions (`?`, `L`, `W`, `#`) are refused, and a value
 * out of range is named as written (croner counts days of month and months from 0 in its messages).
 */
function fieldProblem(text: string, field: Field): string | null {
  for (const item of text.split(',')) {
    const m = ITEM.exec(item);
    if (!m) return `${field.name}: "${item}" is not a number${field.names ? ', a name' : ''}, a range, * or a step (lists, ranges, steps and names only)`;
    if (m[1] === '*') continue;
    for (const v of m[1]!.split('-')) {
      const named = field.names?.indexOf(v.toUpperCase()) ?? -1;
      const n = named >= 0 ? named + field.min : /^[0-9]+$/.test(v) ? Number(v) : null;
      if (n === null) return `${field.name}: "${v}" is not a number${field.names ? ` or a name (${field.names[0]}…${field.names.at(-1)})` : ''}`;
      if (n < field.min || n > field.max) return `${field.name}: ${v} is out of range (${field.min}-${field.max})`;
    }
  }
  return null;
}

/** The croner job for a pattern in a zone (paused: it only computes dates). Throws on a bad pattern. */
function job(cron: string, timezone: string): Cron {
  return new Cron(cron, { paused: true, timezone, mode: '5-part', fixedTimeRule: 'no-wildcard' });
}

const NEVER_MATCHES = 'it never matches a date (such as 30 February or 31 April); use a day of month that the chosen months have';

/**
 * Why `cron` is not a five-field pattern that ever runs, or null when it is one. Whether a pattern
 * ever matches is a question of calendar dates, which every zone has, so it is checked in UTC;
 * croner looks far enough ahead to find a rare date such as 29 February.
 */
export function cronProblem(cron: string): string | null {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5 || fields[0] === '') {
    return `must have exactly five fields (${FIELD_NAMES.join(', ')}); it has ${cron.trim() ? fields.length : 0}`;
  }
  for (let i = 0; i < FIELDS.length; i++) {
    const problem = fieldProblem(fields[i]!, FIELDS[i]!);
    if (problem) return problem;
  }
  let pattern: Cron;
  try {
    pattern = job(cron, 'UTC');
  } catch (err) {
    return (err as Error).message.replace(/^CronPattern: /, '');
  }
  return pattern.nextRun() ? null : NEVER_MATCHES;
}

/** Whether `tz` is an IANA time zone name this runtime knows (`UTC`, `Europe/Berlin`, …). */
export function isTimeZone(tz: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(tz)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

let knownZones: Map<string, string> | null = null;

/**
 * The name a valid zone is stored under: the name given, in the zone database's spelling when this
 * runtime knows it under that name (`europe/berlin` is `Europe/Berlin`, `utc` is `UTC`). Another name
 * of a zone stays as given (`US/Pacific`, and `Europe/Kyiv`, which this runtime's ICU knows only as an
 * alias of the older `Europe/Kiev`): a user finds the zone they chose.
 */
export function zoneName(tz: string): string {
  const resolved = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  if (resolved.toLowerCase() === tz.toLowerCase()) return resolved;
  knownZones ??= new Map(Intl.supportedValuesOf('timeZone').map((z) => [z.toLowerCase(), z]));
  return knownZones.get(tz.toLowerCase()) ?? tz;
}

/** Which of a stored pattern and zone nextRun() throws on: the zone when this runtime does not know it, else the pattern. */
export function unreadablePart(timezone: string): 'cron' | 'timezone' {
  return isTimeZone(timezone) ? 'cron' : 'timezone';
}

/** A fall back repeats at most two hours (Antarctica/Troll); a pattern names at most 60 times an hour. */
const MAX_REPEATED_TIMES = 2 * 60 + 1;

/** The first instant strictly after `after` that the pattern names in `timezone`; null if none. */
export function nextRun(cron: string, timezone: string, after: Date): Date | null {
  const pattern = job(cron, timezone);
  let from = after;
  for (let i = 0; i <= MAX_REPEATED_TIMES; i++) {
    const next = pattern.nextRun(from);
    if (!next) return null;
    const gap = gapBefore(cron, timezone, from, next);
    if (gap) return gap;
    if (!repeated(timezone, next.getTime())) return next;
    from = next;
  }
  return null;
}

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at `at`, in minutes (`GMT-02:00` → -120). */
function offsetAt(timezone: string, at: number): number {
  let format = offsetFormats.get(timezone);
  if (!format) offsetFormats.set(timezone, (format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, timeZoneName: 'longOffset' })));
  const name = format.formatToParts(at).find((p) => p.type === 'timeZoneName')!.value;
  const m = /([+-])(\d\d):(\d\d)/.exec(name);
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
}

/**
 * Whether the local time at `at` happened before, in the first pass of a fall back's repeated hours:
 * the offset three hours earlier (before any change of up to two hours) is larger, and the same
 * wall-clock time read in it is an instant that really had it.
 */
function repeated(timezone: string, at: number): boolean {
  const now = offsetAt(timezone, at);
  const before = offsetAt(timezone, at - 3 * 60 * MINUTE);
  if (before <= now) return false;
  return offsetAt(timezone, at - (before - now) * MINUTE) === before;
}

/** The first instant after `from` (where the offset is `before`) of another offset, found before `to`, to the minute. */
function changeAt(timezone: string, from: number, to: number, before: number): number {
  while (to - from > MINUTE) {
    const mid = from + Math.floor((to - from) / 2 / MINUTE) * MINUTE || from + MINUTE;
    if (offsetAt(timezone, mid) === before) from = mid;
    else to = mid;
  }
  return to;
}

/**
 * croner moves a fixed time that a spring-forward gap swallows to the gap's end, but not when the
 * gap runs into midnight (America/Nuuk springs from 23:00 to 00:00): that day's run was skipped.
 * Between `after` and croner's `next`, this finds each change to a later offset and whether one of
 * the pattern's times, read in the offset before it, falls in the hour it skips: then the run is at
 * the change, the first valid instant after the gap.
 */
function gapBefore(cron: string, timezone: string, after: Date, next: Date): Date | null {
  for (let t = after.getTime(); t < next.getTime(); t += DAY) {
    const end = Math.min(t + DAY, next.getTime());
    const [was, is] = [offsetAt(timezone, t), offsetAt(timezone, end)];
    if (is <= was) continue;
    const change = changeAt(timezone, t, end, was);
    const inOldOffset = new Cron(cron, { paused: true, utcOffset: was, mode: '5-part' }).nextRun(new Date(change - 1));
    const at = inOldOffset?.getTime();
    if (at !== undefined && at >= change && at < change + (is - was) * MINUTE && change > after.getTime() && change < next.getTime()) return new Date(change);
  }
  return null;
}
