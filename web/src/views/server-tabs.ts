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

/** Needed to see a server's console, its live status and resource use. */
export const CONSOLE_KEY = 'websocket.connect';
/** The keys of the power buttons (kill is a kind of stop). */
export const POWER_KEYS = ['control.start', 'control.stop', 'control.restart'] as const;

/** The section tabs after the first, each with the key that shows it, in their order. */
const SECTIONS: readonly { tab: Exclude<ServerTab, 'console'>; path: string; text: string; key: string }[] = [
  { tab: 'files', path: '/files', text: 'Files', key: 'file.read' },
  { tab: 'backups', path: '/backups', text: 'Backups', key: 'backup.read' },
  { tab: 'schedules', path: '/schedules', text: 'Schedules', key: 'schedule.read' },
  { tab: 'startup', path: '/startup', text: 'Startup', key: 'startup.read' },
  { tab: 'users', path: '/users', text: 'Users', key: 'user.read' },
  { tab: 'activity', path: '/activity', text: 'Activity', key: 'activity.read' },
];

/**
 * The name of the server's first page for the holder of `permissions`: its Console (with
 * `websocket.connect`), its Overview (power buttons and details, for those who may use the power buttons
 * but not watch the console, or who may open no other tab), or null: nothing on it is theirs to use.
 */
export function firstPageName(permissions: readonly string[]): 'Console' | 'Overview' | null {
  if (can(permissions, CONSOLE_KEY)) return 'Console';
  if (POWER_KEYS.some((k) => can(permissions, k))) return 'Overview';
  return SECTIONS.some((s) => can(permissions, s.key)) ? null : 'Overview';
}

/** The tab a user opening the server should land on: the first one their keys let them use. */
export function landingTab(permissions: readonly string[]): ServerTab {
  if (firstPageName(permissions)) return 'console';
  return SECTIONS.find((s) => can(permissions, s.key))?.tab ?? 'console';
}

/** The name of a tab, as its link says it. */
export function tabName(permissions: readonly string[], tab: ServerTab): string {
  return tab === 'console' ? (firstPageName(permissions) ?? 'Overview') : SECTIONS.find((s) => s.tab === tab)!.text;
}

/** The address of a tab of a server's pages. */
export function serverTabPath(serverId: string, tab: ServerTab): string {
  const base = `/servers/${serverId}`;
  return tab === 'console' ? base : base + SECTIONS.find((s) => s.tab === tab)!.path;
}

/** Console (or Overview), Files, Backups, Schedules, Startup, Users and Activity: each tab shown only to those whose keys allow it. */
export function serverTabs(serverId: string, permissions: readonly string[], active: ServerTab): HTMLElement {
  const tab = (key: ServerTab, text: string) => {
    const a = link(serverTabPath(serverId, key), text, { className: 'tab' });
    if (key === active) a.setAttribute('aria-current', 'page');
    return h('li', null, a);
  };
  const first = firstPageName(permissions);
  return h(
    'nav',
    { className: 'tabs', 'aria-label': 'Server sections' },
    h('ul', null, first ? tab('console', first) : null, ...SECTIONS.map((s) => (can(permissions, s.key) ? tab(s.tab, s.text) : null))),
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
