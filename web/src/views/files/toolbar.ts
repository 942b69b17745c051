/** The file browser's toolbar (new folder, upload, compress, delete, search) and its drop zone. */
import { gql } from '../../api';
import { h } from '../../dom';
import { M_COMPRESS_FILES, M_CREATE_DIRECTORY, Q_FILE_SEARCH, type FileEntry } from '../../queries';
import { can } from '../server-tabs';
import { join, type FileBrowser } from './browser';
import { removeEntries } from './rows';
import { uploadFiles } from './transfer';

async function newFolder(b: FileBrowser): Promise<void> {
  const name = prompt('Name of the new folder');
  if (name) await b.run(M_CREATE_DIRECTORY, { path: join(b.dir, name) }, `Created ${name}.`);
}

async function compress(b: FileBrowser): Promise<void> {
  const paths = b.ticked();
  if (!paths.length) return b.msg.error('Tick the files and folders to compress first.');
  try {
    const d = await gql<{ compressFiles: FileEntry }>(M_COMPRESS_FILES, { serverId: b.serverId, paths });
    b.msg.info(`Created ${d.compressFiles.name}.`);
    await b.load();
  } catch (err) {
    b.fail('Could not compress')(err);
  }
}

/** Lists the entries below the folder whose names contain `query` (the folder again for none). */
async function find(b: FileBrowser, query: string): Promise<void> {
  if (!query) return b.load();
  try {
    const d = await gql<{ fileSearch: FileEntry[] }>(Q_FILE_SEARCH, { serverId: b.serverId, path: b.dir, query });
    if (!b.disposed) b.show(d.fileSearch, `${d.fileSearch.length} found for “${query}” below ${b.dir}.`);
  } catch (err) {
    b.fail('Could not search')(err);
  }
}

/** Uploads with a progress bar; `upload` sends files into the folder. */
export function uploader(b: FileBrowser): { progress: HTMLProgressElement; upload(files: File[]): Promise<void> } {
  const progress = h('progress', { max: '1', value: '0', hidden: true, 'aria-label': 'Upload progress' });
  const upload = async (files: File[]) => {
    if (!files.length) return;
    progress.hidden = false;
    progress.value = 0;
    try {
      await uploadFiles(b.serverId, b.dir, files, (f) => (progress.value = f));
      b.msg.info(files.length === 1 ? `Uploaded ${files[0]!.name}.` : `Uploaded ${files.length} files.`);
      await b.load();
    } catch (err) {
      b.fail('The upload failed')(err);
    } finally {
      progress.hidden = true;
    }
  };
  return { progress, upload };
}

function searchForm(b: FileBrowser): HTMLFormElement {
  const query = h('input', { type: 'search', id: 'file-search', placeholder: 'Search names in this folder', 'aria-label': 'Search file names' });
  const form = h('form', { role: 'search', className: 'file-search' }, query, h('button', { type: 'submit', className: 'btn' }, 'Search'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void find(b, query.value.trim());
  });
  return form;
}

export function fileToolbar(b: FileBrowser, upload: (files: File[]) => Promise<void>): HTMLElement {
  const bar = h('div', { className: 'toolbar file-toolbar' });
  if (can(b.permissions, 'file.create')) {
    const picked = (ev: Event) => {
      const input = ev.target as HTMLInputElement;
      const files = [...(input.files ?? [])];
      // emptied after each pick: picking the same file again (changed since, or after a failed upload) uploads it again
      input.value = '';
      void upload(files);
    };
    bar.append(
      h('button', { type: 'button', className: 'btn', onclick: () => void newFolder(b) }, 'New folder'),
      h('label', { className: 'btn', for: 'upload-input' }, 'Upload files'),
      h('input', { type: 'file', id: 'upload-input', multiple: true, className: 'visually-hidden', onchange: picked }),
    );
  }
  if (can(b.permissions, 'file.archive')) bar.append(h('button', { type: 'button', className: 'btn', onclick: () => void compress(b) }, 'Compress selected'));
  if (can(b.permissions, 'file.delete')) bar.append(h('button', { type: 'button', className: 'btn btn-danger', onclick: () => void removeEntries(b, b.ticked()) }, 'Delete selected'));
  bar.append(searchForm(b));
  return bar;
}

/** Files dropped on `el` are uploaded into the folder (or refused, without file.create). */
export function dropZone(b: FileBrowser, el: HTMLElement, upload: (files: File[]) => Promise<void>): void {
  el.addEventListener('dragover', (ev) => {
    ev.preventDefault();
    el.classList.add('dropping');
  });
  el.addEventListener('dragleave', () => el.classList.remove('dropping'));
  el.addEventListener('drop', (ev) => {
    ev.preventDefault();
    el.classList.remove('dropping');
    if (can(b.permissions, 'file.create')) void upload([...(ev.dataTransfer?.files ?? [])]);
    else b.msg.error('You cannot upload to this server: ask its owner for the file.create permission.');
  });
}
