/**
 * A server's files (file.read): a folder with breadcrumbs (the folder is in the address, `?path=`),
 * folders first; upload by drag and drop or a file picker, with progress; download, rename, copy,
 * delete, new folder, compress the ticked entries and decompress an archive; search by name; and an
 * editor (CodeMirror) for text files. Actions the viewer's keys do not allow are not shown.
 */
import { ApiError, describe, gql } from '../api';
import { link, type View } from '../app';
import { clear, h, messageBox } from '../dom';
import {
  M_COMPRESS_FILES,
  M_COPY_FILE,
  M_CREATE_DIRECTORY,
  M_DECOMPRESS_FILE,
  M_DELETE_FILES,
  M_RENAME_FILE,
  M_WRITE_FILE,
  Q_FILE_CONTENTS,
  Q_FILE_SEARCH,
  Q_FILES,
  Q_SERVER,
  type FileEntry,
  type Server,
} from '../queries';
import type { Editor } from './file-editor';
import { downloadUrl, uploadFiles } from './file-transfer';
import { can, serverTabs } from './server-tabs';

const ARCHIVE = /\.(tar\.gz|tgz|tar|zip)$/i;

/** `/a/b` joined with a name. */
const join = (dir: string, name: string) => (dir === '/' ? `/${name}` : `${dir}/${name}`);
const parentOf = (p: string) => p.slice(0, p.lastIndexOf('/')) || '/';

function sizeText(e: FileEntry): string {
  if (e.type !== 'file') return '';
  if (e.size < 1024) return `${e.size} B`;
  if (e.size < 1024 * 1024) return `${(e.size / 1024).toFixed(1)} KiB`;
  return `${(e.size / 1024 / 1024).toFixed(1)} MiB`;
}

/** The folder's path from the address (`?path=`), `/` by default. */
function folderFromUrl(): string {
  const p = new URLSearchParams(location.search).get('path') ?? '/';
  return p.startsWith('/') ? p : `/${p}`;
}

/** Links to each folder on the way to `dir`. */
function breadcrumbs(serverId: string, dir: string): HTMLElement {
  const parts = dir.split('/').filter(Boolean);
  const crumb = (label: string, path: string, current: boolean) =>
    h('li', null, current ? h('span', { 'aria-current': 'location' }, label) : link(`/servers/${serverId}/files?path=${encodeURIComponent(path)}`, label));
  return h(
    'nav',
    { className: 'breadcrumbs', 'aria-label': 'Folder' },
    h('ol', null, crumb('Files', '/', parts.length === 0), parts.map((name, i) => crumb(name, '/' + parts.slice(0, i + 1).join('/'), i === parts.length - 1))),
  );
}

