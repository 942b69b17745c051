/**
 * Administration → one blueprint: its fields, defaults, variables and file denylist. A blueprint of
 * an administrator is edited and saved here (refusals next to their fields); a built-in one is shown
 * read-only, since it belongs to the panel.
 */
import { describe, gql } from '../api';
import { link, type View } from '../app';
import { announce, field, h, messageBox } from '../dom';
import { M_UPDATE_BLUEPRINT, Q_BLUEPRINT, type BlueprintDetail } from '../queries';
import { variablesTable } from './admin-blueprint-variables';
import { showRefusal, type ErrorTarget } from './field-errors';

type Field = ReturnType<typeof field>;
const SHELLS: [value: string, label: string][] = [
  ['', '/bin/sh (default)'],
  ['sh', 'sh'],
  ['bash', 'bash'],
  ['ash', 'ash'],
];

/** The configuration files' JSON as a list (the panel checks each entry), or what is wrong with it. */
function parseConfigFiles(text: string): { list: unknown[] } | { problem: string } {
  if (text.trim() === '') return { list: [] };
  try {
    const list: unknown = JSON.parse(text);
    return Array.isArray(list) ? { list } : { problem: 'Must be a JSON list: [ { "file": …, "parser": …, "find": { … } } ] (or [] for none).' };
  } catch (err) {
    return { problem: `This is not valid JSON (${(err as Error).message}).` };
  }
}
type TextField = 'name' | 'description' | 'startup' | 'stop' | 'ready';
const DEFAULTS = ['memory', 'cpu', 'disk'] as const;

const input = (id: string, value: string, readOnly: boolean, attrs: Record<string, unknown> = {}) => h('input', { type: 'text', id, value, autocomplete: 'off', spellcheck: 'false', readonly: readOnly, ...attrs });

