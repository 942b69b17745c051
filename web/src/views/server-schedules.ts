/**
 * A server's schedules (schedule.read): each with its cron expression, time zone and the next five
 * runs in that zone (computed here with croner, as the panel does), its tasks, run-now, and its run
 * history; a form to make or change one (schedule.create / schedule.update), with a task editor.
 * Actions the viewer's keys do not allow are not shown.
 */
import { Cron } from 'croner';
import { describe, gql } from '../api';
import { link, type View } from '../app';
import { announce, clear, field, h, id, messageBox } from '../dom';
import { showRefusal } from './field-errors';
import { can, openServerSection } from './server-tabs';

interface Task {
  sequence?: number;
  action: 'command' | 'power' | 'backup';
  payload: Record<string, unknown>;
  offsetSeconds: number;
  continueOnFailure: boolean;
}
interface Schedule {
  id: string;
  name: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  onlyWhenOnline: boolean;
  tasks: Task[];
  lastRunAt: string | null;
  nextRunAt: string | null;
}
interface Run {
  id: string;
  trigger: string;
  status: string;
  startedAt: string;
  finishedAt: string | null;
  tasks: { sequence: number; status: string; error: string | null }[];
}

const FIELDS = 'id name cron timezone enabled onlyWhenOnline lastRunAt nextRunAt tasks { sequence action payload offsetSeconds continueOnFailure }';
const Q_SCHEDULES = `query($serverId: ID!) { schedules(serverId: $serverId, limit: 100) { items { ${FIELDS} } } }`;
const Q_RUNS = `query($serverId: ID!, $scheduleId: ID!) { scheduleRuns(serverId: $serverId, scheduleId: $scheduleId, limit: 10) { items { id trigger status startedAt finishedAt tasks { sequence status error } } } }`;
const M_CREATE = `mutation($serverId: ID!, $input: CreateScheduleInput!) { createSchedule(serverId: $serverId, input: $input) { ${FIELDS} } }`;
const M_UPDATE = `mutation($serverId: ID!, $scheduleId: ID!, $input: UpdateScheduleInput!) { updateSchedule(serverId: $serverId, scheduleId: $scheduleId, input: $input) { ${FIELDS} } }`;
const M_DELETE = `mutation($serverId: ID!, $scheduleId: ID!) { deleteSchedule(serverId: $serverId, scheduleId: $scheduleId) }`;
const M_RUN = `mutation($serverId: ID!, $scheduleId: ID!) { runSchedule(serverId: $serverId, scheduleId: $scheduleId) { id status } }`;
/** How often the history of a schedule is loaded again while one of its runs shown is running. */
const RUNS_POLL_MS = 1500;

/** The next `n` runs of `cron` in `timezone`, as that zone's wall-clock times; or why there are none. */
export function preview(cron: string, timezone: string, n = 5): string[] | string {
  try {
    if (cron.trim().split(/\s+/).length !== 5) return 'A cron expression has five fields: minute hour day-of-month month day-of-week.';
    const job = new Cron(cron, { paused: true, timezone, mode: '5-part', fixedTimeRule: 'no-wildcard' } as ConstructorParameters<typeof Cron>[1]);
    const fmt = new Intl.DateTimeFormat('en-GB', { timeZone: timezone, dateStyle: 'full', timeStyle: 'short' });
    return job.nextRuns(n).map((d) => fmt.format(d));
  } catch (err) {
    return `Not a valid schedule: ${(err as Error).message}`;
  }
}

const describeTask = (t: Task): string =>
  t.action === 'command' ? `Send “${String(t.payload.command ?? '')}”` : t.action === 'power' ? `Power: ${String(t.payload.action ?? '')}` : 'Make a backup';

function taskRow(t: Task, onRemove: (row: HTMLElement) => void): HTMLElement {
  const action = h('select', { name: 'action', 'aria-label': 'Task action' }, ['command', 'power', 'backup'].map((a) => h('option', { value: a, selected: a === t.action }, a)));
  const payload = h('input', { name: 'payload', 'aria-label': 'Command or power action', value: String(t.payload.command ?? t.payload.action ?? ''), placeholder: 'say Restarting in 5 minutes' });
  const offset = h('input', { name: 'offset', type: 'number', min: '0', max: '900', value: String(t.offsetSeconds), 'aria-label': 'Seconds after the previous task' });
  const cont = h('input', { name: 'continue', type: 'checkbox', checked: t.continueOnFailure, 'aria-label': 'Go on if it fails' });
  const remove = h('button', { type: 'button', className: 'btn btn-quiet' }, 'Remove');
  const row = h('li', { className: 'task' }, action, payload, offset, h('label', null, cont, ' go on if it fails'), remove);
  remove.addEventListener('click', () => onRemove(row));
  return row;
}

/** The field of `fields` a refusal's key (`cron`, `input.cron`) names, or null. */
function fieldOf<T extends object>(fields: T, key: string): T[keyof T] | null {
  const k = key.replace(/^input\./, '');
  return Object.hasOwn(fields, k) ? fields[k as keyof T] : null;
}

