/**
 * Variable rules: a `|`-separated list in the style of Laravel's validator (what Pterodactyl eggs
 * carry), checked on server create and update. A `regex:` rule may contain `|`: it runs until the
 * pattern compiles, so it need not be last.
 *
 *   `required` (non-empty) | `nullable` (empty allowed) | `string` | `integer` | `numeric` | `boolean`
 *   | `min:N` / `max:N` / `between:A,B` / `size:N` (the value for `integer`/`numeric`, else the length)
 *   | `in:a,b` / `not_in:a,b` | `regex:/pattern/flags` / `not_regex:…` | `alpha` / `alpha_num` / `alpha_dash`
 *   | `digits:N` / `digits_between:A,B` | `url` | `ip`
 *
 * With an empty value only `required` is checked (as Laravel does for nullable fields). A pattern
 * runs for a bounded time (src/shared/bounded-regex.ts): a value it cannot judge in time is refused.
 */
import { isIP } from 'node:net';
import { PatternTimeout, testWithin } from '../shared/bounded-regex';
import { AMBIGUOUS_REPEAT, repeatsAmbiguousGroup } from './ambiguous-repeat';

export interface Rule {
  name: string;
  arg: string;
}

/** Rules that take no argument and change nothing here. */
const NO_OPS = new Set(['required', 'nullable', 'string', 'sometimes', 'present', 'bail']);
const WITH_NUMBER = new Set(['min', 'max', 'size', 'digits']);
const WITH_RANGE = new Set(['between', 'digits_between']);
const WITH_LIST = new Set(['in', 'not_in']);
const PATTERNS = new Set(['regex', 'not_regex']);
const PLAIN = new Set(['integer', 'numeric', 'boolean', 'alpha', 'alpha_num', 'alpha_dash', 'url', 'ip']);

export const KNOWN_RULES: ReadonlySet<string> = new Set([...NO_OPS, ...WITH_NUMBER, ...WITH_RANGE, ...WITH_LIST, ...PATTERNS, ...PLAIN]);

/** `/body/flags` (or a bare pattern) as a RegExp; throws when it does not compile. */
export function compilePattern(arg: string): RegExp {
  const m = /^\/(.*)\/([a-z]*)$/s.exec(arg);
  if (m) return new RegExp(m[1]!, m[2]);
  if (arg.startsWith('/')) throw new SyntaxError('unterminated pattern');
  return new RegExp(arg);
}

function compiles(arg: string): boolean {
  try {
    compilePattern(arg);
    return true;
  } catch {
    return false;
  }
}

/** The rules of a rules string, in order. */
export function parseRules(rules: string): Rule[] {
  const parts = rules.split('|');
  const out: Rule[] = [];
  for (let i = 0; i < parts.length; i++) {
    let part = parts[i]!.trim();
    if (!part) continue;
    const colon = part.indexOf(':');
    const name = colon < 0 ? part : part.slice(0, colon);
    if (PATTERNS.has(name)) {
      // a pattern may hold `|`: take parts until it compiles (or the rest of the string)
      let j = i;
      while (!compiles(part.slice(colon + 1)) && j + 1 < parts.length) part += '|' + parts[++j];
      i = j;
    }
    out.push({ name, arg: colon < 0 ? '' : part.slice(colon + 1) });
  }
  return out;
}

/** Why a rules string cannot be used (a rule we do not know, a bad argument, a pattern that does not compile), or null. */
export function rulesProblem(rules: string): string | null {
  for (const { name, arg } of parseRules(rules)) {
    if (!KNOWN_RULES.has(name)) return `unknown rule "${name}" (known: ${[...KNOWN_RULES].join(', ')})`;
    if (WITH_NUMBER.has(name) && !/^\d+(\.\d+)?$/.test(arg)) return `${name} needs a number (${name}:N)`;
    if (WITH_RANGE.has(name) && !/^\d+(\.\d+)?,\d+(\.\d+)?$/.test(arg)) return `${name} needs two numbers (${name}:A,B)`;
    if (WITH_LIST.has(name) && !arg) return `${name} needs a list (${name}:a,b)`;
    if (PATTERNS.has(name) && !compiles(arg)) return `${name} is not a valid regular expression`;
    if (PATTERNS.has(name) && repeatsAmbiguousGroup(compilePattern(arg).source)) return `${name} ${AMBIGUOUS_REPEAT}`;
  }
  return null;
}

