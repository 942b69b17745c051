/**
 * HostPanel web page: sign in, servers with live status, power, live console, admin overview.
 * Plain TypeScript + DOM; GraphQL over HTTP and graphql-ws (see api.ts).
 */
import { ApiError, describe, gql, onConnectionState, resetLive, setUnauthorizedHandler } from './api';
import { entryIndex, isAdmin, link, mayLeave, navigate, setMeChangedHandler, setNavigateHandler, state, type Cleanup, type View } from './app';
import { clear, h, visibleText } from './dom';
import { M_SIGN_OUT, Q_ME, type User } from './queries';
import { accountView } from './views/account';
import { adminView } from './views/admin';
import { adminBlueprintView } from './views/admin-blueprint';
import { adminBlueprintsView } from './views/admin-blueprints';
import { createServerView } from './views/create-server';
import { serverView } from './views/server';
import { serverActivityView } from './views/server-activity';
import { serverFilesView } from './views/server-files';
import { serverBackupsView } from './views/server-backups';
import { serverStartupView } from './views/server-startup';
import { serverSchedulesView } from './views/server-schedules';
import { serverUsersView } from './views/server-users';
import { adminActivityView } from './views/admin-activity';
import { adminUserView, adminUsersView } from './views/admin-users';
import { serversView } from './views/servers';
import { signInView } from './views/signin';

const main = document.getElementById('main') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;

const routes: { pattern: RegExp; view: View; title: string; auth: boolean; admin?: boolean }[] = [
  { pattern: /^\/sign-in\/?$/, view: signInView, title: 'Sign in', auth: false },
  { pattern: /^\/(servers\/?)?$/, view: serversView, title: 'Servers', auth: true },
  { pattern: /^\/account\/?$/, view: accountView, title: 'Account', auth: true },
  { pattern: /^\/servers\/new\/?$/, view: createServerView, title: 'New server', auth: true },
  { pattern: /^\/servers\/(?<id>[0-9a-fA-F-]{8,})\/?$/, view: serverView, title: 'Server', auth: true },
  { pattern: /^\/servers\/(?<id>[0-9a-fA-F-]{8,})\/files\/?$/, view: serverFilesView, title: 'Files', auth: true },
  { pattern: /^\/servers\/(?<id>[0-9a-fA-F-]{8,})\/backups\/?$/, view: serverBackupsView, title: 'Backups', auth: true },
  { pattern: /^\/servers\/(?<id>[0-9a-fA-F-]{8,})\/schedules\/?$/, view: serverSchedulesView, title: 'Schedules', auth: true },
  { pattern: /^\/servers\/(?<id>[0-9a-fA-F-]{8,})\/startup\/?$/, view: serverStartupView, title: 'Startup', auth: true },
  { pattern: /^\/servers\/(?<id>[0-9a-fA-F-]{8,})\/users\/?$/, view: serverUsersView, title: 'Users', auth: true },
  { pattern: /^\/servers\/(?<id>[0-9a-fA-F-]{8,})\/activity\/?$/, view: serverActivityView, title: 'Activity', auth: true },
  { pattern: /^\/admin\/?$/, view: adminView, title: 'Administration', auth: true, admin: true },
  { pattern: /^\/admin\/activity\/?$/, view: adminActivityView, title: 'Activity', auth: true, admin: true },
  { pattern: /^\/admin\/blueprints\/?$/, view: adminBlueprintsView, title: 'Blueprints', auth: true, admin: true },
  { pattern: /^\/admin\/blueprints\/(?<id>[0-9a-fA-F-]{8,})\/?$/, view: adminBlueprintView, title: 'Blueprint', auth: true, admin: true },
  { pattern: /^\/admin\/users\/?$/, view: adminUsersView, title: 'Users', auth: true, admin: true },
  { pattern: /^\/admin\/users\/(?<id>[0-9a-fA-F-]{8,})\/?$/, view: adminUserView, title: 'User', auth: true, admin: true },
];

let cleanup: Cleanup | void;
let firstRender = true;
/** The address of the view shown and where its entry stands in the history (to come back to when the user stays on it after Back). */
let shownUrl = location.pathname + location.search + location.hash;
let shownIndex = entryIndex();
/** the popstate of going back to the entry shown, after the user chose to stay: not a navigation */
let returning = false;

function renderNav(): void {
  clear(nav);
  if (!state.user) return;
  const here = location.pathname;
  const item = (href: string, text: string, active: boolean) => {
    const a = link(href, text);
    if (active) a.setAttribute('aria-current', 'page');
    return h('li', null, a);
  };
  const liveDot = h('span', { 'aria-hidden': 'true' });
  paintDot(liveDot);
  nav.append(
    h(
      'ul',
      null,
      item('/', 'Servers', here === '/' || here.startsWith('/servers')),
      isAdmin() ? item('/admin', 'Admin', here.startsWith('/admin')) : null,
    ),
    h(
      'div',
      { className: 'user-box' },
      liveDot,
      accountLink(state.user.name, here),
      h('button', { type: 'button', className: 'btn btn-quiet', onclick: signOut }, 'Sign out'),
    ),
  );
}