function readTasks(list: HTMLElement): Task[] {
  return [...list.querySelectorAll<HTMLElement>('li.task')].map((row) => {
    const action = row.querySelector<HTMLSelectElement>('[name=action]')!.value as Task['action'];
    const value = row.querySelector<HTMLInputElement>('[name=payload]')!.value.trim();
    const payload = action === 'command' ? { command: value } : action === 'power' ? { action: value } : {};
    return { action, payload, offsetSeconds: Number(row.querySelector<HTMLInputElement>('[name=offset]')!.value || 0), continueOnFailure: row.querySelector<HTMLInputElement>('[name=continue]')!.checked };
  });
}

export const serverSchedulesView: View = (main, params) => {
  const serverId = params.id!;
  const msg = messageBox();
  const title = h('h1', null, 'Schedules');
  main.append(h('p', { className: 'crumbs' }, link('/', '← Servers')), title, msg.el);
  const list = h('div', { className: 'schedules' });
  let permissions: readonly string[] = [];
  let disposed = false;
  /** the timers loading run histories again (cleared when the view is left) */
  const timers = new Set<ReturnType<typeof setTimeout>>();

  async function load(): Promise<void> {
    try {
      const d = await gql<{ schedules: { items: Schedule[] } }>(Q_SCHEDULES, { serverId });
      if (disposed) return;
      clear(list);
      if (!d.schedules.items.length) list.append(h('p', { className: 'muted' }, 'No schedules yet.'));
      for (const s of d.schedules.items) list.append(card(s));
    } catch (err) {
      msg.error(`Could not load the schedules: ${describe(err)}`);
    }
  }

  function card(s: Schedule): HTMLElement {
    const runs = h('ol', { className: 'runs', 'aria-label': `Runs of ${s.name}` });
    const next = preview(s.cron, s.timezone);
    const el = h(
      'section',
      { className: 'card schedule', 'aria-label': `Schedule ${s.name}`, 'data-schedule': s.id },
      h('h2', null, s.name, s.enabled ? '' : h('span', { className: 'muted' }, ' (disabled)')),
      h('p', null, h('code', null, s.cron), ` in ${s.timezone}`, s.onlyWhenOnline ? ' · only while the server runs' : ''),
      h('ol', { className: 'tasks' }, s.tasks.map((t) => h('li', null, describeTask(t), t.offsetSeconds ? ` (after ${t.offsetSeconds} s)` : ''))),
      h('p', null, 'Next runs:'),
      typeof next === 'string' ? h('p', { className: 'error' }, next) : h('ul', { className: 'next-runs' }, next.map((d) => h('li', null, d))),
      h('h3', null, 'History'),
      runs,
    );
    const actions = h('div', { className: 'toolbar' });
    const button = (text: string, onClick: () => void) => {
      const b = h('button', { type: 'button', className: 'btn btn-quiet', 'aria-label': `${text} ${s.name}` }, text);
      b.addEventListener('click', onClick);
      actions.append(b);
    };
    if (can(permissions, 'schedule.update')) {
      // the history is loaded now and again while the run is running (see loadRuns), until it ends
      button('Run now', () => void gql(M_RUN, { serverId, scheduleId: s.id }).then(() => (announce(`${s.name} started`), void loadRuns()), (err) => msg.error(`Could not run it: ${describe(err)}`)));
      button('Edit', () => {
        // Cancel puts this card back as it was (its history loaded again), nothing saved
        const editor = form(s, () => {
          editor.replaceWith(el);
          void loadRuns();
          el.querySelector<HTMLButtonElement>(`button[aria-label="${CSS.escape(`Edit ${s.name}`)}"]`)?.focus();
        });
        el.replaceWith(editor);
        editor.querySelector<HTMLInputElement>('input[name=name]')?.focus();
      });
    }
    if (can(permissions, 'schedule.delete'))
      button('Delete', () => {
        if (!confirm(`Delete the schedule "${s.name}"?`)) return;
        void gql(M_DELETE, { serverId, scheduleId: s.id }).then(() => el.remove(), (err) => msg.error(`Could not delete it: ${describe(err)}`));
      });
    el.append(actions);
    /** whether a run shown is running; the pending reload of the history */
    let running = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    /**
     * Loads the history; while a run shown is running, loads it again every RUNS_POLL_MS (there is no
     * subscription of runs), until none is, the card is replaced (edited, or the list loaded again) or
     * the view is left.
     */
    const loadRuns = async (): Promise<void> => {
      const d = await gql<{ scheduleRuns: { items: Run[] } }>(Q_RUNS, { serverId, scheduleId: s.id }).catch(() => null);
      if (disposed) return;
      if (d) {
        running = d.scheduleRuns.items.some((r) => r.status === 'running');
        showRuns(d.scheduleRuns.items);
      }
      if (timer !== undefined) {
        clearTimeout(timer);
        timers.delete(timer);
        timer = undefined;
      }
      if (!running || !el.isConnected) return;
      const t = setTimeout(() => {
        timers.delete(t);
        if (timer === t) timer = undefined;
        void loadRuns();
      }, RUNS_POLL_MS);
      timer = t;
      timers.add(t);
    };
    const showRuns = (items: Run[]) => {
      clear(runs);
      if (!items.length) runs.append(h('li', { className: 'muted' }, 'Not run yet.'));
      for (const r of items)
        runs.append(
          h('li', { 'data-status': r.status }, `${new Date(r.startedAt).toLocaleString()} · ${r.trigger} · ${r.status}`, r.tasks.some((t) => t.error) ? h('span', { className: 'muted' }, ` (${r.tasks.filter((t) => t.error).map((t) => `#${t.sequence}: ${t.error}`).join('; ')})`) : ''),
        );
    };
    void loadRuns();
    return el;
  }

  /** The New schedule form, or the Edit form of `s` (with a Cancel calling `cancel`). */
  function form(s?: Schedule, cancel?: () => void): HTMLElement {
    // each form has ids of its own (an Edit form shown with the New schedule form: each label points at its own field)
    const ids = s ? (f: string) => id(`schedule-${f}`) : (f: string) => `schedule-${f}`;
    const name = h('input', { id: ids('name'), name: 'name', required: true, maxLength: 100, value: s?.name ?? '' });
    const cron = h('input', { id: ids('cron'), name: 'cron', required: true, value: s?.cron ?? '0 4 * * *' });
    const timezone = h('input', { id: ids('timezone'), name: 'timezone', value: s?.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC' });
    const enabled = h('input', { type: 'checkbox', checked: s?.enabled ?? true });
    const online = h('input', { type: 'checkbox', checked: s?.onlyWhenOnline ?? false });
    const next = h('ul', { className: 'next-runs', 'aria-label': 'Next five runs', 'aria-live': 'polite' });
    const showNext = () => {
      const r = preview(cron.value, timezone.value.trim() || 'UTC');
      next.replaceChildren(...(typeof r === 'string' ? [h('li', { className: 'error' }, r)] : r.map((d) => h('li', null, d))));
    };
    cron.addEventListener('input', showNext);
    timezone.addEventListener('input', showNext);
    showNext();
    const tasks = h('ol', { className: 'task-editor', 'aria-label': 'Tasks' });
    const addTask = (t: Task) => tasks.append(taskRow(t, (row) => row.remove()));
    for (const t of s?.tasks ?? [{ action: 'command', payload: { command: '' }, offsetSeconds: 0, continueOnFailure: false } as Task]) addTask(t);
    const add = h('button', { type: 'button', className: 'btn btn-quiet' }, 'Add a task');
    add.addEventListener('click', () => addTask({ action: 'command', payload: {}, offsetSeconds: 0, continueOnFailure: false }));
    const cancelButton = cancel
      ? h('button', { type: 'button', className: 'btn btn-quiet' }, 'Cancel')
      : null;
    cancelButton?.addEventListener('click', () => {
      // its refusal goes with it
      msg.clear();
      cancel!();
    });
    const fields = { name: field('Name', name), cron: field('Cron (minute hour day month weekday)', cron), timezone: field('Time zone', timezone) };
    const el = h(
      'form',
      { className: 'card schedule-form', 'aria-label': s ? `Edit ${s.name}` : 'New schedule' },
      h('h2', null, s ? `Edit ${s.name}` : 'New schedule'),
      fields.name.wrap,
      fields.cron.wrap,
      fields.timezone.wrap,
      h('label', null, enabled, ' Enabled'),
      h('label', null, online, ' Only while the server runs'),
      h('p', null, 'Next five runs:'),
      next,
      h('h3', null, 'Tasks, in order'),
      tasks,
      add,
      h('div', { className: 'toolbar' }, h('button', { type: 'submit', className: 'btn' }, s ? 'Save' : 'Create schedule'), cancelButton),
    );
    el.addEventListener('submit', (e) => {
      e.preventDefault();
      for (const f of Object.values(fields)) f.setError(null);
      // the refusal of an earlier try goes with its highlights (it stayed over the created schedule)
      msg.clear();
      const input = { name: name.value.trim(), cron: cron.value.trim(), timezone: timezone.value.trim() || 'UTC', enabled: enabled.checked, onlyWhenOnline: online.checked, tasks: readTasks(tasks) };
      const done = s ? gql(M_UPDATE, { serverId, scheduleId: s.id, input }) : gql(M_CREATE, { serverId, input });
      void done.then(
        () => {
          announce(s ? 'Schedule saved' : 'Schedule created');
          // a fresh form: its fields back at their defaults (reset() would blank those set as properties)
          if (!s) el.replaceWith(form());
          void load();
        },
        (err) => showRefusal(err, (key) => fieldOf(fields, key), msg, 'Could not save the schedule'),
      );
    });
    return el;
  }

  void (async () => {
    const server = await openServerSection(serverId, 'schedules', 'Schedules', title, msg, () => disposed);
    if (!server) return;
    permissions = server.permissions;
    main.append(list);
    if (can(permissions, 'schedule.create')) main.append(form());
    await load();
  })();

  return () => {
    disposed = true;
    for (const t of timers) clearTimeout(t);
    timers.clear();
  };
};
