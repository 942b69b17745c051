/**
 * The parsers of configuration files: each takes a file's text and the keys to write (placeholders
 * already filled in) and returns the new text, as Wings does it:
 *
 * - `properties`: `key=value` lines; an existing key's line is replaced, a missing key is appended.
 * - `file`: every line that starts with a key is replaced by the value; nothing is appended.
 * - `ini`: `section.key` (a key without a dot is outside any section); replaced in place, else added
 *   to its section (a missing section is appended).
 * - `json`, `yaml`: dotted paths (`listeners[0].host`, `servers.*.address`: `*` is every existing
 *   child); missing objects on the way are created. `true`/`false` and integers are written as such.
 *   yaml keeps the file's comments; json is written again with 4-space indentation.
 * - `xml`: `root.child.leaf` sets the leaf element's text (xml.ts).
 *
 * A file that does not parse (json, yaml, xml) throws ConfigParseError and is left as it is.
 */
import { parseDocument } from 'yaml';
import type { ConfigParser } from '../../shared/config-files';
import { repeatedKey } from '../../shared/yaml-keys';
import { ConfigParseError } from './errors';
import { editXml } from './xml';

export { ConfigParseError };

type Entries = [key: string, value: string][];

export function editConfig(parser: ConfigParser, text: string, entries: Entries): string {
  switch (parser) {
    case 'properties':
      return editProperties(text, entries);
    case 'file':
      return editLines(text, entries);
    case 'ini':
      return editIni(text, entries);
    case 'json':
      return editJson(text, entries);
    case 'yaml':
      return editYaml(text, entries);
    case 'xml':
      return editXml(text, entries);
  }
}

