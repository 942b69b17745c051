/** The panel's side of a blueprint's file deny-list (src/shared/file-denylist.ts): a 403 naming the path. */
import { AppError } from '../errors.js';
import { deniedMessage, denylistMatcher } from '../shared/file-denylist.js';

/** Throws 403 FORBIDDEN when one of `paths` (normalised) matches one of the patterns. */
export function assertNotDenied(patterns: readonly string[] | null | undefined, paths: readonly string[]): void {
  const match = denylistMatcher(patterns);
  for (const path of paths) {
    const pattern = match(path);
    if (pattern !== null) throw new AppError('FORBIDDEN', deniedMessage(path, pattern), { path, pattern });
  }
}
