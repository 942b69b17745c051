/**
 * A blueprint's configuration files (an egg's `config.files`): keys the agent writes into the
 * server's files at each start. Values may hold placeholders from an allow-list, and only those:
 * Pterodactyl let eggs read the daemon's own configuration (`{{config.…}}`) into server files, so
 * every other placeholder is refused and its key is not written.
 */

/** The parsers the agent applies; eggs may name others, which the import skips. */
export const CONFIG_PARSERS = ['properties', 'file', 'ini', 'json', 'yaml', 'xml'] as const;
export type ConfigParser = (typeof CONFIG_PARSERS)[number];

export interface ConfigFile {
  /** relative to the server's directory, e.g. `server.properties`, `config/app.yml` */
  file: string;
  parser: ConfigParser;
  /** key (a line prefix for `file`, a dotted path for `json`/`yaml`/`xml`, `section.key` for `ini`) → value */
  find: Record<string, string>;
}

/** What the allowed placeholders read: the server's own values. */
export interface PlaceholderValues {
  port: string;
  ip: string;
  memory: string;
  /** the server's variables */
  env: Record<string, string>;
}

const PLACEHOLDER_RE = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The value of one allowed placeholder name, or null when the name is not allowed. */
function resolveName(name: string, values: PlaceholderValues): string | null {
  // the environment's names of the port, address and memory are those values, as in Wings (the
  // server's environment leaves out the reserved SERVER_MEMORY, and may lack SERVER_IP)
  const key = /^(?:server\.build\.env|env)\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(name)?.[1];
  if (name === 'server.build.default.port' || key === 'SERVER_PORT') return values.port;
  if (name === 'server.build.default.ip' || key === 'SERVER_IP') return values.ip;
  if (name === 'server.build.memory' || key === 'SERVER_MEMORY') return values.memory;
  if (key) return Object.hasOwn(values.env, key) ? values.env[key]! : '';
  return null;
}

/** The placeholders in `value` that are not allowed (as written, `{{…}}`). */
export function refusedPlaceholders(value: string): string[] {
  const probe: PlaceholderValues = { port: '', ip: '', memory: '', env: {} };
  return [...value.matchAll(PLACEHOLDER_RE)].filter((m) => resolveName(m[1]!, probe) === null).map((m) => m[0]);
}

/** `value` with its placeholders filled in, or the first refused placeholder. */
export function fillPlaceholders(value: string, values: PlaceholderValues): { value: string } | { refused: string } {
  const refused = refusedPlaceholders(value);
  if (refused.length) return { refused: refused[0]! };
  return { value: value.replace(PLACEHOLDER_RE, (_, name: string) => resolveName(name, values)!) };
}
