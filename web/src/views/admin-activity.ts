/** The whole activity log, for administrators: filter by area. */
import { describe, gql } from '../api';
import { link, type View } from '../app';
import { clear, field, h, messageBox } from '../dom';
import { Q_ADMIN_ACTIVITY, type ActivityEntry } from '../queries';
import { activityRow, activityTable, areaSelect } from './activity-table';

export const adminActivityView: View = (main) => {
  const msg = messageBox();
  let disposed = false;
  let prefix = '';
  const table = activityTable('Activity of the whole platform, newest first');
  const count = h('p', { className: 'muted', role: 'status' });
  const refresh = h('button', { type: 'button', className: 'btn', onclick: () => void load() }, 'Refresh');
  const area = field('Show', areaSelect((value) => ((prefix = value), void load())));
  main.append(
    h('p', { className: 'crumbs' }, link('/admin', '← Administration')),
    h('div', { className: 'page-head' }, h('h1', null, 'Activity'), refresh),
    msg.el,
    h('section', { className: 'card' }, h('div', { className: 'toolbar' }, area.wrap), count, h('div', { className: 'table-scroll' }, table.el)),
  );

  async function load(): Promise<void> {
    try {
      const d = await gql<{ adminActivity: { total: number; items: ActivityEntry[] } }>(Q_ADMIN_ACTIVITY, { filter: prefix ? { event: prefix } : null });
      if (disposed) return;
      clear(table.body);
      table.body.append(...d.adminActivity.items.map(activityRow));
      count.textContent = `${d.adminActivity.total} entries; the latest 50 are shown.`;
    } catch (err) {
      if (!disposed) msg.error(`Could not load the activity: ${describe(err)}`);
    }
  }
  void load();
  return () => {
    disposed = true;
  };
};
