/**
 * The editor panel of the file browser: opens a text file in CodeMirror (the editor module is loaded
 * on demand), saves it with Save or Ctrl-S, read-only without file.update.
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

  async open(e: FileEntry): Promise<void> {
    this.b.msg.clear();
    const text = await this.contents(e);
    if (text === null || this.b.disposed) return;
    const { createEditor } = await import('./editor');
    this.close();
    const holder = h('div', { className: 'editor-holder' });
    const saved = h('span', { className: 'muted', role: 'status' });
    const writable = can(this.b.permissions, 'file.update');
    const save = () => void this.save(e, saved);
    const primary = writable ? h('button', { type: 'button', className: 'btn btn-primary', onclick: save }, 'Save') : h('span', { className: 'muted' }, 'Read only');
    const closeButton = h('button', { type: 'button', className: 'btn', onclick: () => this.close() }, 'Close');
    this.el.append(h('div', { className: 'page-head' }, h('h2', null, e.path), h('div', { className: 'actions' }, primary, closeButton, saved)), holder);
    this.el.hidden = false;
    this.editor = createEditor(holder, e.name, text, writable ? save : null);
  }

  private async save(e: FileEntry, saved: HTMLElement): Promise<void> {
    try {
      await gql(M_WRITE_FILE, { serverId: this.b.serverId, path: e.path, contents: this.editor!.text() });
      saved.textContent = `Saved at ${new Date().toLocaleTimeString()}.`;
    } catch (err) {
      saved.textContent = '';
      this.b.fail(`Could not save ${e.name}`)(err);
    }
  }

  close(): void {
    this.editor?.destroy();
    this.editor = null;
    clear(this.el);
    this.el.hidden = true;
  }
}
