/**
 * Folder scopes (a subuser's `paths`, CONTRACT §9): which normalised paths (`/a/b`) they cover. The
 * panel's permission policy and the node's file worker (which checks where links really lead) ask
 * these same two functions.
 */

/** Whether `path` lies in one of `scopes` (each normalised); no scope = everywhere. */
export function withinScopes(scopes: readonly string[], path: string): boolean {
  if (!scopes.length) return true;
  return scopes.some((s) => s === '/' || path === s || path.startsWith(s + '/'));
}

/** Whether `path` lies in a scope or is a folder on the way to one (`/` and `/a` for the scope `/a/b`). */
export function onTheWay(scopes: readonly string[], path: string): boolean {
  return withinScopes(scopes, path) || scopes.some((s) => path === '/' || s.startsWith(path + '/'));
}
