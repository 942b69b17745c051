/** The tabs of a server's pages, and what the signed-in user may do on the server (its `permissions`). */
import { link } from '../app';
import { h } from '../dom';

/** Whether the holder of `permissions` may do `key` (`*`: the owner or an administrator). */
export function can(permissions: readonly string[], key: string): boolean {
  return permissions.includes('*') || permissions.includes(key);
}

export type ServerTab = 'console' | 'files' | 'backups' | 'schedules' | 'users' | 'activity';

/** Console, Files, Backups, Schedules, Users and Activity: each tab shown only to those whose keys allow it. */
export function serverTabs(serverId: string, permissions: readonly string[], active: ServerTab): HTMLElement {
  const tab = (key: ServerTab, href: string, text: string) => {
    const a = link(href, text, { className: 'tab' });
    if (key === active) a.setAttribute('aria-current', 'page');
    return h('li', null, a);
  };
  const base = `/servers/${serverId}`;
  return h(
    'nav',
    { className: 'tabs', 'aria-label': 'Server sections' },
    h(
      'ul',
      null,
      tab('console', base, 'Console'),
      can(permissions, 'file.read') ? tab('files', `${base}/files`, 'Files') : null,
      can(permissions, 'backup.read') ? tab('backups', `${base}/backups`, 'Backups') : null,
      can(permissions, 'schedule.read') ? tab('schedules', `${base}/schedules`, 'Schedules') : null,
      can(permissions, 'user.read') ? tab('users', `${base}/users`, 'Users') : null,
      can(permissions, 'activity.read') ? tab('activity', `${base}/activity`, 'Activity') : null,
    ),
  );
}