export const serverFilesView: View = (main, params) => {
  const serverId = params.id!;
  const dir = folderFromUrl();
  const msg = messageBox();
  const title = h('h1', null, 'Files');
  main.append(h('p', { className: 'crumbs' }, link('/', '← Servers')), title, msg.el);
  let disposed = false;
  let editor: Editor | null = null;
  const body = h('tbody');
  const status = h('p', { className: 'muted', role: 'status' });
  const editorPanel = h('section', { className: 'card file-editor', hidden: true, 'aria-label': 'Editor' });
  let permissions: readonly string[] = [];
  const folderUrl = (path: string) => `/servers/${serverId}/files?path=${encodeURIComponent(path)}`;
  const fail = (what: string) => (err: unknown) => {
    if (!disposed) msg.error(`${what}: ${describe(err)}`);
  };

  async function load(): Promise<void> {
    try {
      const d = await gql<{ files: { total: number; items: FileEntry[] } }>(Q_FILES, { serverId, path: dir });
      if (!disposed) show(d.files.items, d.files.total > d.files.items.length ? `The first ${d.files.items.length} of ${d.files.total} entries are shown.` : `${d.files.total} ${d.files.total === 1 ? 'entry' : 'entries'}`);
    } catch (err) {
      fail('Could not open this folder')(err);
    }
  }

  function show(entries: FileEntry[], note: string): void {
    clear(body);
    if (!entries.length) body.append(h('tr', null, h('td', { colspan: '5', className: 'muted' }, 'This folder is empty. Drop files here to upload them.')));
    for (const e of entries) body.append(row(e));
    status.textContent = note;
  }

  function row(e: FileEntry): HTMLTableRowElement {
    const box = h('input', { type: 'checkbox', value: e.path, 'aria-label': `Select ${e.name}` });
    const name =
      e.type === 'directory'
        ? link(folderUrl(e.path), `${e.name}/`)
        : e.type === 'file' && can(permissions, 'file.read-content')
          ? h('button', { type: 'button', className: 'link-button', onclick: () => void open(e) }, e.name)
          : h('span', null, e.name + (e.type === 'symlink' ? ' (link)' : ''));
    const actions = h('div', { className: 'row-actions' });
    const action = (label: string, fn: () => void) => actions.append(h('button', { type: 'button', className: 'btn btn-quiet', 'aria-label': `${label} ${e.name}`, onclick: fn }, label));
    if (e.type === 'file' && can(permissions, 'file.read-content')) actions.append(h('a', { className: 'btn btn-quiet', href: downloadUrl(serverId, e.path), download: e.name, 'aria-label': `Download ${e.name}` }, 'Download'));
    if (can(permissions, 'file.update')) action('Rename', () => void rename(e));
    if (e.type === 'file' && can(permissions, 'file.create')) action('Copy', () => void run(M_COPY_FILE, { path: e.path }, `Copied ${e.name}.`));
    if (e.type === 'file' && ARCHIVE.test(e.name) && can(permissions, 'file.archive')) action('Decompress', () => void run(M_DECOMPRESS_FILE, { path: e.path }, `Unpacked ${e.name} here.`));
    if (can(permissions, 'file.delete')) action('Delete', () => void remove([e.path]));
    return h('tr', { 'data-path': e.path }, h('td', null, box), h('td', null, name), h('td', null, sizeText(e)), h('td', { className: 'muted' }, new Date(e.modifiedAt).toLocaleString()), h('td', null, actions));
  }

  /** Runs a mutation, says `done` and reloads the folder. */
  async function run(query: string, vars: Record<string, unknown>, done: string): Promise<void> {
    try {
      await gql(query, { serverId, ...vars });
      msg.info(done);
      await load();
    } catch (err) {
      fail('That did not work')(err);
    }
  }

  async function rename(e: FileEntry): Promise<void> {
    const to = prompt(`New name or path for ${e.name}`, e.name);
    if (!to || to === e.name) return;
    await run(M_RENAME_FILE, { from: e.path, to: to.startsWith('/') ? to : join(parentOf(e.path), to) }, `Renamed ${e.name}.`);
  }

  async function remove(paths: string[]): Promise<void> {
    if (!paths.length) return msg.error('Tick the files to delete first.');
    if (!confirm(`Delete ${paths.length === 1 ? paths[0] : `${paths.length} entries`}? Folders are deleted with everything in them.`)) return;
    await run(M_DELETE_FILES, { paths }, paths.length === 1 ? `Deleted ${paths[0]}.` : `Deleted ${paths.length} entries.`);
  }

  const ticked = () => [...body.querySelectorAll<HTMLInputElement>('input[type=checkbox]:checked')].map((b) => b.value);

  async function open(e: FileEntry): Promise<void> {
    msg.clear();
    let contents: string;
    try {
      contents = (await gql<{ fileContents: { contents: string } }>(Q_FILE_CONTENTS, { serverId, path: e.path })).fileContents.contents;
    } catch (err) {
      if (err instanceof ApiError && err.code === 'FILE_TOO_LARGE') return msg.error(`${e.name} is too large to edit here: download it instead.`);
      if (err instanceof ApiError && err.code === 'INVALID_STATE') return msg.error(`${e.name} is not a text file: download it instead.`);
      return fail(`Could not open ${e.name}`)(err);
    }
    if (disposed) return;
    const { createEditor } = await import('./file-editor');
    editor?.destroy();
    clear(editorPanel);
    const holder = h('div', { className: 'editor-holder' });
    const saved = h('span', { className: 'muted', role: 'status' });
    const writable = can(permissions, 'file.update');
    const save = async () => {
      try {
        await gql(M_WRITE_FILE, { serverId, path: e.path, contents: editor!.text() });
        saved.textContent = `Saved at ${new Date().toLocaleTimeString()}.`;
      } catch (err) {
        saved.textContent = '';
        fail(`Could not save ${e.name}`)(err);
      }
    };
    const close = () => {
      editor?.destroy();
      editor = null;
      editorPanel.hidden = true;
    };
    editorPanel.append(
      h('div', { className: 'page-head' }, h('h2', null, e.path), h('div', { className: 'actions' }, writable ? h('button', { type: 'button', className: 'btn btn-primary', onclick: () => void save() }, 'Save') : h('span', { className: 'muted' }, 'Read only'), h('button', { type: 'button', className: 'btn', onclick: close }, 'Close'), saved)),
      holder,
    );
    editorPanel.hidden = false;
    editor = createEditor(holder, e.name, contents, writable ? () => void save() : null);
  }

  function toolbar(): HTMLElement {
    const bar = h('div', { className: 'toolbar file-toolbar' });
    if (can(permissions, 'file.create')) {
      bar.append(
        h('button', { type: 'button', className: 'btn', onclick: () => void newFolder() }, 'New folder'),
        h('label', { className: 'btn', for: 'upload-input' }, 'Upload files'),
        h('input', { type: 'file', id: 'upload-input', multiple: true, className: 'visually-hidden', onchange: (ev: Event) => void upload([...((ev.target as HTMLInputElement).files ?? [])]) }),
      );
    }
    if (can(permissions, 'file.archive')) bar.append(h('button', { type: 'button', className: 'btn', onclick: () => void compress() }, 'Compress selected'));
    if (can(permissions, 'file.delete')) bar.append(h('button', { type: 'button', className: 'btn btn-danger', onclick: () => void remove(ticked()) }, 'Delete selected'));
    const query = h('input', { type: 'search', id: 'file-search', placeholder: 'Search names in this folder', 'aria-label': 'Search file names' });
    const search = h('form', { role: 'search', className: 'file-search' }, query, h('button', { type: 'submit', className: 'btn' }, 'Search'));
    search.addEventListener('submit', (ev) => {
      ev.preventDefault();
      void find(query.value.trim());
    });
    bar.append(search);
    return bar;
  }

  async function newFolder(): Promise<void> {
    const name = prompt('Name of the new folder');
    if (name) await run(M_CREATE_DIRECTORY, { path: join(dir, name) }, `Created ${name}.`);
  }

  async function compress(): Promise<void> {
    const paths = ticked();
    if (!paths.length) return msg.error('Tick the files and folders to compress first.');
    try {
      const d = await gql<{ compressFiles: FileEntry }>(M_COMPRESS_FILES, { serverId, paths });
      msg.info(`Created ${d.compressFiles.name}.`);
      await load();
    } catch (err) {
      fail('Could not compress')(err);
    }
  }

  async function find(query: string): Promise<void> {
    if (!query) return load();
    try {
      const d = await gql<{ fileSearch: FileEntry[] }>(Q_FILE_SEARCH, { serverId, path: dir, query });
      if (!disposed) show(d.fileSearch, `${d.fileSearch.length} found for “${query}” below ${dir}.`);
    } catch (err) {
      fail('Could not search')(err);
    }
  }

  const progress = h('progress', { max: '1', value: '0', hidden: true, 'aria-label': 'Upload progress' });
  async function upload(files: File[]): Promise<void> {
    if (!files.length) return;
    progress.hidden = false;
    progress.value = 0;
    try {
      await uploadFiles(serverId, dir, files, (f) => (progress.value = f));
      msg.info(files.length === 1 ? `Uploaded ${files[0]!.name}.` : `Uploaded ${files.length} files.`);
      await load();
    } catch (err) {
      fail('The upload failed')(err);
    } finally {
      progress.hidden = true;
    }
  }

  function dropZone(el: HTMLElement): void {
    el.addEventListener('dragover', (ev) => {
      ev.preventDefault();
      el.classList.add('dropping');
    });
    el.addEventListener('dragleave', () => el.classList.remove('dropping'));
    el.addEventListener('drop', (ev) => {
      ev.preventDefault();
      el.classList.remove('dropping');
      if (can(permissions, 'file.create')) void upload([...(ev.dataTransfer?.files ?? [])]);
      else msg.error('You cannot upload to this server: ask its owner for the file.create permission.');
    });
  }

  void (async () => {
    let server: Server;
    try {
      server = (await gql<{ server: Server }>(Q_SERVER, { id: serverId })).server;
    } catch (err) {
      return fail('Could not load the server')(err);
    }
    if (disposed) return;
    permissions = server.permissions;
    document.title = `Files · ${server.name} · HostPanel`;
    title.textContent = `${server.name}: files`;
    title.after(serverTabs(server.id, server.permissions, 'files'));
    const table = h('table', { className: 'files' }, h('thead', null, h('tr', null, h('th', null, h('span', { className: 'visually-hidden' }, 'Selected')), h('th', null, 'Name'), h('th', null, 'Size'), h('th', null, 'Modified'), h('th', null, h('span', { className: 'visually-hidden' }, 'Actions')))), body);
    const card = h('section', { className: 'card file-list', 'aria-label': 'Folder contents' }, breadcrumbs(serverId, dir), toolbar(), progress, status, table);
    dropZone(card);
    main.append(card, editorPanel);
    await load();
  })();

  return () => {
    disposed = true;
    editor?.destroy();
  };
};

