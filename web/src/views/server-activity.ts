/** A server's activity log (activity.read): filter by area; new entries appear live. */
import { describe, gql, subscribe } from '../api';
import { link, type View } from '../app';
import { clear, field, h, messageBox } from '../dom';
import { Q_SERVER_ACTIVITY, S_SERVER_ACTIVITY, type ActivityEntry } from '../queries';
import { activityRow, activityTable, areaSelect } from './activity-table';
import { openServerSection } from './server-tabs';

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

  async function load(): Promise<void> {
    try {
      const d = await gql<{ serverActivity: { total: number; items: ActivityEntry[] } }>(Q_SERVER_ACTIVITY, { serverId, filter: prefix ? { event: prefix } : null });
      if (disposed) return;
      clear(table.body);
      table.body.append(...d.serverActivity.items.map(activityRow));
      count.textContent = d.serverActivity.total ? `${d.serverActivity.total} entries; the latest 50 are shown.` : 'Nothing recorded yet.';
    } catch (err) {
      if (!disposed) msg.error(`Could not load the activity: ${describe(err)}`);
    }
  }

  void (async () => {
    const server = await openServerSection(serverId, 'activity', 'Activity', title, msg, () => disposed);
    if (!server) return;
    const area = field('Show', areaSelect((value) => ((prefix = value), void load())));
    main.append(h('section', { className: 'card' }, h('div', { className: 'toolbar' }, area.wrap), count, table.el));
    await load();
    stop = subscribe<{ serverActivity: ActivityEntry }>(
      S_SERVER_ACTIVITY,
      { serverId },
      (d) => {
        const e = d.serverActivity;
        if (prefix && !e.event.startsWith(prefix)) return;
        table.body.prepend(activityRow(e));
      },
      (err) => msg.error(`Live updates stopped: ${describe(err)}`),
    );
  })();

  return () => {
    disposed = true;
    stop?.();
  };
};
