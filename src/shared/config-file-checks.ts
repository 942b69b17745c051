/**
 * The checks of a blueprint's configuration files, in one place: the egg import
 * (src/blueprints/egg-config-files.ts), the administrators' input (src/validation/blueprints.ts) and
 * the agent's copy of a server's settings (src/agent/http/validation.ts) use them. Each returns null
 * for a good value, else the message of the 422.
 */
import { refusedPlaceholders, type ConfigParser } from './config-files';

export const CONFIG_LIMITS = { files: 20, keys: 100, key: 255, value: 4096, file: 255 } as const;

export const ALLOWED_PLACEHOLDERS = '{{server.build.default.port}}, {{server.build.default.ip}}, {{server.build.memory}}, {{server.build.env.X}} and {{env.X}}';

/** A relative path inside the server's directory. */
export function configFileNameProblem(name: string): string | null {
  const ok =
    name.length > 0 &&
    name.length <= CONFIG_LIMITS.file &&
    !name.startsWith('/') &&
    !/[\u0000\\]/.test(name) &&
    name.split('/').every((p) => p !== '..' && p !== '');
  return ok ? null : `the file name must be a relative path inside the server\u2019s directory (no \`..\`, at most ${CONFIG_LIMITS.file} characters)`;
}

/**
 * What no key or value may hold: control characters but tab, the line breaks of YAML 1.1 readers
 * (NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR: SnakeYAML and PyYAML end a line there, so a value would
 * write keys of its own), and lone surrogates (not text; PostgreSQL refuses them).
 */
const NOT_PLAIN_TEXT = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\p{Cs}]/u;

/** A key of any parser: 1-255 characters of plain text. */
export function configKeyProblem(key: string): string | null {
  if (key.trim() === '' || key.length > CONFIG_LIMITS.key) return `the key must be 1-${CONFIG_LIMITS.key} characters`;
  return NOT_PLAIN_TEXT.test(key) ? 'the key must be plain text (no control characters or line breaks)' : null;
}

const XML_NAME = /^[\p{L}_][\p{L}\p{N}_:-]*$/u;

/** What a parser cannot do with a key: xml takes a dotted path of element names from the root, without `*`. */
export function parserKeyProblem(parser: ConfigParser, key: string): string | null {
  if (parser !== 'xml') return null;
  const parts = key.split('.');
  return parts.length >= 2 && parts.every((p) => XML_NAME.test(p))
    ? null
    : 'an xml key is a dotted path of element names from the root element, e.g. `Config.ServerPort` (no `*`, no `[0]`)';
}

/** One line of at most 4096 characters of plain text. */
export function configValueProblem(value: string): string | null {
  return value.length > CONFIG_LIMITS.value || NOT_PLAIN_TEXT.test(value)
    ? `must be one line of at most ${CONFIG_LIMITS.value} characters, without control characters or line breaks`
    : null;
}

/** A placeholder outside the allow-list (src/shared/config-files.ts). */
export function placeholderProblem(value: string): string | null {
  const refused = refusedPlaceholders(value);
  return refused.length ? `the placeholder ${refused[0]} is not allowed (only ${ALLOWED_PLACEHOLDERS})` : null;
}