/** The form of one blueprint; `onSaved` gets the blueprint as the panel saved it. */
function blueprintForm(b: BlueprintDetail, msg: ReturnType<typeof messageBox>, onSaved: (b: BlueprintDetail) => void): HTMLFormElement {
  const ro = b.builtin;
  const text: Record<TextField, Field> = {
    name: field('Name', input('bp-name', b.name, ro)),
    description: field('Description', h('textarea', { id: 'bp-description', rows: '2', readonly: ro }, b.description)),
    startup: field('Startup command', input('bp-startup', b.startup, ro), 'Program and arguments with {{VARIABLES}}; it runs without a shell.'),
    stop: field('Stop command', input('bp-stop', b.stop, ro), 'A line written to the console (e.g. stop) or a signal: SIGTERM, SIGINT, ^C, ^D.'),
    ready: field('Ready pattern', input('bp-ready', b.ready ?? '', ro), 'A regular expression of the line that says the server is ready. Empty: running as soon as it starts.'),
  };
  const defaults: Record<(typeof DEFAULTS)[number], Field> = {
    memory: field('Memory (MiB)', input('bp-memory', String(b.defaults.memory), ro, { type: 'number', min: '64', inputmode: 'numeric' })),
    cpu: field('CPU (% of one core)', input('bp-cpu', String(b.defaults.cpu), ro, { type: 'number', min: '1', inputmode: 'numeric' })),
    disk: field('Disk (MiB)', input('bp-disk', String(b.defaults.disk), ro, { type: 'number', min: '128', inputmode: 'numeric' })),
  };
  const denylist = field('File denylist', h('textarea', { id: 'bp-denylist', rows: '4', spellcheck: 'false', readonly: ro }, b.fileDenylist.join('\n')), "One pattern per line (gitignore style, e.g. server.jar or config/): files the server's users may not touch.");
  const install = field('Install script', h('textarea', { id: 'bp-install', rows: '6', spellcheck: 'false', readonly: ro }, b.install ?? ''), 'Runs once in the server\'s folder when a server is created or reinstalled, as the server\'s own user. Empty: none.');
  const shell = field(
    'Install script shell',
    h('select', { id: 'bp-install-shell', disabled: ro }, ...SHELLS.map(([v, label]) => h('option', { value: v, selected: (b.installShell ?? '') === v }, label))),
  );
  const configFiles = field(
    'Configuration files (JSON)',
    h('textarea', { id: 'bp-config-files', rows: '6', spellcheck: 'false', readonly: ro }, b.configFiles.length ? JSON.stringify(b.configFiles, null, 2) : '[]'),
    'Keys written into the server\'s files at each start: [{ "file": "server.properties", "parser": "properties", "find": { "server-port": "{{server.build.default.port}}" } }]. Parsers: properties, file, ini, json, yaml, xml.',
  );
  const vars = variablesTable(b.variables, ro);
  const form = h(
    'form',
    { className: 'card form', novalidate: true, 'aria-label': `Blueprint ${b.name}` },
    Object.values(text).map((f) => f.wrap),
    h('fieldset', null, h('legend', null, 'Defaults of new servers'), h('div', { className: 'grid3' }, Object.values(defaults).map((f) => f.wrap))),
    vars.el,
    denylist.wrap,
    h('fieldset', null, h('legend', null, 'Install and configuration files'), install.wrap, shell.wrap, configFiles.wrap),
    ro ? null : h('div', { className: 'actions' }, h('button', { type: 'submit', className: 'btn btn-primary' }, 'Save')),
  );
  if (ro) return form;

  const value = (f: Field) => (f.control as HTMLInputElement).value;
  const target = (name: string): ErrorTarget | null => {
    const [head, second, third] = name.split('.');
    if (head === 'variables' && second !== undefined && third !== undefined) return vars.target(Number(second), third);
    if (head === 'defaults' && second !== undefined) return defaults[second as keyof typeof defaults] ?? null;
    if (head === 'fileDenylist') return denylist;
    if (head === 'configFiles') return configFiles;
    if (head === 'install') return install;
    if (head === 'installShell') return shell;
    return Object.hasOwn(text, name) ? text[name as keyof typeof text] : null;
  };

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    msg.clear();
    [...Object.values(text), ...Object.values(defaults), denylist, install, shell, configFiles].forEach((f) => f.setError(null));
    vars.clearErrors();
    const files = parseConfigFiles(value(configFiles));
    if ('problem' in files) {
      configFiles.setError(files.problem);
      configFiles.control.focus();
      msg.error('Could not save: correct the highlighted fields and try again.');
      return;
    }
    const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
    submit.disabled = true;
    try {
      const patch = {
        name: value(text.name),
        description: value(text.description),
        startup: value(text.startup),
        stop: value(text.stop),
        ready: value(text.ready) === '' ? null : value(text.ready),
        defaults: Object.fromEntries(DEFAULTS.map((k) => [k, Number(value(defaults[k]))])),
        variables: vars.value(),
        fileDenylist: value(denylist)
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean),
        install: value(install).trim() === '' ? null : value(install),
        installShell: value(shell) === '' ? null : value(shell),
        configFiles: files.list,
      };
      const d = await gql<{ updateBlueprint: BlueprintDetail }>(M_UPDATE_BLUEPRINT, { id: b.id, input: patch });
      onSaved(d.updateBlueprint);
    } catch (err) {
      showRefusal(err, target, msg, 'Could not save');
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

export const adminBlueprintView: View = (main, params) => {
  const msg = messageBox();
  const title = h('h1', null, 'Blueprint');
  const lead = h('p', { className: 'lead' });
  main.append(h('p', { className: 'crumbs' }, link('/admin/blueprints', '← Blueprints')), title, lead, msg.el);
  let disposed = false;
  let form: HTMLFormElement | null = null;

  function show(b: BlueprintDetail): void {
    title.textContent = b.name;
    document.title = `${b.name} · Blueprints · HostPanel`;
    lead.textContent = b.builtin
      ? `Built-in blueprint (${b.key}): it belongs to the panel, so it cannot be changed or deleted here. To run something else, import an egg or create a blueprint.`
      : `Key ${b.key}. Changes apply to servers from their next start; a server's own variable values stay as they are.`;
    const next = blueprintForm(b, msg, (saved) => {
      show(saved);
      msg.info('Saved. Servers use the new values from their next start.');
      announce('Blueprint saved');
    });
    if (form) form.replaceWith(next);
    else main.append(next);
    form = next;
  }

  void (async () => {
    try {
      const d = await gql<{ blueprint: BlueprintDetail }>(Q_BLUEPRINT, { id: params.id });
      if (disposed) return;
      show(d.blueprint);
      if (new URLSearchParams(location.search).has('created')) msg.info('Blueprint created. Add its variables and resource defaults here, then save.');
    } catch (err) {
      if (!disposed) msg.error(`Could not load the blueprint: ${describe(err)} Go back to the list of blueprints.`);
    }
  })();

  return () => {
    disposed = true;
  };
};
