/**
 * Who a server's processes run as. An agent running as root (a node's usual service, and
 * `npm start` as root) never runs a server as root: each server gets its own unprivileged user id,
 * derived from its id, owning its directory (mode 0700). So a server cannot read the panel's secrets
 * in DATA_DIR (master key, database credentials, state.json: all 0600 root), nor another server's
 * files. An agent running as an ordinary user runs servers as that user (it cannot switch).
 *
 * The ids need no /etc/passwd entry. They are taken from a range far above the ones distributions
 * hand out (2,000,000 … 2,999,999); two servers share one only in the rare case that their ids hash
 * alike.
 */
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { forEachEntry } from './proc';

export interface ServerIdentity {
  uid: number;
  gid: number;
}

export const SERVER_UID_BASE = 2_000_000;
const SERVER_UID_SPAN = 1_000_000;

/** The identity the server's processes run as, or null to run them as the agent itself. */
export function identityFor(serverId: string): ServerIdentity | null {
  if (process.getuid?.() !== 0) return null;
  const n = createHash('sha256').update(serverId).digest().readUInt32BE(0) % SERVER_UID_SPAN;
  return { uid: SERVER_UID_BASE + n, gid: SERVER_UID_BASE + n };
}

/**
 * Makes `dir` the server's own: owned by its identity, mode 0700, everything inside owned by it too
 * (files the agent wrote, or a directory from before servers had identities). Cheap when it already is:
 * the tree is walked only when the directory itself has another owner.
 */
export async function ownDirectory(dir: string, id: ServerIdentity | null): Promise<void> {
  if (!id) return;
  const st = await fsp.stat(dir);
  if (st.uid === id.uid && st.gid === id.gid && (st.mode & 0o777) === 0o700) return;
  if (st.uid !== id.uid) await forEachEntry(dir, (entry) => fsp.lchown(entry, id.uid, id.gid).catch(() => undefined));
  await fsp.chown(dir, id.uid, id.gid);
  await fsp.chmod(dir, 0o700);
}