function linesOf(text: string): string[] {
  const lines = text.split(/\r?\n/);
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

const joined = (lines: string[]): string => (lines.length ? lines.join('\n') + '\n' : '');

function editProperties(text: string, entries: Entries): string {
  const lines = linesOf(text);
  const keyOf = (line: string): string | null => (/^\s*[#!]/.test(line) ? null : (/^\s*([^=:\s]+)\s*[=:]/.exec(line)?.[1] ?? null));
  const lineOf = firstLines(lines, keyOf);
  for (const [key, value] of entries) {
    const line = `${key}=${propertiesValue(value)}`;
    const at = lineOf.get(key);
    if (at !== undefined) lines[at] = line;
    else lines.push(line);
  }
  return joined(lines);
}

/**
 * A value as a properties line ends it: a last backslash that is not escaped would continue the
 * line onto the next key (java.util.Properties), so it is escaped. Backslashes before other
 * characters stay as written (`\u00A7` colour codes in a MOTD).
 */
function propertiesValue(value: string): string {
  let trailing = 0;
  while (value[value.length - 1 - trailing] === '\\') trailing++;
  return trailing % 2 ? value + '\\' : value;
}

/** Each key's first line (by index), in one pass over the file. */
function firstLines(lines: string[], keyOf: (line: string, index: number) => string | null): Map<string, number> {
  const first = new Map<string, number>();
  lines.forEach((line, i) => {
    const key = keyOf(line, i);
    if (key !== null && !first.has(key)) first.set(key, i);
  });
  return first;
}

function editLines(text: string, entries: Entries): string {
  const lines = linesOf(text).map((line) => entries.find(([key]) => line.startsWith(key))?.[1] ?? line);
  return joined(lines);
}

function editIni(text: string, entries: Entries): string {
  const lines = linesOf(text);
  const sections = sectionsOf(lines);
  const lineOf = firstLines(lines, (line, i) => {
    const key = iniKey(line);
    return key === null ? null : iniId(sections[i]!, key);
  });
  const lastOf = new Map(sections.map((section, i) => [section, i]));
  const after = new Map<number, string[]>(); // lines added after line i (-1: before the first)
  const added = new Map<string, string[]>(); // sections appended, with their lines
  for (const [path, value] of entries) {
    const dot = path.indexOf('.');
    const [section, key] = dot > 0 ? [path.slice(0, dot), path.slice(dot + 1)] : ['', path];
    const line = `${key}=${value}`;
    const at = lineOf.get(iniId(section, key));
    if (at !== undefined) lines[at] = line;
    else if (section === '' || lastOf.has(section)) pushTo(after, lastOf.get(section) ?? -1, line);
    else pushTo(added, section, line);
  }
  const out = [...(after.get(-1) ?? [])];
  lines.forEach((line, i) => out.push(line, ...(after.get(i) ?? [])));
  for (const [section, keys] of added) out.push(`[${section}]`, ...keys);
  return joined(out);
}

/** One id for a key in its section. */
const iniId = (section: string, key: string): string => `${section}\n${key}`;

/** The key of a `key=value` line (not of a comment or a header). */
function iniKey(line: string): string | null {
  return /^\s*[#;[]/.test(line) ? null : (/^\s*([^=\s]+)\s*=/.exec(line)?.[1] ?? null);
}

function pushTo<K>(map: Map<K, string[]>, at: K, line: string): void {
  const list = map.get(at);
  if (list) list.push(line);
  else map.set(at, [line]);
}

/** The section each line belongs to ('' before the first header). */
function sectionsOf(lines: string[]): string[] {
  let current = '';
  return lines.map((line) => {
    const header = /^\s*\[([^\]]*)\]/.exec(line);
    if (header) current = header[1]!.trim();
    return current;
  });
}

type Segment = string | number;

/** `listeners[0].host` → ['listeners', 0, 'host']; null for a path that names a prototype key. */
function segmentsOf(path: string): Segment[] | null {
  const segments: Segment[] = [];
  for (const part of path.split('.')) {
    const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) return null;
    if (m[1] !== '') segments.push(m[1]!);
    for (const index of m[2]!.matchAll(/\[(\d+)\]/g)) segments.push(Number(index[1]));
  }
  return segments.length && !segments.some((s) => s === '__proto__' || s === 'constructor' || s === 'prototype') ? segments : null;
}

/** The concrete paths `segments` names in `root` (`*`: every existing key or index there). */
function expand(root: unknown, segments: Segment[]): Segment[][] {
  const star = segments.indexOf('*');
  if (star < 0) return [segments];
  let node: unknown = root;
  for (const s of segments.slice(0, star)) node = node && typeof node === 'object' ? (node as Record<string, unknown>)[s] : undefined;
  if (!node || typeof node !== 'object') return [];
  const keys: Segment[] = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
  return keys.flatMap((k) => expand(root, [...segments.slice(0, star), k, ...segments.slice(star + 1)]));
}

/** `true`/`false` and integers as such, everything else as a string. */
function typed(value: string): string | number | boolean {
  if (value === 'true' || value === 'false') return value === 'true';
  if (/^-?\d{1,15}$/.test(value)) return Number(value);
  return value;
}

function setPath(root: Record<string, unknown>, path: Segment[], value: unknown): void {
  let node: Record<string | number, unknown> = root;
  path.forEach((segment, i) => {
    if (i === path.length - 1) {
      node[segment] = value;
      return;
    }
    const next = node[segment];
    if (!next || typeof next !== 'object') node[segment] = typeof path[i + 1] === 'number' ? [] : {};
    node = node[segment] as Record<string | number, unknown>;
  });
}

function editJson(text: string, entries: Entries): string {
  let root: unknown;
  try {
    root = text.trim() === '' ? {} : JSON.parse(text);
  } catch (err) {
    throw new ConfigParseError(`it is not valid JSON (${(err as Error).message})`);
  }
  if (!root || typeof root !== 'object') throw new ConfigParseError('it is not a JSON object');
  for (const [key, value] of entries) {
    const segments = segmentsOf(key);
    if (!segments) continue;
    for (const path of expand(root, segments)) setPath(root as Record<string, unknown>, path, typed(value));
  }
  return JSON.stringify(root, null, 4) + '\n';
}

function editYaml(text: string, entries: Entries): string {
  // yaml's own check of unique keys is quadratic: repeatedKey is one pass
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length) throw new ConfigParseError(`it is not valid YAML (${doc.errors[0]!.message.split('\n')[0]})`);
  const twice = repeatedKey(doc);
  if (twice !== null) throw new ConfigParseError(`it is not valid YAML (the key ${twice.key} appears twice in one mapping)`);
  const view: unknown = doc.toJS() ?? {};
  if (typeof view !== 'object') throw new ConfigParseError('it is not a YAML mapping');
  for (const [key, value] of entries) {
    const segments = segmentsOf(key);
    if (!segments) continue;
    for (const path of expand(view, segments)) doc.setIn(path, typed(value));
  }
  return doc.toString();
}

