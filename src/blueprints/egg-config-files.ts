/**
 * An egg's `config.files` as the blueprint's `configFiles`: per file, a parser the agent applies and
 * the keys it writes at each start (see src/shared/config-files.ts and src/agent/config-files/). A
 * malformed entry is a 422 naming `config.files.<file>`; a parser the agent does not apply (`xml`, an
 * unknown one), a conditional replacement (an object of match → value) and a placeholder outside the
 * allow-list are warnings: skipped, or refused by the agent at start.
 */
import { CONFIG_PARSERS, refusedPlaceholders, type ConfigFile, type ConfigParser } from '../shared/config-files.js';
import { EggError, type ImportWarning } from './egg-errors.js';

const MAX_FILES = 20;
const MAX_KEYS = 100;
const MAX_VALUE = 4096;
const ALLOWED = '{{server.build.default.port}}, {{server.build.default.ip}}, {{server.build.memory}}, {{server.build.env.X}} and {{env.X}}';

export function mapConfigFiles(files: unknown, warnings: ImportWarning[]): ConfigFile[] {
  if (files === null || files === undefined) return [];
  if (Array.isArray(files)) {
    if (files.length) throw new EggError({ 'config.files': 'must be an object: file name → { parser, find }' });
    return [];
  }
  const entries = Object.entries(files as Record<string, unknown>);
  if (entries.length > MAX_FILES) throw new EggError({ 'config.files': `at most ${MAX_FILES} files` });
  return entries.flatMap(([name, entry]) => {
    const mapped = mapFile(name, entry, warnings);
    return mapped ? [mapped] : [];
  });
}

/** Whether a value writes the server's port (then the blueprint needs SERVER_PORT). */
export function usesPort(files: ConfigFile[]): boolean {
  return files.some((f) => Object.values(f.find).some((v) => /\{\{\s*server\.build\.default\.port\s*\}\}/.test(v)));
}

function mapFile(name: string, entry: unknown, warnings: ImportWarning[]): ConfigFile | null {
  const field = `config.files.${name}`;
  const problem = fileNameProblem(name);
  if (problem) throw new EggError({ [field]: problem });
  if (!isObject(entry) || typeof entry.parser !== 'string' || !isObject(entry.find)) {
    throw new EggError({ [field]: 'must be an object with `parser` (a string) and `find` (an object of key → value)' });
  }
  const parser = entry.parser.trim().toLowerCase();
  if (!(CONFIG_PARSERS as readonly string[]).includes(parser)) {
    warnings.push({ field: `${field}.parser`, message: `the parser "${entry.parser.slice(0, 50)}" is not supported: ${name} is not changed at start` });
    return null;
  }
  const keys = Object.entries(entry.find);
  if (keys.length > MAX_KEYS) throw new EggError({ [`${field}.find`]: `at most ${MAX_KEYS} keys` });
  const find: Record<string, string> = {};
  for (const [key, value] of keys) {
    const mapped = mapValue(`${field}.find.${key}`, key, value, warnings);
    if (mapped !== null) find[key] = mapped;
  }
  return Object.keys(find).length ? { file: name, parser: parser as ConfigParser, find } : null;
}

function mapValue(field: string, key: string, value: unknown, warnings: ImportWarning[]): string | null {
  if (key.trim() === '' || key.length > 255) throw new EggError({ [field]: 'the key must be 1-255 characters' });
  if (isObject(value)) {
    warnings.push({ field, message: 'conditional replacements (an object of match → value) are not supported: the key is not written' });
    return null;
  }
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') throw new EggError({ [field]: 'must be a string' });
  const text = String(value);
  if (text.length > MAX_VALUE || /[\u0000\r\n]/.test(text)) throw new EggError({ [field]: `must be one line of at most ${MAX_VALUE} characters` });
  const refused = refusedPlaceholders(text);
  if (refused.length) warnings.push({ field, message: `the placeholder ${refused[0]} is not allowed (only ${ALLOWED}): the key is not written at start` });
  return text;
}

/** Null for a relative path inside the server's directory, else why not. */
function fileNameProblem(name: string): string | null {
  const ok = name.length > 0 && name.length <= 255 && !name.startsWith('/') && !/[\u0000\\]/.test(name) && name.split('/').every((p) => p !== '..' && p !== '');
  return ok ? null : 'the file name must be a relative path inside the server\u2019s directory (no `..`, at most 255 characters)';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
