/**
 * Names of blueprint variables. Variables reach the server's process as environment variables, so a
 * name that changes how the runtime, the shell or the loader behaves is reserved: the panel refuses it
 * in a blueprint, and the agent drops it from a server's environment.
 */
export const VARIABLE_KEY_RE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export const BLOCKED_VARS =
  /^(LD_.*|NODE_OPTIONS|NODE_PATH|HOME|PATH|SERVER_ID|SERVER_DIR|SERVER_MEMORY|SERVER_CPU|SERVER_DISK|NODE|ASSETS_DIR|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|IFS|PS4|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS)$/;

/** Null for a name a blueprint may use, else why not. */
export function variableNameProblem(name: string): string | null {
  if (!VARIABLE_KEY_RE.test(name)) return 'must be 1-64 letters, digits or underscores, not starting with a digit';
  if (BLOCKED_VARS.test(name)) return 'is reserved (the runtime or the panel sets it)';
  return null;
}
