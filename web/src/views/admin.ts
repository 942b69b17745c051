/**
 * Administration: platform figures (adminStats) and the nodes with their live figures (nodeStats).
 * One GraphQL request per refresh (aliases), so the admin rate-limit bucket is spent sparingly.
 */
import { describe, gql } from '../api';
import { link, type View } from '../app';
import { announce, clear, duration, h, mib, messageBox } from '../dom';
import { STATUS_LABEL, type NodeInfo, type NodeStats, type PlatformStats, type ServerStatus } from '../queries';
import { nodeForm } from './admin-node-form';

const REFRESH_MS = 15_000;
const STATS_FIELDS = 'online uptime cpu { cores usage load } memory { total used } disk { total used } servers { total running }';
const NODE_FIELDS = 'id name fqdn port scheme memory disk cpuCores status lastSeenAt allocated { memory disk }';

function pct(used: number | null | undefined, total: number | null | undefined): number | null {
  if (used === null || used === undefined || !total) return null;
  return Math.min(100, Math.max(0, (used / total) * 100));
}

/** A labelled meter: <meter> plus text, so the figure is readable without colour. */
function meter(label: string, used: number | null | undefined, total: number | null | undefined, text: string): HTMLDivElement {
  const p = pct(used, total);
  return h(
    'div',
    { className: 'meter-row' },
    h('span', { className: 'meter-label' }, label),
    p === null ? h('span', { className: 'muted' }, '—') : h('meter', { min: '0', max: '100', value: p.toFixed(1), high: '85', optimum: '0', 'aria-label': `${label}: ${text}` }),
    h('span', { className: 'meter-text' }, text),
  );
}

type Figures = { platform: PlatformStats; nodes: NodeInfo[]; total: number; stats: Record<string, NodeStats> };

/** The platform's figures and the first 20 nodes with their live figures: two requests (aliases for the nodes). */
async function fetchFigures(): Promise<Figures> {
  const base = await gql<{ adminStats: PlatformStats; nodes: { total: number; items: NodeInfo[] } }>(`query Admin { adminStats { users blueprints nodes { total online } servers { total byStatus { installing install_failed offline starting running stopping } } memory { allocated total } disk { allocated total } } nodes(limit: 100) { total items { ${NODE_FIELDS} } } }`);
  const nodes = base.nodes.items.slice(0, 20);
  let stats: Record<string, NodeStats> = {};
  if (nodes.length) {
    const vars = nodes.map((_, i) => `$n${i}: ID!`).join(', ');
    const fields = nodes.map((_, i) => `n${i}: nodeStats(nodeId: $n${i}) { ${STATS_FIELDS} }`).join(' ');
    stats = await gql<Record<string, NodeStats>>(`query NodeFigures(${vars}) { ${fields} }`, Object.fromEntries(nodes.map((n, i) => [`n${i}`, n.id])));
  }
  return { platform: base.adminStats, nodes, total: base.nodes.total, stats };
}

function platformFigures(s: PlatformStats): HTMLElement[] {
  const byStatus = (Object.keys(s.servers.byStatus) as ServerStatus[])
    .filter((k) => s.servers.byStatus[k] > 0)
    .map((k) => `${s.servers.byStatus[k]} ${STATUS_LABEL[k].toLowerCase()}`)
    .join(', ');
  const figure = (term: string, ...value: (string | number | HTMLElement | null)[]) => h('div', null, h('dt', null, term), h('dd', null, ...value));
  return [
    h(
      'dl',
      { className: 'figures' },
      figure('Users', s.users),
      figure('Servers', s.servers.total, byStatus ? h('span', { className: 'sub' }, byStatus) : null),
      figure('Nodes online', `${s.nodes.online} of ${s.nodes.total}`),
      figure('Blueprints', s.blueprints),
    ),
    meter('Memory allocated', s.memory.allocated, s.memory.total, `${mib(s.memory.allocated)} of ${mib(s.memory.total)}`),
    meter('Disk allocated', s.disk.allocated, s.disk.total, `${mib(s.disk.allocated)} of ${mib(s.disk.total)}`),
  ];
}

/** A node's live figures, or why there are none. */
function liveFigures(st: NodeStats | undefined): HTMLElement | HTMLElement[] {
  if (!st?.online) return h('p', { className: 'muted' }, 'The node agent cannot be reached: no live figures.');
  const load = st.cpu.load ? ` · load ${st.cpu.load.map((l) => l.toFixed(2)).join(' ')}` : '';
  return [
    meter('CPU', st.cpu.usage, 100, `${st.cpu.usage?.toFixed(1) ?? '—'}% of ${st.cpu.cores ?? '?'} cores${load}`),
    meter('Memory', st.memory.used, st.memory.total, `${mib(st.memory.used)} of ${mib(st.memory.total)}`),
    meter('Disk', st.disk.used, st.disk.total, `${mib(st.disk.used)} of ${mib(st.disk.total)}`),
    h('p', { className: 'meta' }, `Servers: ${st.servers.running ?? 0} running of ${st.servers.total ?? 0} · agent up ${duration(st.uptime)}`),
  ];
}

