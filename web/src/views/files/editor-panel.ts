/**
 * The editor panel of the file browser: opens a text file in CodeMirror (the editor module is loaded
 * on demand), saves it with Save or Ctrl-S, read-only without file.update. Unsaved changes are not
 * dropped without asking: on Close, on opening another file, on leaving the page. A rename of the open
 * file is followed; a save shows the file's new size and time in its row.
 */
import { ApiError, gql } from '../../api';
import { clear, h } from '../../dom';
import { M_WRITE_FILE, Q_FILE_CONTENTS, type FileEntry } from '../../queries';
import { can } from '../server-tabs';
import type { FileBrowser } from './browser';
import type { Editor } from './editor';

export class EditorPanel {
  readonly el = h('section', { className: 'card file-editor', hidden: true, 'aria-label': 'Editor' });
  private editor: Editor | null = null;
  /** the editor module, once loaded */
  private module: typeof import('./editor') | null = null;
  /** the file open in the editor, and its text as last loaded or saved */
  private file: FileEntry | null = null;
  private savedText = '';

  constructor(private readonly b: FileBrowser) {}

  /** The file's text, or null (and a message saying why) when it cannot be edited here. */
  private async contents(e: FileEntry): Promise<string | null> {
    try {
      return (await gql<{ fileContents: { contents: string } }>(Q_FILE_CONTENTS, { serverId: this.b.serverId, path: e.path })).fileContents.contents;
    } catch (err) {
      if (err instanceof ApiError && err.code === 'FILE_TOO_LARGE') this.b.msg.error(`${e.name} is too large to edit here: download it instead.`);
      else if (err instanceof ApiError && err.code === 'INVALID_STATE') this.b.msg.error(`${e.name} is not a text file: download it instead.`);
      else this.b.fail(`Could not open ${e.name}`)(err);
      return null;
    }
  }

  /** The editor module, or null (and a message saying to reload) when it cannot be loaded. */
  private async editorModule(e: FileEntry): Promise<typeof import('./editor') | null> {
    try {
      return await import('./editor');
    } catch {
      // its file is gone when the panel was upgraded since this page was loaded
      this.b.msg.error(`Could not open ${e.name}: the editor could not be loaded. Reload the page to try again.`);
      return null;
    }
  }

  /** Whether the open file has changes that were not saved. */
  unsaved(): boolean {
    return this.editor !== null && this.editor.text() !== this.savedText;
  }

  /** Whether the open file may be put away: nothing unsaved, or the user agrees to drop it. */
  mayDiscard(): boolean {
    return !this.unsaved() || confirm(`Discard your unsaved changes to ${this.file?.name ?? 'this file'}?`);
  }

  async open(e: FileEntry): Promise<void> {
    if (!this.mayDiscard()) return;
    this.b.msg.clear();
    const text = await this.contents(e);
    if (text === null || this.b.disposed) return;
    const module = await this.editorModule(e);
    if (!module || this.b.disposed) return;
    this.mount(module, e, text, null);
  }

  /** Shows `e` in a new editor holding `text`; `savedText` its text as last saved (null: `text`). */
  private mount(module: typeof import('./editor'), e: FileEntry, text: string, savedText: string | null): void {
    this.dispose();
    const holder = h('div', { className: 'editor-holder' });
    const saved = h('span', { className: 'muted', role: 'status' });
    const writable = can(this.b.permissions, 'file.update');
    const save = () => void this.save(saved);
    const primary = writable ? h('button', { type: 'button', className: 'btn btn-primary', onclick: save }, 'Save') : h('span', { className: 'muted' }, 'Read only');
    const closeButton = h('button', { type: 'button', className: 'btn', onclick: () => this.close() }, 'Close');
    this.el.append(h('div', { className: 'page-head' }, h('h2', null, e.path), h('div', { className: 'actions' }, primary, closeButton, saved)), holder);
    this.el.hidden = false;
    this.editor = module.createEditor(holder, e.name, text, writable ? save : null);
    this.module = module;
    this.file = e;
    this.savedText = savedText ?? this.editor.text();
    window.addEventListener('beforeunload', this.warnOnUnload);
  }

  /**
   * The entry at `from` was renamed (or moved) to `to`: when it is the open file, or a folder holding
   * it, the editor follows it (its unsaved changes kept), so that Save writes the file under its new
   * name and not a new file under the old one.
   */
  renamed(from: string, to: string): void {
    const e = this.file;
    if (!e || !this.editor || !this.module || !(e.path === from || e.path.startsWith(`${from}/`))) return;
    const path = to + e.path.slice(from.length);
    const moved: FileEntry = { ...e, path, name: path.slice(path.lastIndexOf('/') + 1) };
    this.mount(this.module, moved, this.editor.text(), this.savedText);
  }

  private async save(saved: HTMLElement): Promise<void> {
    const e = this.file;
    if (!e || !this.editor) return;
    try {
      const contents = this.editor.text();
      const d = await gql<{ writeFile: FileEntry }>(M_WRITE_FILE, { serverId: this.b.serverId, path: e.path, contents });
      if (this.file === e) this.savedText = contents;
      saved.textContent = `Saved at ${new Date().toLocaleTimeString()}.`;
      // its row shows its new size and time
      if (!this.b.disposed) this.b.update(d.writeFile);
    } catch (err) {
      saved.textContent = '';
      this.b.fail(`Could not save ${e.name}`)(err);
    }
  }

  /** Closes the editor, once the user agrees to drop unsaved changes. */
  close(): void {
    if (this.mayDiscard()) this.dispose();
  }

  /** Closes the editor as it is. */
  dispose(): void {
    window.removeEventListener('beforeunload', this.warnOnUnload);
    this.editor?.destroy();
    this.editor = null;
    this.file = null;
    clear(this.el);
    this.el.hidden = true;
  }

  /** Leaving or reloading the page with unsaved changes: the browser asks first. */
  private readonly warnOnUnload = (ev: BeforeUnloadEvent): void => {
    if (this.unsaved()) ev.preventDefault();
  };
}
