/**
 * A blueprint's file deny-list (Pterodactyl's `file_denylist`): gitignore-style patterns, matched as
 * Wings matches them (`server.jar` anywhere, `/eula.txt` at the root only, `config/` a folder and
 * everything in it, `*.sh`, `!keep.sh` to let one through). The panel checks the paths of file
 * operations against it, and the node's SFTP server the paths of SFTP requests.
 */
import ignore from 'ignore';

/** Which pattern denies a path (`/a/b`, normalised), or null. The root is never denied. */
export type DenylistMatcher = (path: string) => string | null;

const NOTHING: DenylistMatcher = () => null;

export function denylistMatcher(patterns: readonly string[] | null | undefined): DenylistMatcher {
  if (!patterns?.length) return NOTHING;
  const ig = ignore({ allowRelativePaths: true }).add([...patterns]);
  return (path) => {
    const rel = path.replace(/^\/+/, '');
    if (rel === '') return null;
    // as a file, and as a folder (a pattern such as `config/` names the folder itself too)
    for (const candidate of [rel, `${rel}/`]) {
      const r = ig.test(candidate);
      if (r.ignored) return r.rule?.pattern ?? candidate;
    }
    return null;
  };
}

/** The message of a refusal: the path, why, and what to do. */
export function deniedMessage(path: string, pattern: string): string {
  return `${path} is protected by this server's blueprint (file deny-list pattern "${pattern}"): it cannot be read or changed through the file manager or SFTP. Ask an administrator if it must change.`;
}
