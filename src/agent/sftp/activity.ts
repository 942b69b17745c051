/**
 * The activity of one SFTP session, reported to the panel in batches: the uploads, deletes, renames,
 * new folders and mode changes of a few seconds become one entry per kind (`server:file.upload` …
 * with `via: sftp`), so that copying a folder of a thousand files makes a few entries, not a thousand.
 *
 * The properties have the types of the file manager's entries of the same events
 * (src/services/files.service.ts): `count` a number and `paths` a list for uploads and deletes (as
 * the file manager's `server:file.delete`), `renames` a list of `{ from, to }` for renames; an entry
 * of a single file also has the file manager's own keys (`path`, or `from` and `to` for a rename;
 * none for a delete), so that it reads like theirs.
 */
import { randomUUID } from 'node:crypto';
import { SFTP_REPORT_MAX_LISTED, type ActivityProperties, type ConsoleActivityReport } from '../../shared/node-protocol';

const FLUSH_AFTER_MS = 2_000;
/** Files named in one entry at most (the rest are counted). */
export const MAX_LISTED = SFTP_REPORT_MAX_LISTED;
/** Characters of paths named in one entry at most (always the first path, cut at 4096 at most). */
const MAX_LISTED_CHARS = 8_000;
const MAX_PATH_CHARS = 4_096;

export type SftpAction = 'upload' | 'delete' | 'rename' | 'create-directory' | 'chmod';
type PathAction = Exclude<SftpAction, 'rename'>;

interface Rename {
  from: string;
  to: string;
}

export class SftpActivity {
  private pending = new Map<SftpAction, Array<string | Rename>>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly who: { serverId: string; userId: string; ip: string | null },
    private readonly report: (r: ConsoleActivityReport) => void,
  ) {}

  add(action: PathAction, path: string): void;
  add(action: 'rename', rename: Rename): void;
  add(action: SftpAction, item: string | Rename): void {
    const list = this.pending.get(action) ?? [];
    list.push(item);
    this.pending.set(action, list);
    this.timer ??= setTimeout(() => this.flush(), FLUSH_AFTER_MS);
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const at = new Date().toISOString();
    for (const [action, items] of this.pending) {
      const properties = action === 'rename' ? renameProperties(items as Rename[]) : pathProperties(action, items as string[]);
      this.report({ kind: 'activity', id: randomUUID(), serverId: this.who.serverId, userId: this.who.userId, event: `server:file.${action}`, properties, ip: this.who.ip, at });
    }
    this.pending.clear();
  }
}

const cut = (path: string): string => path.slice(0, MAX_PATH_CHARS);

/** The first items, at most MAX_LISTED of them and MAX_LISTED_CHARS characters (the first always). */
function listed<T>(items: T[], chars: (item: T) => number): T[] {
  const out: T[] = [];
  let used = 0;
  for (const item of items.slice(0, MAX_LISTED)) {
    used += chars(item);
    if (out.length && used > MAX_LISTED_CHARS) break;
    out.push(item);
  }
  return out;
}

function pathProperties(action: PathAction, paths: string[]): ActivityProperties {
  const properties: ActivityProperties = { via: 'sftp', count: paths.length, paths: listed(paths.map(cut), (p) => p.length) };
  // the file manager's delete names its paths only; its other entries name the one path
  if (action !== 'delete' && paths.length === 1) properties.path = cut(paths[0]!);
  return properties;
}

function renameProperties(renames: Rename[]): ActivityProperties {
  const cutRenames = renames.map((r) => ({ from: cut(r.from), to: cut(r.to) }));
  const properties: ActivityProperties = { via: 'sftp', count: renames.length, renames: listed(cutRenames, (r) => r.from.length + r.to.length) };
  if (renames.length === 1) Object.assign(properties, cutRenames[0]);
  return properties;
}
