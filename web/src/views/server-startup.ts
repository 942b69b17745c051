/**
 * A server's startup (startup.read): the command with the server's values in place, and the
 * variables its blueprint shows to users. Holders of startup.update change the editable ones and
 * save; the panel's refusal of a value is shown next to its field.
 */
import { ApiError, describe, gql } from '../api';
import { link, type View } from '../app';
import { announce, clear, field, h, messageBox } from '../dom';
import { M_UPDATE_STARTUP, Q_STARTUP, type ServerStartup, type StartupVariable } from '../queries';
import { can, openServerSection } from './server-tabs';

type Field = ReturnType<typeof field>;

/** The hint under a variable: what it is, its rules, and whether it can be changed here. */
function hintOf(v: StartupVariable, editable: boolean): string {
  const parts = [v.description, v.rules ? `Rules: ${v.rules}` : '', `Default: ${v.default === '' ? '(empty)' : v.default}`];
  if (!editable) parts.push(v.userEditable ? 'You may not change it on this server.' : 'Read-only: an administrator changes it.');
  return parts.filter(Boolean).join(' · ');
}

export const serverStartupView: View = (main, params) => {
  const serverId = params.id!;
  const msg = messageBox();
  const title = h('h1', null, 'Startup');
  main.append(h('p', { className: 'crumbs' }, link('/', '← Servers')), title, msg.el);
  const command = h('code', { id: 'startup-command' });
  const form = h('form', { className: 'card form', novalidate: true, 'aria-label': 'Startup variables' });
  const fields = new Map<string, { f: Field; v: StartupVariable; editable: boolean }>();
  let mayUpdate = false;
  let disposed = false;

  function show(s: ServerStartup): void {
    command.textContent = s.startup;
    clear(form);
    fields.clear();
    for (const v of s.variables) {
      const editable = mayUpdate && v.userEditable;
      const input = h('input', { type: 'text', name: v.key, value: v.value, autocomplete: 'off', readonly: !editable, 'data-variable': v.key });
      const f = field(`${v.name} (${v.key})`, input, hintOf(v, editable));
      fields.set(v.key, { f, v, editable });
      form.append(f.wrap);
    }
    if (!s.variables.length) form.append(h('p', { className: 'muted' }, "This server's blueprint shows no variables to its users."));
    if ([...fields.values()].some((x) => x.editable)) form.append(h('div', { className: 'actions' }, h('button', { type: 'submit', className: 'btn btn-primary' }, 'Save')));
  }

  /** The editable values that differ from what the panel has. */
  function changes(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [key, { f, v, editable }] of fields) {
      const value = (f.control as HTMLInputElement).value;
      if (editable && value !== v.value) out[key] = value;
    }
    return out;
  }

  function showRefusal(err: unknown): void {
    if (!(err instanceof ApiError && err.code === 'VALIDATION_ERROR')) return msg.error(`Could not save: ${describe(err)}`);
    let first: HTMLElement | null = null;
    for (const [k, m] of Object.entries(err.fields)) {
      const target = fields.get(k.replace(/^variables\./, ''))?.f;
      if (!target) continue;
      target.setError(String(m));
      first ??= target.control;
    }
    msg.error(first ? 'Some values were refused: correct the highlighted fields and save again.' : describe(err));
    first?.focus();
  }

  async function save(): Promise<void> {
    msg.clear();
    for (const { f } of fields.values()) f.setError(null);
    const variables = changes();
    if (!Object.keys(variables).length) return msg.info('Nothing to save: no value was changed.');
    try {
      const d = await gql<{ updateServerStartup: ServerStartup }>(M_UPDATE_STARTUP, { serverId, variables });
      show(d.updateServerStartup);
      msg.info('Saved. The server uses the new values from its next start.');
      announce('Startup variables saved');
    } catch (err) {
      showRefusal(err);
    }
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void save();
  });

  void (async () => {
    const server = await openServerSection(serverId, 'startup', 'Startup', title, msg, () => disposed);
    if (!server) return;
    mayUpdate = can(server.permissions, 'startup.update');
    main.append(h('section', { className: 'card', 'aria-label': 'Startup command' }, h('h2', null, 'Startup command'), h('pre', { className: 'startup-command' }, command)), form);
    try {
      const d = await gql<{ serverStartup: ServerStartup }>(Q_STARTUP, { serverId });
      if (!disposed) show(d.serverStartup);
    } catch (err) {
      msg.error(`Could not load the startup variables: ${describe(err)}`);
    }
  })();

  return () => {
    disposed = true;
  };
};
