/**
 * Administration → Blueprints: every blueprint (all pages), an egg import, a small create form, and
 * delete for the ones that are not built in. Built-in blueprints belong to the panel: view only.
 */
import { describe, gql } from '../api';
import { link, navigate, type View } from '../app';
import { announce, clear, field, h, messageBox } from '../dom';
import { M_CREATE_BLUEPRINT, M_DELETE_BLUEPRINT, Q_BLUEPRINT_PAGE } from '../queries';
import { importSection } from './admin-blueprint-import';
import { showRefusal } from './field-errors';

export interface BlueprintRow {
  id: string;
  key: string;
  name: string;
  builtin: boolean;
  variables: { key: string }[];
}

/** Every blueprint: pages of 100 until the total is reached. */
async function fetchAll(): Promise<BlueprintRow[]> {
  const all: BlueprintRow[] = [];
  for (let page = 1; ; page++) {
    const d = await gql<{ blueprints: { total: number; items: BlueprintRow[] } }>(Q_BLUEPRINT_PAGE, { page });
    all.push(...d.blueprints.items);
    if (!d.blueprints.items.length || all.length >= d.blueprints.total) return all;
  }
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function row(b: BlueprintRow, remove: (b: BlueprintRow) => void): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-key': b.key },
    h('td', null, link(`/admin/blueprints/${b.id}`, b.name), b.builtin ? h('span', { className: 'badge', title: 'Belongs to the panel: read-only' }, 'Built-in') : null),
    h('td', null, h('code', null, b.key)),
    h('td', null, plural(b.variables.length, 'variable')),
    h(
      'td',
      null,
      h(
        'div',
        { className: 'row-actions' },
        b.builtin
          ? h('span', { className: 'muted' }, 'Read-only')
          : [link(`/admin/blueprints/${b.id}`, 'Edit', { className: 'btn', 'aria-label': `Edit ${b.name}` }), h('button', { type: 'button', className: 'btn btn-danger', 'aria-label': `Delete ${b.name}`, onclick: () => remove(b) }, 'Delete')],
      ),
    ),
  );
}

/** Key, name, startup, stop and ready: enough for a runnable blueprint; the rest is set on its page. */
function createForm(msg: ReturnType<typeof messageBox>): HTMLFormElement {
  const fields = {
    key: field('Key', h('input', { type: 'text', id: 'new-key', autocomplete: 'off', required: true }), 'Lower-case letters, digits and dashes, e.g. my-game. It cannot be taken by another blueprint.'),
    name: field('Name', h('input', { type: 'text', id: 'new-name', autocomplete: 'off', required: true })),
    startup: field('Startup command', h('input', { type: 'text', id: 'new-startup', autocomplete: 'off', required: true }), 'Program and arguments with {{VARIABLES}}, e.g. ./game --port {{PORT}}. It runs without a shell.'),
    stop: field('Stop command', h('input', { type: 'text', id: 'new-stop', autocomplete: 'off', required: true, value: 'SIGTERM' }), 'A line written to the console (e.g. stop) or a signal: SIGTERM, SIGINT, ^C, ^D.'),
    ready: field('Ready pattern (optional)', h('input', { type: 'text', id: 'new-ready', autocomplete: 'off' }), 'A regular expression of the line that says the server is ready. Empty: running as soon as it starts.'),
  };
  const submit = h('button', { type: 'submit', className: 'btn btn-primary' }, 'Create blueprint');
  const form = h(
    'form',
    { className: 'card form', novalidate: true, 'aria-labelledby': 'create-blueprint-title' },
    h('h2', { id: 'create-blueprint-title' }, 'Create a blueprint'),
    Object.values(fields).map((f) => f.wrap),
    h('div', { className: 'actions' }, submit),
  );
  const value = (k: keyof typeof fields) => (fields[k].control as HTMLInputElement).value;
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    msg.clear();
    Object.values(fields).forEach((f) => f.setError(null));
    submit.disabled = true;
    try {
      const input = { key: value('key').trim(), name: value('name'), startup: value('startup'), stop: value('stop'), ready: value('ready') === '' ? null : value('ready') };
      const d = await gql<{ createBlueprint: { id: string } }>(M_CREATE_BLUEPRINT, { input });
      navigate(`/admin/blueprints/${d.createBlueprint.id}?created=1`);
    } catch (err) {
      showRefusal(err, (name) => (Object.hasOwn(fields, name) ? fields[name as keyof typeof fields] : null), msg, 'Could not create the blueprint');
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

export const adminBlueprintsView: View = (main) => {
  const msg = messageBox();
  const body = h('tbody', null);
  const count = h('p', { className: 'muted', role: 'status' }, 'Loading…');
  const table = h(
    'table',
    { className: 'activity blueprints', 'aria-labelledby': 'blueprints-title' },
    h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Key'), h('th', { scope: 'col' }, 'Variables'), h('th', { scope: 'col' }, h('span', { className: 'visually-hidden' }, 'Actions')))),
    body,
  );
  let disposed = false;

  async function load(): Promise<void> {
    try {
      const all = await fetchAll();
      if (disposed) return;
      clear(body);
      for (const b of all) body.append(row(b, (x) => void remove(x)));
      count.textContent = `${plural(all.length, 'blueprint')}, ${all.filter((b) => b.builtin).length} built in.`;
    } catch (err) {
      if (!disposed) msg.error(`Could not load the blueprints: ${describe(err)}`);
    }
  }

  async function remove(b: BlueprintRow): Promise<void> {
    if (!confirm(`Delete the blueprint ${b.name}? Servers can no longer be created from it.`)) return;
    msg.clear();
    try {
      await gql(M_DELETE_BLUEPRINT, { id: b.id });
      msg.info(`Deleted ${b.name}.`);
      announce(`Blueprint ${b.name} deleted`);
      await load();
    } catch (err) {
      msg.error(`Could not delete ${b.name}: ${describe(err)}`);
    }
  }

  main.append(
    h('p', { className: 'crumbs' }, link('/admin', '← Administration')),
    h('h1', null, 'Blueprints'),
    h('p', { className: 'lead' }, 'Templates of servers: how to install, start, see ready and stop them. Built-in blueprints belong to the panel, so they are read-only: import an egg or create a blueprint to change one.'),
    msg.el,
    h('section', { className: 'card', 'aria-labelledby': 'blueprints-title' }, h('h2', { id: 'blueprints-title' }, 'All blueprints'), count, table),
    importSection(msg, () => void load()),
    createForm(msg),
  );
  void load();
  return () => {
    disposed = true;
  };
};
