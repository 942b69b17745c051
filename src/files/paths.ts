/**
 * File paths on the panel: the same rules as the node's (src/agent/filesystem/paths.ts), as the
 * panel's error. The panel checks them before it asks the node, for the `paths` scopes of subusers.
 */
import { pathComponents, displayPath } from '../agent/filesystem/paths.js';
import { AppError } from '../errors.js';

/** `/a/b` for a user's path, or 422 INVALID_PATH (with the field it came in). */
export function normalisePath(raw: unknown, field = 'path'): string {
  try {
    return displayPath(pathComponents(raw ?? '/'));
  } catch (err) {
    throw new AppError('INVALID_PATH', (err as Error).message, { fields: { [field]: (err as Error).message } });
  }
}