/** A node's card; `action` is its Edit button or its open form. */
function nodeCard(n: NodeInfo, st: NodeStats | undefined, action: HTMLElement): HTMLLIElement {
  const online = st?.online ?? false;
  const titleId = `node-${n.id}`;
  return h(
    'li',
    { className: 'card node-card', 'aria-labelledby': titleId, 'data-id': n.id },
    h('div', { className: 'server-card-head' }, h('h3', { id: titleId }, n.name), h('span', { className: `status ${online ? 'status-running' : 'status-offline'}` }, online ? 'Online' : 'Offline')),
    h('p', { className: 'meta' }, `${n.scheme}://${n.fqdn}:${n.port}`, n.lastSeenAt ? ` · last seen ${new Date(n.lastSeenAt).toLocaleString()}` : ''),
    liveFigures(st),
    n.allocated ? meter('Allocated memory', n.allocated.memory, n.memory, `${mib(n.allocated.memory)} of ${mib(n.memory)} allocatable`) : null,
    action,
  );
}

export const adminView: View = (main) => {
  const msg = messageBox();
  const platformBody = h('div', { 'aria-busy': 'true' }, h('p', { className: 'muted' }, 'Loading…'));
  const platform = h('section', { className: 'card', 'aria-labelledby': 'platform-title' }, h('h2', { id: 'platform-title' }, 'Platform'), platformBody);
  const nodesList = h('ul', { className: 'node-list' });
  const nodesSection = h('section', { 'aria-labelledby': 'nodes-title' }, h('h2', { id: 'nodes-title' }, 'Nodes'), nodesList);
  const updated = h('p', { className: 'muted', role: 'status' });
  const refreshBtn = h('button', { type: 'button', className: 'btn', onclick: () => void load() }, 'Refresh');
  main.append(h('div', { className: 'page-head' }, h('h1', null, 'Administration'), refreshBtn), msg.el, h('p', null, link('/admin/blueprints', 'Blueprints: import eggs, create and edit →')), h('p', null, link('/admin/users', 'Users: accounts, passwords and roles →')), h('p', null, link('/admin/activity', 'Activity log of the whole platform →')), updated, platform, nodesSection);

  let disposed = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let shown: Figures | null = null;
  /** The node whose form is open, and the form: a refresh keeps it (with what is typed), the timer holds off meanwhile. */
  let editing: { id: string; form: HTMLFormElement } | null = null;

  function render(f: Figures): void {
    shown = f;
    clear(platformBody);
    platformBody.removeAttribute('aria-busy');
    platformBody.append(...platformFigures(f.platform));
    clear(nodesList);
    if (editing && !f.nodes.some((n) => n.id === editing!.id)) editing = null; // deleted meanwhile
    if (!f.nodes.length) nodesList.append(h('li', { className: 'card empty' }, 'No nodes registered.'));
    f.nodes.forEach((n, i) => nodesList.append(nodeCard(n, f.stats[`n${i}`], editing?.id === n.id ? editing.form : editButton(n))));
    if (f.total > f.nodes.length) nodesList.append(h('li', { className: 'muted' }, `Live figures are shown for the first ${f.nodes.length} of ${f.total} nodes.`));
  }

  function editButton(n: NodeInfo): HTMLButtonElement {
    return h('button', { type: 'button', className: 'btn node-edit', 'aria-label': `Edit ${n.name}`, onclick: () => openForm(n) }, 'Edit');
  }

  function openForm(n: NodeInfo): void {
    msg.clear();
    editing = { id: n.id, form: nodeForm(n, { saved: (s) => void saved(s), cancel: () => closeForm(n.id) }) };
    if (shown) render(shown);
    editing.form.querySelector('input')?.focus();
  }

  /** Closes the form unsaved; focus goes back to the card's Edit button. */
  function closeForm(id: string): void {
    editing = null;
    if (shown) render(shown);
    nodesList.querySelector<HTMLElement>(`li[data-id="${CSS.escape(id)}"] .node-edit`)?.focus();
  }

  async function saved(n: NodeInfo): Promise<void> {
    editing = null;
    if (!(await load())) return;
    msg.info(`Saved the node ${n.name}.`);
    announce('Saved');
  }

  /** Loads and shows the figures; false when they could not be loaded (the message box says why). */
  async function load(): Promise<boolean> {
    if (timer) clearTimeout(timer);
    timer = null;
    refreshBtn.disabled = true;
    try {
      const figures = await fetchFigures();
      if (disposed) return false;
      msg.clear();
      render(figures);
      updated.textContent = `Updated ${new Date().toLocaleTimeString()}. Refreshes every ${REFRESH_MS / 1000} seconds, except while a node's form is open.`;
      return true;
    } catch (err) {
      if (!disposed) msg.error(`Could not load the figures: ${describe(err)}`);
      return false;
    } finally {
      refreshBtn.disabled = false;
      if (!disposed) timer = setTimeout(tick, REFRESH_MS);
    }
  }

  /** The timer's refresh: none while a form is open (it would take the focus from the form), half as often while the page is hidden. */
  function tick(): void {
    if (editing) timer = setTimeout(tick, REFRESH_MS);
    else if (document.hidden) timer = setTimeout(tick, REFRESH_MS);
    else void load();
  }

  void load();
  return () => {
    disposed = true;
    if (timer) clearTimeout(timer);
  };
};
