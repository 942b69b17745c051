/**
 * A server's subusers (user.read): invite an account by email with permissions ticked by area and
 * optional folders, change or remove them. Only the keys you hold can be ticked.
 */
import { ApiError, describe, gql } from '../api';
import { link, state, type View } from '../app';
import { clear, field, h, messageBox } from '../dom';
import {
  M_CREATE_SUBUSER,
  M_DELETE_SUBUSER,
  M_UPDATE_SUBUSER,
  Q_PERMISSIONS,
  Q_SERVER,
  Q_SUBUSERS,
  type Permission,
  type Server,
  type Subuser,
} from '../queries';
import { showRefusal, type ErrorTarget } from './field-errors';
import { can, serverTabs } from './server-tabs';

const AREA_LABEL: Record<string, string> = {
  websocket: 'Console',
  control: 'Console',
  file: 'Files',
  backup: 'Backups',
  schedule: 'Schedules',
  user: 'Users',
  activity: 'Activity',
  settings: 'Settings',
  startup: 'Startup',
};

/** The keys grouped by area, in catalogue order. */
function byArea(keys: Permission[]): [string, Permission[]][] {
  const groups = new Map<string, Permission[]>();
  for (const k of keys) {
    const area = AREA_LABEL[k.key.split('.')[0]!] ?? 'Other';
    groups.set(area, [...(groups.get(area) ?? []), k]);
  }
  return [...groups];
}

/** Checkboxes of every key, grouped; keys the viewer does not hold are disabled. */
function permissionPicker(catalogue: Permission[], mine: readonly string[], checked: readonly string[], prefix: string) {
  const boxes: HTMLInputElement[] = [];
  const el = h(
    'div',
    { className: 'permission-groups' },
    byArea(catalogue).map(([area, keys]) =>
      h(
        'fieldset',
        { className: 'permission-group' },
        h('legend', null, area),
        keys.map((k) => {
          const box = h('input', { type: 'checkbox', id: `${prefix}-${k.key}`, value: k.key, checked: checked.includes(k.key), disabled: !can(mine, k.key) && !checked.includes(k.key) });
          boxes.push(box);
          return h('div', { className: 'check' }, box, h('label', { for: box.id }, h('code', null, k.key), ' ', h('span', { className: 'muted' }, k.description)));
        }),
      ),
    ),
  );
  return { el, selected: () => boxes.filter((b) => b.checked).map((b) => b.value) };
}

const pathsOf = (text: string) =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);

/** What the sections of the page share. */
interface UsersPage {
  server: Server;
  catalogue: Permission[];
  msg: ReturnType<typeof messageBox>;
  /** lists the subusers again */
  reload(): Promise<void>;
}

