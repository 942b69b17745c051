/**
 * An egg's `config.files` as the blueprint's `configFiles`: per file, a parser the agent applies and
 * the keys it writes at each start (see src/shared/config-files.ts and src/agent/config-files/). The
 * checks are those of the administrators' input (src/shared/config-file-checks.ts). A malformed
 * entry is a 422 naming `config.files.<file>`; a parser the agent does not apply, a conditional
 * replacement (an object of match → value), a key its parser cannot follow (`*` in an xml key) and
 * a placeholder outside the allow-list are warnings:
 * skipped, or refused by the agent at start.
 */
import { CONFIG_LIMITS, configFileNameProblem, configKeyProblem, configValueProblem, parserKeyProblem, placeholderProblem } from '../shared/config-file-checks.js';
import { CONFIG_PARSERS, type ConfigFile, type ConfigParser } from '../shared/config-files.js';
import { EggError, type ImportWarning } from './egg-errors.js';

export function mapConfigFiles(files: unknown, warnings: ImportWarning[]): ConfigFile[] {
  if (files === null || files === undefined) return [];
  if (Array.isArray(files)) {
    if (files.length) throw new EggError({ 'config.files': 'must be an object: file name → { parser, find }' });
    return [];
  }
  const entries = Object.entries(files as Record<string, unknown>);
  if (entries.length > CONFIG_LIMITS.files) throw new EggError({ 'config.files': `at most ${CONFIG_LIMITS.files} files` });
  return entries.flatMap(([name, entry]) => {
    const mapped = mapFile(name, entry, warnings);
    return mapped ? [mapped] : [];
  });
}

/** Whether a value writes the server's port (then the blueprint needs SERVER_PORT). */
export function usesPort(files: ConfigFile[]): boolean {
  return files.some((f) => Object.values(f.find).some((v) => /\{\{\s*(?:server\.build\.default\.port|(?:server\.build\.)?env\.SERVER_PORT)\s*\}\}/.test(v)));
}

function mapFile(name: string, entry: unknown, warnings: ImportWarning[]): ConfigFile | null {
  const field = `config.files.${name}`;
  const problem = configFileNameProblem(name);
  if (problem) throw new EggError({ [field]: problem });
  if (!isObject(entry) || typeof entry.parser !== 'string' || !isObject(entry.find)) {
    throw new EggError({ [field]: 'must be an object with `parser` (a string) and `find` (an object of key → value)' });
  }
  // Wings reads `yml` as `yaml`
  const parser = entry.parser.trim().toLowerCase().replace(/^yml$/, 'yaml');
  if (!(CONFIG_PARSERS as readonly string[]).includes(parser)) {
    warnings.push({ field: `${field}.parser`, message: `the parser "${entry.parser.slice(0, 50)}" is not supported: ${name} is not changed at start` });
    return null;
  }
  const keys = Object.entries(entry.find);
  if (keys.length > CONFIG_LIMITS.keys) throw new EggError({ [`${field}.find`]: `at most ${CONFIG_LIMITS.keys} keys` });
  const find: Record<string, string> = {};
  for (const [key, value] of keys) {
    const mapped = mapValue(`${field}.find.${key}`, parser as ConfigParser, key, value, warnings);
    if (mapped !== null) find[key] = mapped;
  }
  return Object.keys(find).length ? { file: name, parser: parser as ConfigParser, find } : null;
}

function mapValue(field: string, parser: ConfigParser, key: string, value: unknown, warnings: ImportWarning[]): string | null {
  const keyProblem = configKeyProblem(key);
  if (keyProblem) throw new EggError({ [field]: keyProblem });
  const unsupported = parserKeyProblem(parser, key);
  if (unsupported) {
    warnings.push({ field, message: `${unsupported}: the key is not written` });
    return null;
  }
  if (isObject(value)) {
    warnings.push({ field, message: 'conditional replacements (an object of match → value) are not supported: the key is not written' });
    return null;
  }
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') throw new EggError({ [field]: 'must be a string' });
  const text = String(value);
  const valueProblem = configValueProblem(text);
  if (valueProblem) throw new EggError({ [field]: valueProblem });
  const refused = placeholderProblem(text);
  if (refused) warnings.push({ field, message: `${refused}: the key is not written at start` });
  return text;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
