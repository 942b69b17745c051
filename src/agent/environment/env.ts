import { assetsDir } from '../paths';
import type { ServerSpec } from '../../shared/node-protocol';
import { BLOCKED_VARS, VARIABLE_KEY_RE } from '../../shared/variable-names';

export { VARIABLE_KEY_RE };

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The user-defined variables that are actually applied (invalid or reserved names are dropped). */
export function userVariables(spec: ServerSpec): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(spec.variables ?? {})) {
    if (!VARIABLE_KEY_RE.test(k) || BLOCKED_VARS.test(k)) continue;
    out[k] = String(v);
  }
  return out;
}

/** Built-in values; they win over user variables. */
export function builtinVariables(spec: ServerSpec, dir: string, assets = assetsDir()): Record<string, string> {
  return {
    NODE: process.execPath,
    ASSETS_DIR: assets,
    SERVER_ID: spec.id,
    SERVER_DIR: dir,
    SERVER_MEMORY: String(spec.memory),
    SERVER_CPU: String(spec.cpu),
    SERVER_DISK: String(spec.disk),
  };
}

/** The PATH of servers' processes: the agent's own. */
export function childPath(): string {
  return process.env.PATH || DEFAULT_PATH;
}

/** Values available to `{{VAR}}` substitution in the startup template. */
export function templateVariablesFor(spec: ServerSpec, dir: string, assets?: string): Record<string, string> {
  return { ...userVariables(spec), ...builtinVariables(spec, dir, assets) };
}

/**
 * The child's whole environment. Built from scratch (never a copy of the agent's env) so that the
 * node token and any other secret of the agent cannot leak: only PATH/LANG/TZ are taken over.
 */
export function childEnv(spec: ServerSpec, dir: string): Record<string, string> {
  const env: Record<string, string> = {
    PATH: childPath(),
    LANG: process.env.LANG || 'C.UTF-8',
    HOME: dir,
    USER: 'container',
    TERM: 'dumb',
  };
  if (process.env.TZ) env.TZ = process.env.TZ;
  Object.assign(env, userVariables(spec));
  const b = builtinVariables(spec, dir);
  env.SERVER_ID = b.SERVER_ID!;
  env.SERVER_DIR = b.SERVER_DIR!;
  env.SERVER_MEMORY = b.SERVER_MEMORY!;
  env.SERVER_CPU = b.SERVER_CPU!;
  env.SERVER_DISK = b.SERVER_DISK!;
  Object.assign(env, pterodactylVariables(spec));
  return env;
}

/**
 * What Pterodactyl gives egg scripts beside the egg's variables (SERVER_MEMORY is above): the
 * server's uuid, and SERVER_IP `0.0.0.0` where the server has no value of its own. SERVER_PORT is
 * the server's own variable (imported eggs get one, see src/blueprints/egg-startup.ts).
 */
function pterodactylVariables(spec: ServerSpec): Record<string, string> {
  return { P_SERVER_UUID: spec.id, SERVER_IP: userVariables(spec).SERVER_IP || '0.0.0.0' };
}
