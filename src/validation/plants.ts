/**
 * The plant store's request body: `{ id, name, tag? }`, where `id` is an int64 kept
 * exactly. `JSON.parse` turns numbers into doubles (exact only up to 2^53), so the digits of the
 * top-level `id` member are read from the raw text by a small tokenizer that respects strings and
 * nesting (Node 20 has no `context.source` in JSON.parse revivers).
 */
import { z } from 'zod';
import { AppError } from '../errors.js';
import { isWellFormed, UNICODE_MESSAGE } from './common.js';

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

export interface NewPlant {
  /** The int64 in canonical decimal form. */
  id: string;
  name: string;
  tag?: string;
}

/**
 * NewPlant as a zod schema, for the OpenAPI document. The runtime parser is {@link parseNewPlant}
 * (it must read the int64 `id` from the raw text, which no JSON-schema validator can do);
 * test/openapi/plants-schema.test.ts checks that both accept and reject the same bodies.
 */
export const newPlantBody = z.object({
  id: z
    .number()
    .int()
    .meta({
      format: 'int64',
      description: 'Identification number of the plant: any int64 (-2^63..2^63-1), kept exactly, values above 2^53 included. Written as a JSON integer (no fraction or exponent). An id that already exists is a 400.',
      example: 10,
    }),
  name: z.string().regex(/\S/).meta({ description: 'Name of the plant (not empty or blank).', example: 'Monstera' }),
  tag: z.string().optional().meta({ description: 'Tag specifying the type.', example: 'indoor' }),
});

const WS = new Set([' ', '\t', '\n', '\r']);

function skipWs(s: string, i: number): number {
  while (i < s.length && WS.has(s[i]!)) i++;
  return i;
}

/** `s[i]` is `"`: returns the index just after the closing quote. */
function skipString(s: string, i: number): number {
  i++;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '\\') i += 2;
    else if (c === '"') return i + 1;
    else i++;
  }
  throw new Error('unterminated string');
}

/** Returns the index just after the JSON value starting at `i`. */
function skipValue(s: string, i: number): number {
  const c = s[i];
  if (c === '"') return skipString(s, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    while (i < s.length) {
      const d = s[i]!;
      if (d === '"') {
        i = skipString(s, i);
        continue;
      }
      if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    throw new Error('unterminated container');
  }
  while (i < s.length && !WS.has(s[i]!) && s[i] !== ',' && s[i] !== '}' && s[i] !== ']') i++;
  return i;
}

/**
 * The raw source text of each member of the top-level object of `text` (already known to be valid
 * JSON with an object at the top). For duplicate keys the last one wins, as with JSON.parse.
 */
export function topLevelMemberSources(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let i = skipWs(text, 0);
  if (text[i] !== '{') throw new Error('not an object');
  i = skipWs(text, i + 1);
  if (text[i] === '}') return out;
  for (;;) {
    const keyEnd = skipString(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipWs(text, keyEnd);
    if (text[i] !== ':') throw new Error('expected :');
    i = skipWs(text, i + 1);
    const valueEnd = skipValue(text, i);
    out.set(key, text.slice(i, valueEnd));
    i = skipWs(text, valueEnd);
    if (text[i] === ',') {
      i = skipWs(text, i + 1);
      continue;
    }
    if (text[i] === '}') return out;
    throw new Error('expected , or }');
  }
}

/** PostgreSQL text cannot hold U+0000, so such a string could not be stored as sent. */
const NUL_PROBLEM = (field: string) => `${field} must not contain the NUL character (\\u0000)`;

/** Parses and validates a NewPlant from the raw body text; every problem is a 400. */
export function parseNewPlant(raw: unknown): NewPlant {
  if (typeof raw !== 'string' || raw.trim() === '') throw AppError.badRequest('A JSON request body is required: { "id": <int64>, "name": <string>, "tag"?: <string> }.');
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw AppError.badRequest('The request body is not valid JSON.');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw AppError.badRequest('The request body must be a JSON object.');
  const b = body as Record<string, unknown>;
  const problems: string[] = [];

  let id: string | null = null;
  if (!('id' in b)) problems.push('id is required');
  else if (typeof b.id !== 'number') problems.push('id must be an integer (int64)');
  else {
    const src = topLevelMemberSources(text).get('id') ?? '';
    if (!/^-?(0|[1-9][0-9]*)$/.test(src)) problems.push('id must be an integer (int64) written without a fraction or exponent');
    else {
      const n = BigInt(src);
      if (n < INT64_MIN || n > INT64_MAX) problems.push(`id must be between ${INT64_MIN} and ${INT64_MAX}`);
      else id = n.toString();
    }
  }
  if (!('name' in b)) problems.push('name is required');
  else if (typeof b.name !== 'string') problems.push('name must be a string');
  else if (b.name.trim() === '') problems.push('name must not be empty');
  else if (b.name.includes('\u0000')) problems.push(NUL_PROBLEM('name'));
  else if (!isWellFormed(b.name)) problems.push(`name ${UNICODE_MESSAGE}`);
  if ('tag' in b && b.tag !== undefined && typeof b.tag !== 'string') problems.push('tag must be a string');
  else if (typeof b.tag === 'string' && b.tag.includes('\u0000')) problems.push(NUL_PROBLEM('tag'));
  else if (typeof b.tag === 'string' && !isWellFormed(b.tag)) problems.push(`tag ${UNICODE_MESSAGE}`);

  if (problems.length || id === null) throw AppError.badRequest(`Invalid plant: ${problems.join('; ')}.`);
  const plant: NewPlant = { id, name: b.name as string };
  if (typeof b.tag === 'string') plant.tag = b.tag;
  return plant;
}
