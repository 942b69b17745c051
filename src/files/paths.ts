/**
 * File paths on the panel: the same rules as the node's (src/agent/filesystem/paths.ts), as the
 * panel's error. The panel checks them before it asks the node, for the `paths` scopes of subusers.
 */
import { commonParent, pathComponents, displayPath } from '../agent/filesystem/paths.js';
import { AppError } from '../errors.js';
import { withinScopes } from '../shared/scopes.js';

/** `/a/b` for a user's path, or 422 INVALID_PATH (with the field it came in). */
export function normalisePath(raw: unknown, field = 'path'): string {
  try {
    return displayPath(pathComponents(raw ?? '/'));
  } catch (err) {
    throw new AppError('INVALID_PATH', (err as Error).message, { fields: { [field]: (err as Error).message } });
  }
}

/** Where a compress puts its archive when not told: `archive-<date>_<time>.tar.gz` in the folder its paths share. */
export function defaultArchivePath(paths: readonly string[], scopes: readonly string[] = [], now = new Date()): string {
  const stamp = now.toISOString().replace(/\.\d+Z$/, '').replace(/:/g, '-').replace('T', '_');
  let folder = displayPath(commonParent(paths.map((p) => pathComponents(p))));
  // a caller limited to some folders who compresses one of them whole: the folder they share lies
  // above it, so the archive goes into the caller's folder that holds the paths
  if (!withinScopes(scopes, folder)) folder = scopes.find((s) => paths.every((p) => withinScopes([s], p))) ?? folder;
  return `${folder === '/' ? '' : folder}/archive-${stamp}.tar.gz`;
}

/** The folder a path is in (`/` for the root and what lies in it). */
export const parentFolder = (path: string): string => displayPath(pathComponents(path).slice(0, -1));
