/**
 * What the sections of a server's file browser share: the folder shown, the viewer's keys, the
 * message box, and the listing they reload or replace.
 */
import { describe, gql } from '../../api';
import { clear, h, type messageBox } from '../../dom';
import { FILES_PAGE_SIZE, Q_FILES, type FileEntry } from '../../queries';

export const ARCHIVE = /\.(tar\.gz|tgz|tar|zip)$/i;

/** `/a/b` joined with a name. */
export const join = (dir: string, name: string): string => (dir === '/' ? `/${name}` : `${dir}/${name}`);
export const parentOf = (p: string): string => p.slice(0, p.lastIndexOf('/')) || '/';

export class FileBrowser {
  /** the rows of the listing */
  readonly body = h('tbody');
  readonly status = h('p', { className: 'muted', role: 'status' });
  private readonly moreButton = h('button', { type: 'button', className: 'btn', onclick: () => void this.loadMore() }, 'Show more');
  /** lists the folder's next page (shown while some of the folder is not listed) */
  readonly more = h('p', { className: 'file-more', hidden: true }, this.moreButton);
  /** how many pages of the folder are listed */
  private pages = 0;
  disposed = false;
  permissions: readonly string[] = [];
  /** makes a row of the listing (set by the view: rows open the editor) */
  row: (e: FileEntry) => HTMLTableRowElement = () => h('tr');
  /** told of an entry renamed (or moved) from `from` to `to` (set by the view: the editor follows it) */
  renamed: (from: string, to: string) => void = () => undefined;

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

  /** Lists the folder (its first page). */
  async load(): Promise<void> {
    try {
      const { total, items } = await this.fetchPage(1);
      if (this.disposed) return;
      this.show(items, '');
      this.paged(1, items.length, total);
    } catch (err) {
      this.fail('Could not open this folder')(err);
    }
  }

  /** Adds the folder's next page to the listing. */
  private async loadMore(): Promise<void> {
    this.moreButton.disabled = true;
    try {
      const { total, items } = await this.fetchPage(this.pages + 1);
      if (this.disposed) return;
      for (const e of items) this.body.append(this.row(e));
      this.paged(this.pages + 1, this.body.rows.length, total);
    } catch (err) {
      this.fail('Could not list more of this folder')(err);
    } finally {
      this.moreButton.disabled = false;
    }
  }

  private async fetchPage(page: number): Promise<{ total: number; items: FileEntry[] }> {
    return (await gql<{ files: { total: number; items: FileEntry[] } }>(Q_FILES, { serverId: this.serverId, path: this.dir, page })).files;
  }

  /** Notes that `pages` pages, `shown` of the folder's `total` entries, are listed; offers the rest. */
  private paged(pages: number, shown: number, total: number): void {
    this.pages = pages;
    this.status.textContent = shown < total ? `${shown} of ${total} entries are shown.` : `${total} ${total === 1 ? 'entry' : 'entries'}`;
    this.more.hidden = shown >= total;
    this.moreButton.textContent = `Show the next ${Math.min(FILES_PAGE_SIZE, total - shown)}`;
  }

  /** Shows `entries` in place of the listing, with `note` below the toolbar. */
  show(entries: FileEntry[], note: string): void {
    clear(this.body);
    if (!entries.length) this.body.append(h('tr', null, h('td', { colspan: '5', className: 'muted' }, 'This folder is empty. Drop files here to upload them.')));
    for (const e of entries) this.body.append(this.row(e));
    this.status.textContent = note;
    this.more.hidden = true;
  }

  /** Runs a mutation of this server, says `done` and lists the folder again: its result, or null when refused. */
  async run<T = Record<string, unknown>>(query: string, vars: Record<string, unknown>, done: string): Promise<T | null> {
    try {
      const d = await gql<T>(query, { serverId: this.serverId, ...vars });
      this.msg.info(done);
      await this.load();
      return d;
    } catch (err) {
      this.fail('That did not work')(err);
      return null;
    }
  }

  /** Shows `e` anew in its row, when it is listed (its size and time after a save), its tick kept. */
  update(e: FileEntry): void {
    for (const old of [...this.body.rows]) {
      if (old.dataset.path !== e.path) continue;
      const ticked = old.querySelector<HTMLInputElement>('input[type=checkbox]')?.checked ?? false;
      const row = this.row(e);
      const box = row.querySelector<HTMLInputElement>('input[type=checkbox]');
      if (box) box.checked = ticked;
      old.replaceWith(row);
    }
  }

  /** The paths of the ticked rows. */
  ticked(): string[] {
    return [...this.body.querySelectorAll<HTMLInputElement>('input[type=checkbox]:checked')].map((b) => b.value);
  }
}
