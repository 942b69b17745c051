/**
 * A server's files (file.read): a folder with breadcrumbs (the folder is in the address, `?path=`),
 * folders first; upload by drag and drop or a file picker, with progress; download, rename, copy,
 * delete, new folder, compress the ticked entries and decompress an archive; search by name; and an
 * editor (CodeMirror) for text files; and how to connect over SFTP. Actions the viewer's keys do not allow are not shown. The
 * sections are in ./files/.
 */
import { gql } from '../api';
import { guardLeaving, link, navigate, type View } from '../app';
import { h, messageBox } from '../dom';
import { Q_SERVER, type Server } from '../queries';
import { FileBrowser } from './files/browser';
import { EditorPanel } from './files/editor-panel';
import { fileRow } from './files/rows';
import { dropZone, fileToolbar, uploader } from './files/toolbar';
import { sftpPanel } from './files/sftp-panel';
import { can, serverTabs } from './server-tabs';

/** The folder's path from the address (`?path=`), `/` by default. */
function folderFromUrl(): string {
  const p = new URLSearchParams(location.search).get('path') ?? '/';
  return p.startsWith('/') ? p : `/${p}`;
}

/** Whether `path` lies in one of the viewer's folders (`scopes`; none: the whole server). */
const inScopes = (scopes: readonly string[], path: string): boolean => !scopes.length || scopes.some((s) => s === '/' || path === s || path.startsWith(`${s}/`));

/** Links to each folder on the way to the browser's folder (those above the viewer's folders are named, not linked). */
function breadcrumbs(b: FileBrowser, scopes: readonly string[]): HTMLElement {
  const parts = b.dir.split('/').filter(Boolean);
  const crumb = (label: string, path: string, current: boolean) =>
    h('li', null, current ? h('span', { 'aria-current': 'location' }, label) : inScopes(scopes, path) ? link(b.folderUrl(path), label) : h('span', null, label));
  return h(
    'nav',
    { className: 'breadcrumbs', 'aria-label': 'Folder' },
    h('ol', null, crumb('Files', '/', parts.length === 0), parts.map((name, i) => crumb(name, '/' + parts.slice(0, i + 1).join('/'), i === parts.length - 1))),
  );
}

function listingTable(b: FileBrowser): HTMLTableElement {
  const hidden = (text: string) => h('th', null, h('span', { className: 'visually-hidden' }, text));
  return h('table', { className: 'files' }, h('thead', null, h('tr', null, hidden('Selected'), h('th', null, 'Name'), h('th', null, 'Size'), h('th', null, 'Modified'), hidden('Actions'))), b.body);
}

export const serverFilesView: View = (main, params) => {
  const msg = messageBox();
  const b = new FileBrowser(params.id!, folderFromUrl(), msg);
  const editor = new EditorPanel(b);
  b.row = (e) => fileRow(b, e, (file) => void editor.open(file));
  b.renamed = (from, to) => editor.renamed(from, to);
  const title = h('h1', null, 'Files');
  main.append(h('p', { className: 'crumbs' }, link('/', '← Servers')), title, msg.el);

  void (async () => {
    let server: Server;
    try {
      server = (await gql<{ server: Server }>(Q_SERVER, { id: b.serverId })).server;
    } catch (err) {
      return b.fail('Could not load the server')(err);
    }
    if (b.disposed) return;
    // a subuser limited to some folders starts in the first of them (the root is not theirs)
    const scopes = server.paths ?? [];
    if (scopes.length && !new URLSearchParams(location.search).has('path')) return navigate(b.folderUrl(scopes[0]!), { replace: true });
    b.permissions = server.permissions;
    document.title = `Files · ${server.name} · HostPanel`;
    title.textContent = `${server.name}: files`;
    title.after(serverTabs(server.id, server.permissions, 'files'));
    const { progress, upload } = uploader(b);
    const card = h('section', { className: 'card file-list', 'aria-label': 'Folder contents' }, breadcrumbs(b, scopes), fileToolbar(b, upload), progress, b.status, listingTable(b), b.more);
    dropZone(b, card, upload);
    main.append(card, editor.el);
    if (can(server.permissions, 'file.sftp')) main.append(sftpPanel(server.id));
    await b.load();
  })();

  const unguard = guardLeaving(() => editor.mayDiscard());
  return () => {
    unguard();
    b.disposed = true;
    editor.dispose();
  };
};
