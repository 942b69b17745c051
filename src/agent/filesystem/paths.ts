/**
 * Paths of the file manager as users give them: relative to the server's root (a leading `/` is that
 * root). A path is refused (INVALID_PATH) when it is not text, holds NUL, a component longer than 255
 * bytes or more than 4096 bytes in all, or leads above the root lexically (`..`). Symlinks are the
 * jail's business (src/agent/filesystem/jail.ts): it checks what it opened, not the string.
 */
import { randomBytes } from 'node:crypto';
import { AgentError } from '../errors';

export const MAX_PATH_BYTES = 4096;
export const MAX_NAME_BYTES = 255;
/** The name a write's temporary file starts with (beside its file until the rename; never listed). */
export const TEMP_PREFIX = '.hostpanel-tmp-';
/** The random part of a temporary file's name: this many bytes, in lowercase hex. */
const TEMP_RANDOM_BYTES = 8;
/** Exactly the names tempName makes, and no other: a user's `.hostpanel-tmp-notes.txt` is a file like any other. */
const TEMP_NAME = /^\.hostpanel-tmp-[0-9a-f]{16}$/; // TEMP_PREFIX, then TEMP_RANDOM_BYTES in hex

/** A new name for a write's temporary file. */
export const tempName = (): string => TEMP_PREFIX + randomBytes(TEMP_RANDOM_BYTES).toString('hex');

/**
 * Whether `name` is one tempName makes: a write's temporary file (under way, or left by a write the
 * worker or the agent was killed in; the file worker removes those when it starts, see Jail.sweepTemps).
 */
export const isTempName = (name: string): boolean => TEMP_NAME.test(name);

export const invalidPath = (message: string): AgentError => new AgentError(422, 'INVALID_PATH', message);

const LONE_SURROGATE = /\p{Cs}/u;

/**
 * What is wrong with one name of a path or of an archive entry, or null: longer than a file system
 * takes, or a name of the form of the file manager's temporary files (the file worker removes such
 * names when it starts: a file of the user's never has one, whatever made it).
 */
export function nameProblem(part: string): string | null {
  if (Buffer.byteLength(part) > MAX_NAME_BYTES) return `A file name is at most ${MAX_NAME_BYTES} bytes.`;
  if (isTempName(part)) return `${part}: names of this form are the file manager's own (its temporary files).`;
  return null;
}

/** The components of `raw` below the root (`[]` is the root itself); throws INVALID_PATH. */
export function pathComponents(raw: unknown): string[] {
  if (typeof raw !== 'string') throw invalidPath('A path is a string.');
  if (raw.includes('\u0000')) throw invalidPath('A path must not contain NUL.');
  // (U+FFFD is text: listings show only names that are UTF-8, so it never stands for other bytes there)
  if (LONE_SURROGATE.test(raw)) throw invalidPath('A path must be valid UTF-8 text.');
  if (Buffer.byteLength(raw) > MAX_PATH_BYTES) throw invalidPath(`A path is at most ${MAX_PATH_BYTES} bytes.`);
  const out: string[] = [];
  for (const part of raw.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (!out.length) throw invalidPath('The path leads outside the server\u2019s directory.');
      out.pop();
      continue;
    }
    const problem = nameProblem(part);
    if (problem) throw invalidPath(problem);
    out.push(part);
  }
  return out;
}

/** `/a/b` for components `['a', 'b']` (the form paths take in answers). */
export const displayPath = (parts: readonly string[]): string => '/' + parts.join('/');

/** A single file name for a new entry (rename target, new folder): not empty, no `/`, not `.` or `..`. */
export function entryName(parts: readonly string[]): string {
  const name = parts[parts.length - 1];
  if (name === undefined) throw invalidPath('The server\u2019s root cannot be the target of this operation.');
  return name;
}

/** The folder all of `paths` are in (their longest common parent; `[]` for none). */
export function commonParent(paths: readonly (readonly string[])[]): string[] {
  let base = paths[0]?.slice(0, -1) ?? [];
  for (const p of paths.slice(1)) {
    let i = 0;
    while (i < base.length && i < p.length - 1 && base[i] === p[i]) i++;
    base = base.slice(0, i);
  }
  return base;
}

/** Where a symlink at `link` to `target` leads, as components below the root; throws INVALID_PATH for a target leading out. */
export function linkDestination(link: readonly string[], target: string): string[] {
  return target.startsWith('/') ? pathComponents(target) : pathComponents([...link.slice(0, -1), target].join('/'));
}

/**
 * The target of a new symlink at `link`, as written into the link: relative, and leading to a place
 * inside the server from the link's folder (a leading `/` is the server's root, rewritten relative
 * to the link, so that the link means the same to the server's processes). Throws INVALID_PATH for
 * a target leading out.
 */
export function linkTarget(link: readonly string[], target: string): string {
  const from = link.slice(0, -1);
  const to = linkDestination(link, target);
  let common = 0;
  while (common < from.length && common < to.length && from[common] === to[common]) common++;
  const up = from.slice(common).map(() => '..');
  return [...up, ...to.slice(common)].join('/') || '.';
}