const TOO_SLOW = 'could not be checked against its pattern in time: use a shorter or simpler value';

function patternRule(name: string, arg: string, v: string): string | null {
  try {
    return testWithin(compilePattern(arg), v) === (name === 'regex') ? null : 'has an invalid format';
  } catch (err) {
    if (err instanceof PatternTimeout) return TOO_SLOW;
    throw err;
  }
}

const NUMERIC = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** Checks one value against a rules string. Returns null when valid, else a message. */
export function validateVariable(rules: string, value: string | null | undefined): string | null {
  const v = value ?? '';
  const list = parseRules(rules);
  const names = new Set(list.map((r) => r.name));
  if (v === '') return names.has('required') ? 'is required' : null;
  const numeric = names.has('integer') || names.has('numeric');
  for (const rule of list) {
    const problem = checkRule(rule, v, numeric);
    if (problem) return problem;
  }
  return null;
}

/** What is compared by min/max/between/size: the number, or the length in characters. */
function measure(v: string, numeric: boolean): number {
  return numeric ? Number(v) : [...v].length;
}

function checkRule({ name, arg }: Rule, v: string, numeric: boolean): string | null {
  const unit = numeric ? '' : ' characters';
  switch (name) {
    case 'integer':
      return /^-?\d+$/.test(v) ? null : 'must be an integer';
    case 'numeric':
      return NUMERIC.test(v) ? null : 'must be a number';
    case 'boolean':
      return /^(true|false|1|0)$/.test(v) ? null : 'must be true or false';
    case 'min':
      return measure(v, numeric) < Number(arg) ? `must be at least ${arg}${unit}` : null;
    case 'max':
      return measure(v, numeric) > Number(arg) ? `must be at most ${arg}${unit}` : null;
    case 'size':
      return measure(v, numeric) !== Number(arg) ? (numeric ? `must be ${arg}` : `must be exactly ${arg} characters`) : null;
    case 'between': {
      const [a, b] = arg.split(',').map(Number);
      const n = measure(v, numeric);
      return n < a! || n > b! ? `must be between ${a} and ${b}${unit}` : null;
    }
    case 'in':
      return arg.split(',').includes(v) ? null : `must be one of ${arg}`;
    case 'not_in':
      return arg.split(',').includes(v) ? `must not be one of ${arg}` : null;
    case 'regex':
    case 'not_regex':
      return patternRule(name, arg, v);
    case 'alpha':
      return /^[\p{L}\p{M}]+$/u.test(v) ? null : 'may only contain letters';
    case 'alpha_num':
      return /^[\p{L}\p{M}\p{N}]+$/u.test(v) ? null : 'may only contain letters and digits';
    case 'alpha_dash':
      return /^[\p{L}\p{M}\p{N}_-]+$/u.test(v) ? null : 'may only contain letters, digits, dashes and underscores';
    case 'digits':
      return /^\d+$/.test(v) && v.length === Number(arg) ? null : `must be ${arg} digits`;
    case 'digits_between': {
      const [a, b] = arg.split(',').map(Number);
      return /^\d+$/.test(v) && v.length >= a! && v.length <= b! ? null : `must be between ${a} and ${b} digits`;
    }
    case 'url':
      return isUrl(v) ? null : 'must be a URL';
    case 'ip':
      return isIP(v) ? null : 'must be an IP address';
    default:
      return null;
  }
}

function isUrl(v: string): boolean {
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^\s/?#]+/i.test(v)) return false;
  try {
    new URL(v);
    return true;
  } catch {
    return false;
  }
}
