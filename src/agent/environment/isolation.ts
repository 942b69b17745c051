/**
 * Who a server's processes run as. An agent running as root (a node's usual service, and
 * `npm start` as root) never runs a server as root: each server gets its own unprivileged user id,
 * derived from its id, owning its directory (mode 0700). So a server cannot read the panel's secrets
 * in DATA_DIR (master key, database credentials, state.json: all 0600 root), nor another server's
 * files. An agent running as an ordinary user cannot switch users: it refuses to install and start
 * servers (their processes would have the agent's privileges, and read what the agent reads) unless
 * the operator opts in with ALLOW_UNISOLATED_SERVERS=true.
 *
 * The ids need no /etc/passwd entry. They are taken from a range far above the ones distributions
 * hand out (2,000,000 … 2,999,999), one per server, never two servers the same (UidAllocator), and kept
 * in the agent's state.json with the server. The directory holding the servers' directories is 0711:
 * a server reaches its own directory but cannot list the others.
 */
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { AgentError } from '../errors';
import { forEachEntry } from './proc';

export interface ServerIdentity {
  uid: number;
  gid: number;
}

export const SERVER_UID_BASE = 2_000_000;
export const SERVER_UID_SPAN = 1_000_000;

/**
 * Hands out server uids, each to one server at a time. Claims are synchronous, so two servers created
 * at once cannot get the same uid. New uids keep counting upwards from the highest one handed out,
 * so a removed server's uid is not handed out again soon (only when the range wraps around).
 */
export class UidAllocator {
  private readonly used = new Set<number>();
  private next = SERVER_UID_BASE;

  /** Reserves `wanted` (a uid a server already has) when it is a free server uid, else a new one. */
  claim(wanted?: number | null): number {
    if (typeof wanted === 'number' && Number.isInteger(wanted) && wanted >= SERVER_UID_BASE && wanted < SERVER_UID_BASE + SERVER_UID_SPAN && !this.used.has(wanted)) {
      return this.take(wanted);
    }
    for (let i = 0; i < SERVER_UID_SPAN; i++) {
      const uid = SERVER_UID_BASE + ((this.next - SERVER_UID_BASE + i) % SERVER_UID_SPAN);
      if (!this.used.has(uid)) return this.take(uid);
    }
    throw new AgentError(507, 'NO_FREE_UID', `All ${SERVER_UID_SPAN} server user ids of this node are in use`);
  }

  release(uid: number): void {
    this.used.delete(uid);
  }

  private take(uid: number): number {
    this.used.add(uid);
    if (uid >= this.next) this.next = uid + 1;
    return uid;
  }
}

/** Whether this agent can give servers users of their own (it runs as root). */
export function canIsolate(): boolean {
  return process.getuid?.() === 0;
}

/** The agent's error code for an install or start refused because the server cannot be isolated. */
export const NOT_ISOLATED = 'SERVER_NOT_ISOLATED';

const NOT_ISOLATED_MESSAGE =
  'This node agent does not run as root, so it cannot run servers as users of their own: a server would run ' +
  "with the agent's privileges and could read the agent's files and secrets. Run the node agent as root, or set " +
  'ALLOW_UNISOLATED_SERVERS=true to run servers unisolated (only when every user who can create servers is trusted).';

/** The refusal to install or start a server without an identity of its own, or null when allowed. */
export function isolationRefusal(identity: ServerIdentity | null, allowUnisolated: boolean): AgentError | null {
  return identity || allowUnisolated ? null : new AgentError(422, NOT_ISOLATED, NOT_ISOLATED_MESSAGE);
}

/** The warning an agent logs at boot when it cannot isolate servers, or null when it can. */
export function isolationWarning(allowUnisolated: boolean): string | null {
  if (canIsolate()) return null;
  return allowUnisolated
    ? 'servers run UNISOLATED, with the privileges of this agent (not root; ALLOW_UNISOLATED_SERVERS=true): any server can read what this agent can read'
    : 'servers cannot be isolated (the agent does not run as root): installs and starts are refused; run the agent as root, or set ALLOW_UNISOLATED_SERVERS=true to accept the risk';
}

/** The identity of a server with that uid, or null when the agent cannot switch users (not root). */
export function identityFor(uid: number): ServerIdentity | null {
  return canIsolate() ? { uid, gid: uid } : null;
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

/** Whether `uid` is one of the server uids (see UidAllocator). */
export function isServerUid(uid: number): boolean {
  return uid >= SERVER_UID_BASE && uid < SERVER_UID_BASE + SERVER_UID_SPAN;
}

/**
 * Removes a server's (trash) directory. Its contents are removed by its owner, the server's user, not
 * by root: a process of that user still running could swap a directory for a symlink during the walk,
 * and would then only make the removal reach what that user may delete anyway. Root then removes the
 * emptied directory itself (its parent is root's). A directory owned by anyone else (an agent that is
 * not root) is removed by the agent. Resolves once done; throws when something was left.
 */
export async function removeAsOwner(dir: string): Promise<void> {
  let st;
  try {
    st = await fsp.lstat(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  if (!canIsolate() || !st.isDirectory() || !isServerUid(st.uid)) {
    await fsp.rm(dir, { recursive: true, force: true });
    return;
  }
  // rm fails on `dir` itself (its parent is root's) once it has emptied it
  await new Promise<void>((resolve) => {
    const rm = spawn('rm', ['-rf', '--one-file-system', '--', dir], { uid: st.uid, gid: st.gid, stdio: 'ignore' });
    rm.on('error', () => resolve());
    rm.on('exit', () => resolve());
  });
  await fsp.rmdir(dir);
}
