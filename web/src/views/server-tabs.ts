/** The tabs of a server's pages, and what the signed-in user may do on the server (its `permissions`). */
import { describe, gql } from '../api';
import { link } from '../app';
import { h } from '../dom';
import { Q_SERVER, type Server } from '../queries';

/** Whether the holder of `permissions` may do `key` (`*`: the owner or an administrator). */
export function can(permissions: readonly string[], key: string): boolean {
  return permissions.includes('*') || permissions.includes(key);
}

export type ServerTab = 'console' | 'files' | 'backups' | 'schedules' | 'startup' | 'users' | 'activity';

/** Console, Files, Backups, Schedules, Startup, Users and Activity: each tab shown only to those whose keys allow it. */
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
      can(permissions, 'startup.read') ? tab('startup', `${base}/startup`, 'Startup') : null,
      can(permissions, 'user.read') ? tab('users', `${base}/users`, 'Users') : null,
      can(permissions, 'activity.read') ? tab('activity', `${base}/activity`, 'Activity') : null,
    ),
  );
}

/**
 * Loads the server of a section page and heads the page with its name and tabs: the server, or null
 * (the error shown in `msg`) when it cannot be loaded or the page was left meanwhile.
 */
export async function openServerSection(
  serverId: string,
  tab: ServerTab,
  label: string,
  title: HTMLElement,
  msg: { error(text: string): void },
  left: () => boolean,
): Promise<Server | null> {
  let server: Server;
  try {
    server = (await gql<{ server: Server }>(Q_SERVER, { id: serverId })).server;
  } catch (err) {
    if (!left()) msg.error(`Could not load the server: ${describe(err)}`);
    return null;
  }
  if (left()) return null;
  document.title = `${label} · ${server.name} · HostPanel`;
  title.textContent = `${server.name}: ${label.toLowerCase()}`;
  title.after(serverTabs(server.id, server.permissions, tab));
  return server;
}
