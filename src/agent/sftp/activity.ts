/**
 * The activity of one SFTP session, reported to the panel in batches: the uploads, deletes and
 * renames of a few seconds become one entry per kind (`server:file.upload` … with `via: sftp`, how
 * many, and the first paths), so that copying a folder of a thousand files makes three entries,
 * not a thousand.
 */
import type { ConsoleActivityReport } from '../../shared/node-protocol';

const FLUSH_AFTER_MS = 2_000;
const MAX_LISTED = 50;

export type SftpAction = 'upload' | 'delete' | 'rename';

export class SftpActivity {
  private pending = new Map<SftpAction, string[]>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly who: { serverId: string; userId: string; ip: string | null },
    private readonly report: (r: ConsoleActivityReport) => void,
  ) {}

  add(action: SftpAction, path: string): void {
    const list = this.pending.get(action) ?? [];
    list.push(path);
    this.pending.set(action, list);
    this.timer ??= setTimeout(() => this.flush(), FLUSH_AFTER_MS);
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const at = new Date().toISOString();
    for (const [action, paths] of this.pending) {
      const listed = paths.slice(0, MAX_LISTED).join('\n').slice(0, 4000);
      const properties = { via: 'sftp', count: String(paths.length), paths: listed };
      this.report({ kind: 'activity', serverId: this.who.serverId, userId: this.who.userId, event: `server:file.${action}`, properties, ip: this.who.ip, at });
    }
    this.pending.clear();
  }
}
