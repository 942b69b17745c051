import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { childLogger } from '../../logger';
import { removeAsOwner } from '../environment/isolation';

const log = childLogger('agent');

/** Prefix of a deleted server's directory while it is being removed (leftovers are removed at boot). */
export const TRASH_PREFIX = '.deleted-';

/**
 * Renames `dir` to a trash name next to it (one rename: a directory of 150,000 files takes seconds to
 * remove, and the panel's call would time out) and removes that in the background, as its owner (see
 * removeAsOwner).
 */
export async function removeInBackground(dir: string): Promise<void> {
  const trash = path.join(path.dirname(dir), `${TRASH_PREFIX}${path.basename(dir)}-${Date.now()}`);
  try {
    await fsp.rename(dir, trash);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  void removeAsOwner(trash).catch((err: Error) => log.warn({ dir: trash, err: err.message }, "could not remove all of a deleted server's files"));
}

/** Removes the trash a previous run did not finish (agent boot). */
export async function removeLeftoverTrash(serversDir: string): Promise<void> {
  for (const name of await fsp.readdir(serversDir).catch(() => [] as string[])) {
    if (name.startsWith(TRASH_PREFIX)) void removeAsOwner(path.join(serversDir, name)).catch(() => undefined);
  }
}
