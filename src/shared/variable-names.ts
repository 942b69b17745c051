/**
 * Names of blueprint variables. Variables reach the server's process as environment variables, so a
 * name that changes how the runtime, the shell or the loader behaves is reserved: the panel refuses it
 * in a blueprint, and the agent drops it from a server's environment. With them, the names glibc
 * removes from the environment of a setuid program (its "unsecure" list, less TMPDIR and TZDIR), as
 * a server's process may run one (GLIBC_TUNABLES: CVE-2023-4911).
 */
export const VARIABLE_KEY_RE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export const BLOCKED_VARS =
  /^(LD_.*|P_SERVER_UUID|NODE_OPTIONS|NODE_PATH|HOME|PATH|SERVER_ID|SERVER_DIR|SERVER_MEMORY|SERVER_CPU|SERVER_DISK|NODE|ASSETS_DIR|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|IFS|PS4|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|GLIBC_TUNABLES|GCONV_PATH|GETCONF_DIR|HOSTALIASES|LOCALDOMAIN|LOCPATH|MALLOC_TRACE|NIS_PATH|NLSPATH|RESOLV_HOST_CONF|RES_OPTIONS)$/;

/** Null for a name a blueprint may use, else why not. */
export function variableNameProblem(name: string): string | null {
  if (!VARIABLE_KEY_RE.test(name)) return 'must be 1-64 letters, digits or underscores, not starting with a digit';
  if (BLOCKED_VARS.test(name)) return 'is reserved (the runtime or the panel sets it)';
  // a record key that JavaScript objects and JSON parsers treat as the prototype: its value would be lost
  if (name === '__proto__') return 'is reserved';
  return null;
}
