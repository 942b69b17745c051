/** A table of activity-log entries, newest first, with an event filter; new entries can be prepended live. */
import { h } from '../dom';
import type { ActivityEntry } from '../queries';

/** The areas offered by the filter (an event prefix each). */
export const AREAS: [prefix: string, label: string][] = [
  ['', 'Everything'],
  ['server:power', 'Power'],
  ['server:console', 'Console'],
  ['server:subuser', 'Users'],
  ['server:file', 'Files'],
  ['server:backup', 'Backups'],
  ['server:schedule', 'Schedules'],
  ['server:sftp', 'SFTP'],
  ['server:', 'Server (all)'],
  ['auth:', 'Sign-in'],
  ['user:', 'Account'],
  ['node:', 'Nodes'],
];

/** How many items of a list property are named (the rest are counted), and the longest text shown. */
const LISTED = 5;
const LONGEST = 120;

const isScalar = (v: unknown): v is string | number | boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
const shorten = (text: string): string => (text.length > LONGEST ? `${text.slice(0, LONGEST - 1)}…` : text);

/** A rename of a list of them (`renames` of SFTP's entries: `{ from, to }`). */
const isRename = (v: unknown): v is { from: string; to: string } => typeof v === 'object' && v !== null && typeof (v as { from?: unknown }).from === 'string' && typeof (v as { to?: unknown }).to === 'string';

/** A property as text: a value, or a list's first items (values or renames) and how many more; null for other shapes. */
function valueText(v: unknown): string | null {
  if (isScalar(v)) return shorten(String(v));
  if (!Array.isArray(v) || !v.length || !(v.every(isScalar) || v.every(isRename))) return null;
  const named = v
    .slice(0, LISTED)
    .map((item) => (isRename(item) ? `${shorten(item.from)} → ${shorten(item.to)}` : shorten(String(item))))
    .join(', ');
  return v.length > LISTED ? `${named} and ${v.length - LISTED} more` : named;
}

function details(e: ActivityEntry): string {
  const p = e.properties ?? {};
  if (typeof p.command === 'string') return p.command;
  if (Array.isArray(p.permissions)) return `${p.email ?? ''} ${(p.permissions as string[]).join(', ')}`.trim();
  if (Array.isArray(p.fields)) return `changed ${(p.fields as string[]).join(', ')}`;
  const parts = Object.entries(p).flatMap(([k, v]) => {
    const text = valueText(v);
    return text === null ? [] : [`${k}: ${text}`];
  });
  return parts.join(' · ');
}

export function activityRow(e: ActivityEntry): HTMLTableRowElement {
  const when = new Date(e.createdAt);
  return h(
    'tr',
    { 'data-event': e.event, 'data-id': e.id },
    h('td', null, h('time', { datetime: e.createdAt, title: when.toISOString() }, when.toLocaleString())),
    h('td', null, h('code', null, e.event)),
    h('td', null, e.actor?.email ?? h('span', { className: 'muted' }, 'system')),
    h('td', { className: 'activity-details' }, details(e)),
    h('td', { className: 'muted' }, e.ip ?? ''),
  );
}

export function activityTable(caption: string): { el: HTMLTableElement; body: HTMLTableSectionElement } {
  const body = h('tbody', null);
  const el = h(
    'table',
    { className: 'activity' },
    h('caption', { className: 'visually-hidden' }, caption),
    h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'When'), h('th', { scope: 'col' }, 'Event'), h('th', { scope: 'col' }, 'Who'), h('th', { scope: 'col' }, 'Details'), h('th', { scope: 'col' }, 'From'))),
    body,
  );
  return { el, body };
}

export function areaSelect(onChange: (prefix: string) => void): HTMLSelectElement {
  const select = h('select', { id: 'activity-area', name: 'area' }, AREAS.map(([value, label]) => h('option', { value }, label)));
  select.addEventListener('change', () => onChange(select.value));
  return select;
}