/** The user's name in the navigation: a link to their Account page. */
function accountLink(name: string, here: string): HTMLAnchorElement {
  const a = link('/account', visibleText(name), { className: 'user-name', title: 'Your account: name, email, password, API tokens' });
  if (isAdmin()) a.append(h('span', { className: 'role' }, ' (admin)'));
  if (/^\/account\/?$/.test(here)) a.setAttribute('aria-current', 'page');
  return a;
}

/** The little dot by the user's name: the live-updates connection (green connected, amber connecting, grey idle). */
let liveState: 'connecting' | 'connected' | 'closed' = 'closed';
function paintDot(dot: Element): void {
  dot.className = `live-dot live-${liveState}`;
  dot.setAttribute('title', liveState === 'connected' ? 'Live updates: connected' : liveState === 'connecting' ? 'Live updates: connecting…' : 'Live updates: idle');
}
onConnectionState((s) => {
  liveState = s;
  const dot = nav.querySelector('.live-dot');
  if (dot) paintDot(dot);
});

async function signOut(): Promise<void> {
  try {
    await gql(M_SIGN_OUT, undefined, { quietAuth: true });
  } catch (err) {
    // a session already gone is signed out; any other failure leaves it valid: say so, and stay
    if (!(err instanceof ApiError && err.code === 'UNAUTHORIZED')) {
      const box = nav.querySelector('.user-box');
      box?.querySelector('.sign-out-error')?.remove();
      box?.append(h('span', { className: 'sign-out-error message-error', role: 'alert' }, `Not signed out: ${describe(err)}`));
      return;
    }
  }
  state.user = null;
  navigate('/sign-in'); // the view's cleanup ends its subscriptions first
  resetLive();
}

function render(): void {
  cleanup?.();
  cleanup = undefined;
  rendered();
  const path = location.pathname;
  let match = routes.find((r) => r.pattern.test(path));
  if (!match) {
    renderNav();
    clear(main);
    main.append(h('h1', { tabindex: '-1' }, 'Page not found'), h('p', null, 'There is nothing at this address. ', link('/', 'Go to your servers'), '.'));
    document.title = 'Not found · HostPanel';
    focusHeading();
    return;
  }
  if (match.auth && !state.user) {
    // the whole address, query included (a folder's `?path=`), to come back to after signing in
    const next = path === '/' && !location.search ? '' : `?next=${encodeURIComponent(path + location.search)}`;
    history.replaceState(history.state, '', `/sign-in${next}`);
    match = routes[0]!;
  } else if (!match.auth && state.user) {
    history.replaceState(history.state, '', '/');
    match = routes[1]!;
  }
  rendered();
  if (match.admin && !isAdmin()) {
    renderNav();
    clear(main);
    main.append(h('h1', { tabindex: '-1' }, 'Administrators only'), h('p', null, 'This page is for administrators. ', link('/', 'Back to your servers'), '.'));
    focusHeading();
    return;
  }
  renderNav();
  clear(main);
  document.title = `${match.title} · HostPanel`;
  const params = (match.pattern.exec(location.pathname)?.groups ?? {}) as Record<string, string>;
  cleanup = match.view(main, params);
  focusHeading();
}

/** Notes the address of the view being shown. */
function rendered(): void {
  shownUrl = location.pathname + location.search + location.hash;
  shownIndex = entryIndex();
}

/** After a navigation, move focus to the new view's heading so keyboard and screen-reader users land on it. */
function focusHeading(): void {
  if (firstRender) {
    firstRender = false;
    return;
  }
  const h1 = main.querySelector('h1');
  if (h1) {
    if (!h1.hasAttribute('tabindex')) h1.setAttribute('tabindex', '-1');
    h1.focus({ preventScroll: false });
  }
}

setNavigateHandler(render);
setMeChangedHandler(renderNav);
setUnauthorizedHandler(() => {
  if (!state.user) return;
  state.user = null;
  navigate(`/sign-in?expired=1`);
  resetLive();
});

document.addEventListener('click', (e) => {
  const a = (e.target as Element | null)?.closest?.('a[data-link]') as HTMLAnchorElement | null;
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || a.target) return;
  const url = new URL(a.href);
  if (url.origin !== location.origin) return;
  e.preventDefault();
  navigate(url.pathname + url.search);
});
// Back and Forward ask the view's leave guard as in-page links do (unsaved editor changes): when the
// user stays, the history goes back to the entry of the view still shown (its address in the bar)
window.addEventListener('popstate', () => {
  if (returning) {
    returning = false;
    if (location.pathname + location.search + location.hash === shownUrl) return;
  }
  if (mayLeave()) return render();
  const delta = entryIndex() - shownIndex;
  if (delta !== 0) {
    returning = true;
    history.go(-delta);
  } else {
    history.pushState({ idx: entryIndex() + 1 }, '', shownUrl);
    shownIndex = entryIndex();
  }
});

async function boot(): Promise<void> {
  try {
    const d = await gql<{ me: User }>(Q_ME, undefined, { quietAuth: true });
    state.user = d.me;
  } catch (err) {
    state.user = null;
    if (!(err instanceof ApiError && err.code === 'UNAUTHORIZED')) {
      clear(main);
      main.append(h('h1', null, 'HostPanel'), h('p', { className: 'message message-error', role: 'alert' }, describe(err)), h('button', { type: 'button', className: 'btn', onclick: () => location.reload() }, 'Try again'));
      return;
    }
  }
  render();
}

void boot();
