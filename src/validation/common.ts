/**
 * Input schemas shared by REST, GraphQL and the OpenAPI document. Unknown fields are stripped
 * (ignored); a field of the wrong type is a 422 VALIDATION_ERROR with details.fields.
 */
import { z } from 'zod';
import { AppError, fromZodError } from '../errors.js';

// Control characters (C0/C1, except tab) and the Unicode "noncharacters" have no place in names.
const CONTROL = /[\u0000-\u0008\u000A-\u001F\u007F-\u009F\uFDD0-\uFDEF\uFFFE\uFFFF]/;

/**
 * A lone UTF-16 surrogate (`"\\ud800"` in JSON or a GraphQL string) is well-formed JSON but not
 * text: PostgreSQL would store it as U+FFFD, and two different passwords would hash alike.
 */
const LONE_SURROGATE = /\p{Cs}/u;
export const UNICODE_MESSAGE = 'must be valid Unicode text (it contains a lone UTF-16 surrogate)';
export const isWellFormed = (s: string) => !LONE_SURROGATE.test(s);

/**
 * Characters that change how a name looks without being seen: bidirectional controls (U+202A-202E
 * embeddings and overrides, U+2066-2069 isolates, U+200E/U+200F marks, U+061C) can make
 * "evil\u202Egnp.exe" read as "evilexe.png", and zero-width characters (U+200B-200D, U+2060, U+FEFF)
 * make two names that look alike differ. Names are shown to other people (admins, shared access),
 * so they must read as what they are.
 */
const INVISIBLE = /[\u061C\u200B-\u200F\u202A-\u202E\u2060\u2066-\u2069\uFEFF]/;
export const INVISIBLE_MESSAGE = 'must not contain invisible or text-direction characters (zero-width spaces, bidi controls)';
export const hasInvisible = (s: string) => INVISIBLE.test(s);

/** Text that is stored or handed on as is (patterns, scripts): no NUL, no lone surrogate, at most `max` characters. */
export const plainText = (max: number) =>
  z
    .string({ message: 'must be a string' })
    .max(max, `must be at most ${max} characters`)
    .refine((s) => !s.includes('\u0000'), 'must not contain NUL characters')
    .refine(isWellFormed, UNICODE_MESSAGE);

/** The one rule for every name a user gives (users, servers, nodes, API tokens). */
export const displayName = (max = 100) =>
  z
    .string({ message: 'must be a string' })
    .trim()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    .refine((s) => !CONTROL.test(s), 'must not contain control characters')
    .refine((s) => !hasInvisible(s), INVISIBLE_MESSAGE)
    .refine(isWellFormed, UNICODE_MESSAGE);

export const email = z
  .string({ message: 'must be a string' })
  .trim()
  .max(254, 'must be at most 254 characters')
  .pipe(z.email({ message: 'must be a valid email address' }))
  .transform((s) => s.toLowerCase())
  .meta({ format: 'email', description: 'Compared and stored lower-cased: emails are unique case-insensitively.', example: 'ada@example.com' });

export const password = z
  .string({ message: 'must be a string' })
  .min(8, 'must be at least 8 characters')
  .max(128, 'must be at most 128 characters')
  .refine(isWellFormed, UNICODE_MESSAGE)
  .meta({ example: 'correct-horse-battery' });

export const uuid = z.uuid({ message: 'must be a UUID' });
export const isUuid = (s: string): boolean => uuid.safeParse(s).success;

/** Parses `input` or throws a 422 AppError. A non-object body is a 422 too (REST answers 400 earlier). */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const proto = protoKeyPath(input);
  if (proto) throw AppError.validation({ [proto]: 'is not a field or variable name: "__proto__" names none' });
  const r = schema.safeParse(input ?? {});
  if (!r.success) throw fromZodError(r.error);
  return r.data;
}

/**
 * Where a JSON input holds an own `__proto__` key (JSON.parse makes one; zod, as any copy of an
 * object, drops it without a word, so `{ "variables": { "__proto__": "x" } }` was a 200 that set
 * nothing), as a field path; null when it holds none. Nested objects are looked into a few levels
 * deep, as far as inputs go.
 */
function protoKeyPath(value: unknown, path = '', depth = 0): string | null {
  if (!value || typeof value !== 'object' || depth > 6) return null;
  if (!Array.isArray(value) && Object.hasOwn(value, '__proto__')) return path ? `${path}.__proto__` : '__proto__';
  for (const [key, child] of Object.entries(value)) {
    const found = protoKeyPath(child, path ? `${path}.${key}` : key, depth + 1);
    if (found) return found;
  }
  return null;
}

/**
 * Path ids: an id that is not a UUID cannot exist, so it is a 404 rather than a 422. A UUID is one
 * value in either case: it comes back in the lower case the database writes, so that everything keyed
 * by it (revocation, the console and activity channels, the node's routes) hears the same id.
 */
export function parseId(id: unknown, what: string): string {
  if (typeof id !== 'string' || !isUuid(id)) throw AppError.notFound(what);
  return id.toLowerCase();
}
