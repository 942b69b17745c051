/**
 * When we run as root, other users (the `postgres` user of the embedded database, the unprivileged
 * users server processes run as) must be able to walk down to their own directories. Where an
 * ancestor is not searchable by others (e.g. a 0700 temp folder) we add the execute (search) bit for
 * others only: it lets them reach a path they know, not list or read anything on the way.
 */
import { promises as fs, statSync } from 'node:fs';
import path from 'node:path';
import { childLogger } from '../logger.js';

const log = childLogger('fs');

/** Makes every ancestor of `target` searchable by others (no-op unless running as root). */
export async function makeTraversable(target: string): Promise<void> {
  if (process.getuid?.() !== 0) return;
  let current = path.dirname(path.resolve(target));
  const chain: string[] = [];
  while (current !== path.dirname(current)) {
    chain.push(current);
    current = path.dirname(current);
  }
  for (const d of chain) {
    const mode = statSync(d).mode;
    if ((mode & 0o001) === 0) {
      log.warn({ dir: d }, 'adding the search (x) permission for others so that an unprivileged user can reach its own directory below');
      await fs.chmod(d, (mode & 0o7777) | 0o001);
    }
  }
}
