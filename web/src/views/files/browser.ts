/**
 * What the sections of a server's file browser share: the folder shown, the viewer's keys, the
 * message box, and the listing they reload or replace.
 */
import { describe, gql } from '../../api';
import { clear, h, type messageBox } from '../../dom';
import { Q_FILES, type FileEntry } from '../../queries';

export const ARCHIVE = /\.(tar\.gz|tgz|tar|zip)$/i;

/** `/a/b` joined with a name. */
export const join = (dir: string, name: string): string => (dir === '/' ? `/${name}` : `${dir}/${name}`);
export const parentOf = (p: string): string => p.slice(0, p.lastIndexOf('/')) || '/';

export class FileBrowser {
  /** the rows of the listing */
  readonly body = h('tbody');
  readonly status = h('p', { className: 'muted', role: 'status' });
  disposed = false;
  permissions: readonly string[] = [];
  /** makes a row of the listing (set by the view: rows open the editor) */
  row: (e: FileEntry) => HTMLTableRowElement = () => h('tr');

  constructor(
    readonly serverId: string,
    /** the folder shown */
    readonly dir: string,
    readonly msg: ReturnType<typeof messageBox>,
  ) {}

  folderUrl(path: string): string {
    return `/servers/${this.serverId}/files?path=${encodeURIComponent(path)}`;
  }

  /** Says what went wrong (unless the view is gone). */
  fail(what: string): (err: unknown) => void {
    return (err) => {
      if (!this.disposed) this.msg.error(`${what}: ${describe(err)}`);
    };
  }

  /** Lists the folder. */
  async load(): Promise<void> {
    try {
      const d = await gql<{ files: { total: number; items: FileEntry[] } }>(Q_FILES, { serverId: this.serverId, path: this.dir });
      const { total, items } = d.files;
      if (!this.disposed) this.show(items, total > items.length ? `The first ${items.length} of ${total} entries are shown.` : `${total} ${total === 1 ? 'entry' : 'entries'}`);
    } catch (err) {
      this.fail('Could not open this folder')(err);
    }
  }

  /** Shows `entries` in place of the listing, with `note` below the toolbar. */
  show(entries: FileEntry[], note: string): void {
    clear(this.body);
    if (!entries.length) this.body.append(h('tr', null, h('td', { colspan: '5', className: 'muted' }, 'This folder is empty. Drop files here to upload them.')));
    for (const e of entries) this.body.append(this.row(e));
    this.status.textContent = note;
  }

  /** Runs a mutation of this server, says `done` and lists the folder again. */
  async run(query: string, vars: Record<string, unknown>, done: string): Promise<void> {
    try {
      await gql(query, { serverId: this.serverId, ...vars });
      this.msg.info(done);
      await this.load();
    } catch (err) {
      this.fail('That did not work')(err);
    }
  }

  /** The paths of the ticked rows. */
  ticked(): string[] {
    return [...this.body.querySelectorAll<HTMLInputElement>('input[type=checkbox]:checked')].map((b) => b.value);
  }
}