function inviteForm(page: UsersPage): HTMLElement {
  const { server, catalogue, msg } = page;
  const email = field('Email of their account', h('input', { type: 'email', id: 'invite-email', required: true, autocomplete: 'off' }), 'They need an account on this panel first.');
  const paths = field('Limit files to these folders (optional)', h('textarea', { id: 'invite-paths', rows: '2' }), 'One folder per line, e.g. /plugins. Empty: the whole server.');
  const picker = permissionPicker(catalogue, server.permissions, ['websocket.connect'], 'invite');
  const submit = h('button', { type: 'submit', className: 'btn btn-primary' }, 'Invite');
  const form = h('form', { className: 'card invite', 'aria-labelledby': 'invite-title' }, h('h2', { id: 'invite-title' }, 'Invite someone'), email.wrap, picker.el, paths.wrap, submit);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    email.setError(null);
    paths.setError(null);
    // the last invitation's "can now use this server" is not left over a refusal of this one
    msg.clear();
    submit.disabled = true;
    try {
      const input = { email: (email.control as HTMLInputElement).value, permissions: picker.selected(), paths: pathsOf((paths.control as HTMLTextAreaElement).value) };
      await gql(M_CREATE_SUBUSER, { serverId: server.id, input });
      (email.control as HTMLInputElement).value = '';
      msg.info(`${input.email} can now use this server.`);
      await page.reload();
    } catch (err) {
      if (err instanceof ApiError && (err.fields.email || err.fields.paths || err.fields.permissions)) {
        email.setError(err.fields.email ?? null);
        paths.setError(err.fields.paths ?? null);
        if (err.fields.permissions) msg.error(err.fields.permissions);
      } else msg.error(`Could not invite: ${describe(err)}`);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

/** The line summing up a subuser: name, email, how many keys and which folders. */
function summaryOf(s: Subuser): (HTMLElement | string)[] {
  const keys = `${s.permissions.length} permission${s.permissions.length === 1 ? '' : 's'}`;
  return [h('strong', null, s.name), ` ${s.email} · ${keys}${s.paths.length ? ` · ${s.paths.join(', ')}` : ''}`];
}

/** The folders field of a refusal (`paths`, `input.paths.0`, …), shown with the field's name. */
function pathsTarget(paths: ReturnType<typeof field>): (name: string) => ErrorTarget | null {
  return (name) => (/(^|\.)paths(\.|$)/.test(name) ? { control: paths.control, setError: (m) => paths.setError(m && `${name}: ${m}`) } : null);
}

function subuserItem(page: UsersPage, s: Subuser): HTMLElement {
  const { server, catalogue, msg } = page;
  const self = s.userId === state.user?.id;
  const editable = can(server.permissions, 'user.update') && !self;
  const picker = permissionPicker(catalogue, server.permissions, s.permissions, `sub-${s.userId}`);
  const paths = field('Folders', h('textarea', { rows: '2', id: `paths-${s.userId}` }), 'Empty: the whole server.');
  (paths.control as HTMLTextAreaElement).value = s.paths.join('\n');
  const save = h('button', { type: 'button', className: 'btn btn-primary' }, 'Save');
  const remove = h('button', { type: 'button', className: 'btn btn-danger' }, 'Remove');
  const summary = h('summary', null, summaryOf(s));
  save.addEventListener('click', async () => {
    save.disabled = true;
    paths.setError(null);
    try {
      const input = { permissions: picker.selected(), paths: pathsOf((paths.control as HTMLTextAreaElement).value) };
      const d = await gql<{ updateSubuser: Subuser }>(M_UPDATE_SUBUSER, { serverId: server.id, userId: s.userId, input });
      summary.replaceChildren(...summaryOf(d.updateSubuser));
      msg.info(`Saved the permissions of ${s.email}.`);
    } catch (err) {
      showRefusal(err, pathsTarget(paths), msg, 'Could not save');
    } finally {
      save.disabled = false;
    }
  });
  remove.addEventListener('click', async () => {
    if (!confirm(`Remove ${s.email} from ${server.name}? They lose access at once.`)) return;
    try {
      await gql(M_DELETE_SUBUSER, { serverId: server.id, userId: s.userId });
      msg.info(`${s.email} no longer has access.`);
      await page.reload();
    } catch (err) {
      msg.error(`Could not remove: ${describe(err)}`);
    }
  });
  if (!editable) for (const box of picker.el.querySelectorAll('input')) (box as HTMLInputElement).disabled = true;
  return h(
    'li',
    { className: 'subuser', 'data-email': s.email },
    h('details', null, summary, picker.el, editable ? [paths.wrap, save] : null),
    can(server.permissions, 'user.delete') && !self ? remove : null,
  );
}

export const serverUsersView: View = (main, params) => {
  const serverId = params.id!;
  const msg = messageBox();
  const title = h('h1', null, 'Users');
  main.append(h('p', { className: 'crumbs' }, link('/', '← Servers')), title, msg.el);
  let disposed = false;
  const list = h('ul', { className: 'subuser-list' });

  void (async () => {
    let server: Server;
    let catalogue: Permission[];
    try {
      [server, catalogue] = await Promise.all([
        gql<{ server: Server }>(Q_SERVER, { id: serverId }).then((d) => d.server),
        gql<{ permissions: Permission[] }>(Q_PERMISSIONS).then((d) => d.permissions),
      ]);
    } catch (err) {
      if (!disposed) msg.error(`Could not load the server: ${describe(err)}`);
      return;
    }
    if (disposed) return;
    document.title = `Users · ${server.name} · HostPanel`;
    title.textContent = `${server.name}: users`;
    title.after(serverTabs(server.id, server.permissions, 'users'));
    const page: UsersPage = { server, catalogue, msg, reload: () => load(page) };
    if (can(server.permissions, 'user.create')) main.append(inviteForm(page));
    main.append(h('section', { className: 'card', 'aria-labelledby': 'subusers-title' }, h('h2', { id: 'subusers-title' }, 'People with access'), list));
    await load(page);
  })();

  async function load(page: UsersPage): Promise<void> {
    try {
      const d = await gql<{ subusers: { total: number; items: Subuser[] } }>(Q_SUBUSERS, { serverId });
      if (disposed) return;
      clear(list);
      if (!d.subusers.items.length) list.append(h('li', { className: 'muted' }, 'Nobody else has access to this server yet.'));
      for (const s of d.subusers.items) list.append(subuserItem(page, s));
    } catch (err) {
      if (!disposed) msg.error(`Could not load the users: ${describe(err)}`);
    }
  }

  return () => {
    disposed = true;
  };
};
