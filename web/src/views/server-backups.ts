/**
 * A server's backups (backup.read): make one (with a name), follow its progress live, download it,
 * restore it (after a confirmation, with the server stopped), lock, unlock and delete it. Actions
 * the viewer's keys do not allow are not shown.
 */
import { describe, gql, subscribe } from '../api';
import { link, type View } from '../app';
import { announce, clear, field, h, messageBox } from '../dom';
import { M_CREATE_BACKUP, M_DELETE_BACKUP, M_LOCK_BACKUP, M_RESTORE_BACKUP, M_UNLOCK_BACKUP, Q_BACKUPS, S_BACKUPS, type Backup } from '../queries';
import { LiveMerge } from './live-merge';
import { can, openServerSection } from './server-tabs';

const size = (bytes: number): string => (bytes < 1024 * 1024 ? `${Math.ceil(bytes / 1024)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`);

function statusText(b: Backup): string {
  if (b.status === 'pending') return `In progress: ${b.files} files, ${size(b.size)}`;
  if (b.status === 'failed') return `Failed: ${b.error ?? 'unknown error'}`;
  return `${b.files} files, ${size(b.size)}`;
}

export const serverBackupsView: View = (main, params) => {
  const serverId = params.id!;
  const msg = messageBox();
  const title = h('h1', null, 'Backups');
  main.append(h('p', { className: 'crumbs' }, link('/', '← Servers')), title, msg.el);
  const body = h('tbody', null);
  const rows = new Map<string, HTMLTableRowElement>();
  let permissions: readonly string[] = [];
  let disposed = false;
  let stop: (() => void) | null = null;

  /** Runs an action on the server's backups: whether it was done (else the refusal is shown). */
  const run = async (what: string, query: string, vars: Record<string, unknown>): Promise<boolean> => {
    // an earlier action's failure is not left over the result of this one
    msg.clear();
    try {
      const d = await gql<Record<string, Backup | boolean>>(query, { serverId, ...vars });
      const b = Object.values(d)[0];
      if (b && typeof b === 'object') show(b);
      announce(`${what}: done`);
      return true;
    } catch (err) {
      msg.error(`${what} failed: ${describe(err)}`);
      return false;
    }
  };

  function actions(b: Backup): HTMLElement {
    const cell = h('td', { className: 'actions' });
    const button = (text: string, label: string, onClick: () => void) => {
      const el = h('button', { type: 'button', className: 'btn btn-quiet', 'aria-label': `${label} ${b.name}` }, text);
      el.addEventListener('click', onClick);
      cell.append(el);
    };
    if (b.status !== 'completed') return cell;
    if (can(permissions, 'backup.download')) cell.append(h('a', { className: 'btn btn-quiet', href: `/api/v1/servers/${serverId}/backups/${b.id}/download`, 'aria-label': `Download ${b.name}` }, 'Download'));
    if (can(permissions, 'backup.restore'))
      button('Restore', 'Restore', () => {
        if (!confirm(`Restore "${b.name}"? The server's files become those of the backup; files made since stay unless you choose to delete them next.`)) return;
        const truncate = confirm('Also delete the files the backup does not have? (Cancel keeps them.)');
        void run('Restore', M_RESTORE_BACKUP, { backupId: b.id, truncate });
      });
    if (can(permissions, 'backup.delete')) {
      button(b.locked ? 'Unlock' : 'Lock', b.locked ? 'Unlock' : 'Lock', () => void run(b.locked ? 'Unlock' : 'Lock', b.locked ? M_UNLOCK_BACKUP : M_LOCK_BACKUP, { backupId: b.id }));
      if (!b.locked)
        button('Delete', 'Delete', () => {
          if (!confirm(`Delete the backup "${b.name}"? This cannot be undone.`)) return;
          // the row goes only once the backup is gone: a refused delete leaves it listed under the refusal
          void run('Delete', M_DELETE_BACKUP, { backupId: b.id }).then((done) => {
            if (!done) return;
            rows.get(b.id)?.remove();
            rows.delete(b.id);
          });
        });
    }
    return cell;
  }

  /** Adds or replaces the row of a backup. */
  function show(b: Backup): void {
    const row = h(
      'tr',
      { 'data-backup': b.id, 'data-status': b.status },
      h('td', null, b.name, b.locked ? h('span', { className: 'muted' }, ' (locked)') : ''),
      h('td', null, h('time', { datetime: b.createdAt }, new Date(b.createdAt).toLocaleString())),
      h('td', { className: b.status === 'failed' ? 'error' : '' }, statusText(b)),
      actions(b),
    );
    const old = rows.get(b.id);
    if (old) old.replaceWith(row);
    else body.prepend(row);
    rows.set(b.id, row);
  }

  function createForm(): HTMLFormElement {
    const name = h('input', { id: 'backup-name', name: 'name', maxLength: 100, placeholder: 'Before the update' });
    const ignored = h('input', { id: 'backup-ignored', name: 'ignored', placeholder: 'logs/, *.tmp' });
    const form = h(
      'form',
      { className: 'toolbar', 'aria-label': 'New backup' },
      field('Name', name).wrap,
      field('Leave out (patterns, comma-separated)', ignored).wrap,
      h('button', { type: 'submit', className: 'btn' }, 'Back up now'),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const patterns = ignored.value.split(',').map((s) => s.trim()).filter(Boolean);
      // the name typed is kept when the backup is refused (at the limit, say), to try again
      void run('Backup', M_CREATE_BACKUP, { input: { ...(name.value.trim() ? { name: name.value.trim() } : {}), ...(patterns.length ? { ignored: patterns } : {}) } }).then((done) => {
        if (done) name.value = '';
      });
    });
    return form;
  }

  void (async () => {
    const server = await openServerSection(serverId, 'backups', 'Backups', title, msg, () => disposed);
    if (!server || disposed) return;
    permissions = server.permissions;
    // an address kept from before the key was taken away: say so, with no empty table under a
    // "Live updates stopped" that hid that nothing could be loaded
    if (!can(permissions, 'backup.read')) {
      msg.error('Could not load the backups: You need the "backup.read" permission on this server; ask its owner.');
      return;
    }
    const table = h('table', { className: 'backups' }, h('caption', { className: 'visually-hidden' }, 'Backups, newest first'), h('thead', null, h('tr', null, h('th', null, 'Name'), h('th', null, 'Made'), h('th', null, 'State'), h('th', null, h('span', { className: 'visually-hidden' }, 'Actions')))), body);
    main.append(h('section', { className: 'card' }, can(permissions, 'backup.create') ? createForm() : '', table));
    const live = new LiveMerge<Backup>();
    const load = async (): Promise<void> => {
      live.begin();
      try {
        const d = await gql<{ backups: { items: Backup[] } }>(Q_BACKUPS, { serverId });
        if (disposed) return;
        const { items, newer } = live.merge(d.backups.items);
        clear(body);
        rows.clear();
        [...items.reverse(), ...newer].forEach(show);
      } catch (err) {
        msg.error(`Could not load the backups: ${describe(err)}`);
      }
    };
    // subscribed first, then loaded, and loaded again whenever the connection comes up: a backup that
    // changes while the list loads, or while the connection is down, never stays shown as it was
    stop = subscribe<{ serverBackups: Backup }>(
      S_BACKUPS,
      { serverId },
      (d) => {
        live.add(d.serverBackups);
        show(d.serverBackups);
      },
      (err) => msg.error(`Live updates stopped: ${describe(err)}`),
      () => void load(),
    );
    await load();
  })();

  return () => {
    disposed = true;
    stop?.();
  };
};
