/** The server list: live status per server, quick power buttons, paging. */
import { describe, gql } from '../api';
import { isAdmin, link, type View } from '../app';
import { clear, h, mib, messageBox, pagerButtons } from '../dom';
import { Q_SERVERS, type Server, type ServerStatus } from '../queries';
import { powerButtons, setBadge, statusBadge, watchStatus } from './common';
import { can, CONSOLE_KEY, landingTab, serverTabPath, tabName } from './server-tabs';

const PAGE_SIZE = 20;

/**
 * A server's card: status badge (live for those who may watch the server: its status subscription goes
 * to `subs`), the quick power buttons the user's keys allow, and a link to the first tab they can use.
 */
function serverCard(s: Server, subs: (() => void)[]): HTMLLIElement {
  const badge = statusBadge(s.status);
  const cardMsg = messageBox();
  const actions = (['start', 'stop'] as const).filter((a) => can(s.permissions, `control.${a}`));
  const power = powerButtons(
    s.id,
    s.name,
    actions,
    (st) => apply(st),
    (m) => cardMsg.error(m),
  );
  const apply = (st: ServerStatus) => {
    setBadge(badge, st);
    power.update(st);
  };
  apply(s.status);
  // deleted while the list is open: the card stays (the pages do not shift) and says so
  const gone = () => {
    badge.className = 'status status-deleted';
    badge.dataset.status = 'deleted';
    badge.textContent = 'Deleted';
    card.querySelector('.server-card-actions')?.remove();
    card.querySelector('h2 a')?.replaceWith(s.name);
    cardMsg.info(`${s.name} has been deleted.`);
  };
  if (can(s.permissions, CONSOLE_KEY)) subs.push(watchStatus(s.id, () => s.name, apply, undefined, gone));
  const first = landingTab(s.permissions);
  const firstName = tabName(s.permissions, first);
  const titleId = `server-${s.id}-name`;
  const card = h(
    'li',
    { className: 'card server-card', 'data-server-id': s.id, 'aria-labelledby': titleId },
    h('div', { className: 'server-card-head' }, h('h2', { id: titleId }, link(`/servers/${s.id}`, s.name)), badge),
    h(
      'p',
      { className: 'meta' },
      s.blueprint.name,
      ' · ',
      `${mib(s.memory)} RAM · ${s.cpu}% CPU · ${mib(s.disk)} disk`,
      ' · node ',
      s.node.name,
      isAdmin() && s.owner ? ` · owner ${s.owner.name}` : null,
    ),
    h('div', { className: 'server-card-actions' }, actions.length ? power.el : null, link(serverTabPath(s.id, first), firstName, { class: 'btn btn-quiet', 'aria-label': `${firstName} of ${s.name}` })),
    cardMsg.el,
  );
  return card;
}

export const serversView: View = (main) => {
  const msg = messageBox();
  const list = h('ul', { className: 'server-list', 'aria-labelledby': 'servers-title' });
  const summary = h('p', { className: 'muted', id: 'servers-summary' });
  const pager = h('nav', { className: 'pager', 'aria-label': 'Server pages' });
  let page = Number(new URLSearchParams(location.search).get('page')) || 1;
  let subs: (() => void)[] = [];
  let disposed = false;

  main.append(
    h(
      'div',
      { className: 'page-head' },
      h('h1', { id: 'servers-title' }, isAdmin() ? 'All servers' : 'Your servers'),
      link('/servers/new', 'New server', { class: 'btn btn-primary' }),
    ),
    msg.el,
    summary,
    list,
    pager,
  );

  const unsubscribeAll = () => {
    subs.forEach((u) => u());
    subs = [];
  };

  async function load(): Promise<void> {
    summary.textContent = 'Loading servers…';
    try {
      const d = await gql<{ servers: { total: number; page: number; limit: number; items: Server[] } }>(Q_SERVERS, { page, limit: PAGE_SIZE });
      if (disposed) return;
      render(d.servers.items, d.servers.total);
    } catch (err) {
      summary.textContent = '';
      msg.error(`Could not load the servers: ${describe(err)}`);
    }
  }

  function render(items: Server[], total: number): void {
    unsubscribeAll();
    clear(list);
    clear(pager);
    if (total === 0) {
      summary.textContent = '';
      list.append(h('li', { className: 'empty card' }, h('p', null, 'No servers yet.'), h('p', null, link('/servers/new', 'Create your first server'), ' from a blueprint.')));
      return;
    }
    const from = (page - 1) * PAGE_SIZE + 1;
    summary.textContent = `${total} server${total === 1 ? '' : 's'}` + (total > PAGE_SIZE ? `, showing ${from}–${from + items.length - 1}` : '');
    for (const s of items) list.append(serverCard(s, subs));
    pager.append(...pagerButtons(page, Math.ceil(total / PAGE_SIZE), (p) => {
      page = p;
      history.replaceState(history.state, '', p === 1 ? '/' : `/?page=${p}`);
      void load();
    }));
  }

  void load();
  return () => {
    disposed = true;
    unsubscribeAll();
  };
};
