/** A row of the file listing: the entry, and the actions the viewer's keys allow on it. */
import { link } from '../../app';
import { h } from '../../dom';
import { M_COPY_FILE, M_DECOMPRESS_FILE, M_DELETE_FILES, M_RENAME_FILE, type FileEntry } from '../../queries';
import { can } from '../server-tabs';
import { ARCHIVE, join, parentOf, type FileBrowser } from './browser';
import { downloadUrl } from './transfer';

function sizeText(e: FileEntry): string {
  if (e.type !== 'file') return '';
  if (e.size < 1024) return `${e.size} B`;
  if (e.size < 1024 * 1024) return `${(e.size / 1024).toFixed(1)} KiB`;
  return `${(e.size / 1024 / 1024).toFixed(1)} MiB`;
}

/** Asks for the new name (or a path, to move it) and renames. */
async function rename(b: FileBrowser, e: FileEntry): Promise<void> {
  const to = prompt(`New name or path for ${e.name}`, e.name);
  if (!to || to === e.name) return;
  const d = await b.run<{ renameFile: FileEntry }>(M_RENAME_FILE, { from: e.path, to: to.startsWith('/') ? to : join(parentOf(e.path), to) }, `Renamed ${e.name}.`);
  // the file open in the editor (or a folder holding it) follows: Save writes under the new name
  if (d) b.renamed(e.path, d.renameFile.path);
}

/** Deletes `paths` once the user confirms. */
export async function removeEntries(b: FileBrowser, paths: string[]): Promise<void> {
  if (!paths.length) return b.msg.error('Tick the files to delete first.');
  if (!confirm(`Delete ${paths.length === 1 ? paths[0] : `${paths.length} entries`}? Folders are deleted with everything in them.`)) return;
  await b.run(M_DELETE_FILES, { paths }, paths.length === 1 ? `Deleted ${paths[0]}.` : `Deleted ${paths.length} entries.`);
}

/** The entry's name: a link into a folder, a button opening a file in the editor, or plain text. */
function nameCell(b: FileBrowser, e: FileEntry, open: (e: FileEntry) => void): HTMLElement {
  if (e.type === 'directory') return link(b.folderUrl(e.path), `${e.name}/`);
  if (e.type === 'file' && can(b.permissions, 'file.read-content')) return h('button', { type: 'button', className: 'link-button', onclick: () => open(e) }, e.name);
  return h('span', null, e.name + (e.type === 'symlink' ? ' (link)' : ''));
}

function actionsCell(b: FileBrowser, e: FileEntry): HTMLElement {
  const actions = h('div', { className: 'row-actions' });
  const keys = b.permissions;
  const action = (label: string, fn: () => void) => actions.append(h('button', { type: 'button', className: 'btn btn-quiet', 'aria-label': `${label} ${e.name}`, onclick: fn }, label));
  if (e.type === 'file' && can(keys, 'file.read-content')) actions.append(h('a', { className: 'btn btn-quiet', href: downloadUrl(b.serverId, e.path), download: e.name, 'aria-label': `Download ${e.name}` }, 'Download'));
  if (can(keys, 'file.update')) action('Rename', () => void rename(b, e));
  if (e.type === 'file' && can(keys, 'file.create')) action('Copy', () => void b.run(M_COPY_FILE, { path: e.path }, `Copied ${e.name}.`));
  if (e.type === 'file' && ARCHIVE.test(e.name) && can(keys, 'file.archive')) action('Decompress', () => void b.run(M_DECOMPRESS_FILE, { path: e.path }, `Unpacked ${e.name} here.`));
  if (can(keys, 'file.delete')) action('Delete', () => void removeEntries(b, [e.path]));
  return actions;
}

export function fileRow(b: FileBrowser, e: FileEntry, open: (e: FileEntry) => void): HTMLTableRowElement {
  const box = h('input', { type: 'checkbox', value: e.path, 'aria-label': `Select ${e.name}` });
  return h(
    'tr',
    { 'data-path': e.path },
    h('td', null, box),
    h('td', null, nameCell(b, e, open)),
    h('td', null, sizeText(e)),
    h('td', { className: 'muted' }, new Date(e.modifiedAt).toLocaleString()),
    h('td', null, actionsCell(b, e)),
  );
}
