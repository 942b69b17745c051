/** Shared page state: the signed-in user, navigation between views (History API; the panel serves index.html for any page path). */
import { resetLive } from './api';
import type { User } from './queries';

/** A view renders into `main` and returns its cleanup (unsubscribe, close sockets, clear timers). */
export type Cleanup = () => void;
export type View = (main: HTMLElement, params: Record<string, string>) => Cleanup | void;

export const state: { user: User | null } = { user: null };

let onNavigate: (() => void) | null = null;
export function setNavigateHandler(fn: () => void): void {
  onNavigate = fn;
}

/** Asked before an in-page navigation (by a view with unsaved work): false stays on the page. */
let leaveGuard: (() => boolean) | null = null;
/** Sets the guard of in-page navigations; returns its removal (for the view's cleanup). */
export function guardLeaving(fn: () => boolean): () => void {
  leaveGuard = fn;
  return () => {
    if (leaveGuard === fn) leaveGuard = null;
  };
}

/** Whether the page may leave the view shown: no guard, or the guard agrees (it may ask the user). */
export function mayLeave(): boolean {
  return !leaveGuard || leaveGuard();
}

/**
 * Where the current entry stands in the tab's history (kept in its history.state, 0 for one without):
 * Back and Forward can tell how far they went, to come back when the user stays on the page.
 */
export function entryIndex(): number {
  const idx = (history.state as { idx?: unknown } | null)?.idx;
  return typeof idx === 'number' ? idx : 0;
}

export function navigate(path: string, opts: { replace?: boolean } = {}): void {
  if (!mayLeave()) return;
  if (path !== location.pathname + location.search) {
    const at = entryIndex();
    if (opts.replace) history.replaceState({ idx: at }, '', path);
    else history.pushState({ idx: at + 1 }, '', path);
  }
  onNavigate?.();
}

/** An in-page link: a real <a href> (works with middle-click / open in new tab) routed without reload. */
export function link(href: string, text: string | Node, attrs: Record<string, string> = {}): HTMLAnchorElement {
  const a = document.createElement('a');
  a.href = href;
  a.dataset.link = '';
  for (const [k, v] of Object.entries(attrs)) a.setAttribute(k === 'className' ? 'class' : k, v);
  a.append(text);
  return a;
}

export function isAdmin(): boolean {
  return state.user?.role === 'admin';
}

/** After sign-in: remember the user and drop any WebSocket opened without the new cookie. */
export function signedIn(user: User): void {
  state.user = user;
  resetLive();
}

/** Redraws what shows the signed-in user (the navigation; set by main.ts). */
let onMeChanged: (() => void) | null = null;
export function setMeChangedHandler(fn: () => void): void {
  onMeChanged = fn;
}

/** An account as the panel saved it: when it is the signed-in user's, the page's idea of them (and the navigation) follows. */
export function followMe(u: User): void {
  const me = state.user;
  if (!me || u.id !== me.id) return;
  if (me.name === u.name && me.email === u.email && me.role === u.role) return;
  state.user = { id: u.id, name: u.name, email: u.email, role: u.role };
  onMeChanged?.();
}
