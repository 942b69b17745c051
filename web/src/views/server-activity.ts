/** A server's activity log (activity.read): filter by area; new entries appear live. */
import { describe, gql, subscribe } from '../api';
import { link, type View } from '../app';
import { clear, field, h, messageBox } from '../dom';
import { Q_SERVER_ACTIVITY, S_SERVER_ACTIVITY, type ActivityEntry } from '../queries';
import { activityRow, activityTable, areaSelect } from './activity-table';
import { LiveMerge } from './live-merge';
import { can, openServerSection } from './server-tabs';

export const serverActivityView: View = (main, params) => {
  const serverId = params.id!;
  const msg = messageBox();
  const title = h('h1', null, 'Activity');
  main.append(h('p', { className: 'crumbs' }, link('/', '← Servers')), title, msg.el);
  let disposed = false;
  let stop: (() => void) | null = null;
  let prefix = '';
  const table = activityTable('Activity of this server, newest first');
  const count = h('p', { className: 'muted', role: 'status' });
  const live = new LiveMerge<ActivityEntry>();
  let shown = new Set<string>();

  function show(e: ActivityEntry): void {
    if (shown.has(e.id) || (prefix && !e.event.startsWith(prefix))) return;
    shown.add(e.id);
    table.body.prepend(activityRow(e));
  }

  async function load(): Promise<void> {
    live.begin();
    try {
      const d = await gql<{ serverActivity: { total: number; items: ActivityEntry[] } }>(Q_SERVER_ACTIVITY, { serverId, filter: prefix ? { event: prefix } : null });
      if (disposed) return;
      const { items, newer } = live.merge(d.serverActivity.items);
      clear(table.body);
      shown = new Set(items.map((e) => e.id));
      table.body.append(...items.map(activityRow));
      newer.forEach(show);
      count.textContent = d.serverActivity.total ? `${d.serverActivity.total} entries; the latest 50 are shown.` : 'Nothing recorded yet.';
    } catch (err) {
      if (!disposed) msg.error(`Could not load the activity: ${describe(err)}`);
    }
  }

  void (async () => {
    const server = await openServerSection(serverId, 'activity', 'Activity', title, msg, () => disposed);
    if (!server || disposed) return;
    // an address kept from before the key was taken away: say so, with no empty table under a
    // "Live updates stopped" that hid that nothing could be loaded
    if (!can(server.permissions, 'activity.read')) {
      msg.error('Could not load the activity: You need the "activity.read" permission on this server; ask its owner.');
      return;
    }
    const area = field('Show', areaSelect((value) => ((prefix = value), void load())));
    main.append(h('section', { className: 'card' }, h('div', { className: 'toolbar' }, area.wrap), count, h('div', { className: 'table-scroll' }, table.el)));
    // subscribed first, then loaded, and loaded again whenever the connection comes up: an entry
    // recorded while the list loads comes live, one recorded while the connection was down (or still
    // coming up) comes with the next load
    stop = subscribe<{ serverActivity: ActivityEntry }>(
      S_SERVER_ACTIVITY,
      { serverId },
      (d) => {
        live.add(d.serverActivity);
        show(d.serverActivity);
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
