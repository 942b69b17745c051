/**
 * Administration → Users: every account (search by email or name, in pages), and one account's page:
 * its name and email, a new password, its role, and its deletion. Refused fields (VALIDATION_ERROR,
 * ALREADY_EXISTS) show next to their field; other refusals (INVALID_STATE: your own account, the last
 * administrator, an account that owns servers) show the panel's message, which says what to do.
 */
import { describe, gql } from '../api';
import { followMe, link, navigate, state, type View } from '../app';
import { announce, clear, field, h, messageBox, pagerButtons } from '../dom';
import { M_DELETE_USER, M_UPDATE_USER, Q_ADMIN_USER, Q_ADMIN_USERS, Q_ME, type AdminUser } from '../queries';
import { showRefusal, type ErrorTarget } from './field-errors';

const PAGE_SIZE = 20;
const ROLE_LABEL: Record<AdminUser['role'], string> = { admin: 'Administrator', user: 'User' };
type Msg = ReturnType<typeof messageBox>;
type Field = ReturnType<typeof field>;

const isMe = (u: AdminUser) => u.id === state.user?.id;
const plural = (n: number) => `${n} account${n === 1 ? '' : 's'}`;
const createdOn = (u: AdminUser) => h('time', { datetime: u.createdAt }, new Date(u.createdAt).toLocaleDateString());
const youBadge = (u: AdminUser) => (isMe(u) ? h('span', { className: 'badge', title: 'The account you are signed in with' }, 'You') : null);

/** What the list says when it is shown next: a deletion made on an account's page. */
let flash: string | null = null;
/** The list's address as last shown (its search and page): where an account's page goes back to. */
let listAddress = '/admin/users';

/** Deletes `u` after a confirmation naming its email; true once deleted. A refusal goes to `msg` with the panel's message. */
async function deleteAccount(u: AdminUser, msg: Msg): Promise<boolean> {
  if (!confirm(`Delete the account ${u.email}? Its sessions, API tokens and access to other people's servers go with it. This cannot be undone.`)) return false;
  msg.clear();
  try {
    await gql(M_DELETE_USER, { id: u.id });
    announce(`Account ${u.email} deleted`);
    return true;
  } catch (err) {
    msg.error(`Could not delete ${u.email}: ${describe(err)}`);
    return false;
  }
}

// ---- the list ---------------------------------------------------------------------------------------

function accountRow(u: AdminUser, remove: (u: AdminUser) => void): HTMLTableRowElement {
  return h(
    'tr',
    { 'data-id': u.id },
    h('td', null, link(`/admin/users/${u.id}`, u.email), youBadge(u)),
    h('td', null, u.name),
    h('td', null, ROLE_LABEL[u.role]),
    h('td', null, createdOn(u)),
    h(
      'td',
      { className: 'actions' },
      h(
        'div',
        { className: 'row-actions' },
        link(`/admin/users/${u.id}`, 'Edit', { className: 'btn', 'aria-label': `Edit ${u.email}` }),
        isMe(u) ? null : h('button', { type: 'button', className: 'btn btn-danger', 'aria-label': `Delete ${u.email}`, onclick: () => remove(u) }, 'Delete'),
      ),
    ),
  );
}

/** "3 accounts match “ada”, showing 1–3." */
function countText(total: number, shown: number, page: number, search: string): string {
  if (!total) return search ? `No account matches “${search}”.` : 'No accounts.';
  const from = (page - 1) * PAGE_SIZE + 1;
  const range = total > PAGE_SIZE ? `, showing ${from}–${from + shown - 1}` : '';
  return `${plural(total)}${search ? ` ${total === 1 ? 'matches' : 'match'} “${search}”` : ''}${range}.`;
}

export const adminUsersView: View = (main) => {
  const msg = messageBox();
  const query = new URLSearchParams(location.search);
  let search = query.get('search') ?? '';
  let page = Number(query.get('page')) || 1;
  let disposed = false;
  /** the latest load: an earlier one answering later is not shown */
  let loads = 0;
  const body = h('tbody', null);
  const count = h('p', { className: 'muted', role: 'status' }, 'Loading…');
  const pager = h('nav', { className: 'pager', 'aria-label': 'Pages of accounts' });
  const col = (text: string) => h('th', { scope: 'col' }, text);
  const table = h('table', { className: 'activity accounts', 'aria-labelledby': 'accounts-title' }, h('thead', null, h('tr', null, col('Email'), col('Name'), col('Role'), col('Created'), h('th', { scope: 'col' }, h('span', { className: 'visually-hidden' }, 'Actions')))), body);
  const searchField = field('Search', h('input', { type: 'search', id: 'account-search', value: search, autocomplete: 'off', spellcheck: 'false' }), 'Part of an email or a name; upper and lower case alike.');
  const searchForm = h('form', { className: 'toolbar account-search', role: 'search', onsubmit: (e: Event) => (e.preventDefault(), find((searchField.control as HTMLInputElement).value.trim())) }, searchField.wrap, h('button', { type: 'submit', className: 'btn' }, 'Search'));

  main.append(
    h(
      'div',
      { className: 'accounts-view' },
      h('p', { className: 'crumbs' }, link('/admin', '← Administration')),
      h('h1', null, 'Users'),
      h('p', { className: 'lead' }, "Every account of the panel. Open one to change its name, email, password or role; an account that still owns servers can be deleted once its servers are."),
      msg.el,
      h('section', { className: 'card', 'aria-labelledby': 'accounts-title' }, h('h2', { id: 'accounts-title' }, 'Accounts'), searchForm, count, table, pager),
    ),
  );
  if (flash) msg.info(flash);
  flash = null;

  function find(text: string): void {
    search = text;
    page = 1;
    void load();
  }

  /** The address says the search and the page: Back, or the way back from an account's page, comes back to them. */
  function remember(): void {
    const q = new URLSearchParams();
    if (search) q.set('search', search);
    if (page > 1) q.set('page', String(page));
    listAddress = `/admin/users${q.toString() ? `?${q}` : ''}`;
    if (listAddress !== location.pathname + location.search) history.replaceState(history.state, '', listAddress);
  }

  async function load(): Promise<void> {
    remember();
    const seq = ++loads;
    try {
      const d = await gql<{ adminUsers: { total: number; items: AdminUser[] } }>(Q_ADMIN_USERS, { page, limit: PAGE_SIZE, search: search || undefined });
      if (disposed || seq !== loads) return;
      const { total, items } = d.adminUsers;
      // the last page emptied (by a deletion): its predecessor
      if (!items.length && page > 1 && total > 0) return goTo(Math.ceil(total / PAGE_SIZE));
      clear(body);
      body.append(...items.map((u) => accountRow(u, (x) => void remove(x))));
      count.textContent = countText(total, items.length, page, search);
      pager.replaceChildren(...pagerButtons(page, Math.ceil(total / PAGE_SIZE), goTo));
    } catch (err) {
      if (!disposed && seq === loads) msg.error(`Could not load the accounts: ${describe(err)}`);
    }
  }

  function goTo(p: number): void {
    page = p;
    void load();
  }

  async function remove(u: AdminUser): Promise<void> {
    if (!(await deleteAccount(u, msg))) return;
    msg.info(`Deleted ${u.email}.`);
    await load();
  }

  void load();
  return () => {
    disposed = true;
  };
};

// ---- one account ------------------------------------------------------------------------------------

/** What the sections of an account's page share. */
interface AccountPage {
  user: AdminUser;
  msg: Msg;
  /** shows the account as the panel saved it, with `note` in the message box */
  saved(u: AdminUser, note: string): void;
}

/**
 * A card form that sends some of the account's fields: `input()` is what it sends, `done(saved)`
 * what follows; the refused fields show next to `fields`, the rest in the message box.
 */
function accountForm(page: AccountPage, opts: { id: string; title: string; fields: Record<string, Field>; extra?: HTMLElement | null; submit: string; input: () => Record<string, unknown>; done: (saved: AdminUser) => void }): HTMLFormElement {
  const { msg, user } = page;
  const submit = h('button', { type: 'submit', className: 'btn btn-primary' }, opts.submit);
  const form = h('form', { className: 'card form', novalidate: true, 'aria-labelledby': opts.id }, h('h2', { id: opts.id }, opts.title), Object.values(opts.fields).map((f) => f.wrap), opts.extra ?? null, h('div', { className: 'actions' }, submit));
  const target = (name: string): ErrorTarget | null => (Object.hasOwn(opts.fields, name) ? opts.fields[name]! : null);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    msg.clear();
    Object.values(opts.fields).forEach((f) => f.setError(null));
    submit.disabled = true;
    try {
      const d = await gql<{ updateUser: AdminUser }>(M_UPDATE_USER, { id: user.id, input: opts.input() });
      opts.done(d.updateUser);
    } catch (err) {
      showRefusal(err, target, msg, `Could not save ${user.email}`);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

const valueOf = (f: Field) => (f.control as HTMLInputElement).value;

function detailsForm(page: AccountPage): HTMLFormElement {
  const u = page.user;
  const fields = {
    name: field('Name', h('input', { type: 'text', id: 'account-name', value: u.name, autocomplete: 'off', required: true })),
    email: field('Email', h('input', { type: 'email', id: 'account-email', value: u.email, autocomplete: 'off', spellcheck: 'false', required: true }), 'They sign in with it. It cannot be the email of another account.'),
  };
  return accountForm(page, {
    id: 'account-details-title',
    title: 'Name and email',
    fields,
    submit: 'Save name and email',
    input: () => ({ name: valueOf(fields.name), email: valueOf(fields.email) }),
    done: (saved) => page.saved(saved, `Saved the name and email of ${saved.email}.`),
  });
}

function passwordForm(page: AccountPage): HTMLFormElement {
  const u = page.user;
  const password = field(
    'New password',
    h('input', { type: 'password', id: 'account-password', autocomplete: 'new-password', minlength: '8', required: true }),
    `8 to 128 characters. Setting it signs ${isMe(u) ? 'you' : 'this account'} out everywhere: all of its sessions end and its consoles and SFTP sessions close on every node. Its API tokens keep working.`,
  );
  return accountForm(page, {
    id: 'account-password-title',
    title: 'Set a new password',
    fields: { password },
    submit: 'Set password',
    input: () => ({ password: valueOf(password) }),
    done: (saved) => {
      (password.control as HTMLInputElement).value = '';
      page.msg.info(`New password set for ${saved.email}. Its sessions have ended and its consoles and SFTP sessions are closed.`);
      announce('Password set');
      // your own sessions ended too: the check sends you to the sign-in page
      if (isMe(saved)) void gql(Q_ME).catch(() => undefined);
    },
  });
}

function roleForm(page: AccountPage): HTMLFormElement {
  const u = page.user;
  const role = field(
    'Role',
    h('select', { id: 'account-role' }, ...(['user', 'admin'] as const).map((r) => h('option', { value: r, selected: u.role === r }, ROLE_LABEL[r]))),
    'Administrators manage every server, node, blueprint and account.',
  );
  const note = h(
    'p',
    { className: 'hint' },
    isMe(u) ? 'This is your own account: taking administrator away closes your live connections at once and you leave this page. ' : '',
    'Taking administrator away closes the account\'s live connections at once (live updates, consoles, SFTP sessions). The last administrator keeps the role: promote another account first.',
  );
  return accountForm(page, {
    id: 'account-role-title',
    title: 'Administrator or user',
    fields: { role },
    extra: note,
    submit: 'Save role',
    input: () => ({ role: valueOf(role) }),
    done: (saved) => {
      followMe(saved);
      if (isMe(saved) && saved.role !== 'admin') return navigate('/');
      page.saved(saved, `${saved.email} is now ${saved.role === 'admin' ? 'an administrator' : 'a user'}.`);
    },
  });
}

function deleteSection(page: AccountPage): HTMLElement {
  const u = page.user;
  const body = isMe(u)
    ? h('p', null, 'This is your own account: you cannot delete it here. Another administrator can.')
    : [
        h('p', null, "Deleting the account ends its sessions and takes away its API tokens and its access to other people's servers. An account that still owns servers can be deleted once its servers are."),
        h('div', { className: 'actions' }, h('button', { type: 'button', className: 'btn btn-danger', onclick: () => void remove() }, 'Delete account')),
      ];
  async function remove(): Promise<void> {
    if (!(await deleteAccount(u, page.msg))) return;
    flash = `Deleted ${u.email}.`;
    navigate(listAddress);
  }
  return h('section', { className: 'card danger-zone', 'aria-labelledby': 'account-delete-title' }, h('h2', { id: 'account-delete-title' }, 'Delete the account'), body);
}

export const adminUserView: View = (main, params) => {
  const msg = messageBox();
  const title = h('h1', null, 'Account');
  const lead = h('p', { className: 'lead' });
  const sections = h('div', null);
  main.append(h('div', { className: 'accounts-view' }, h('p', { className: 'crumbs' }, link(listAddress, '← Users')), title, lead, msg.el, sections));
  let disposed = false;

  function show(u: AdminUser): void {
    followMe(u);
    title.replaceChildren(u.email, ...(isMe(u) ? [' ', youBadge(u)!] : []));
    lead.replaceChildren(`${u.name} · ${ROLE_LABEL[u.role]} · created `, createdOn(u), isMe(u) ? ' · this is you' : '');
    document.title = `${u.email} · Users · HostPanel`;
    const page: AccountPage = {
      user: u,
      msg,
      saved: (next, note) => {
        show(next);
        msg.info(note);
        announce('Saved');
      },
    };
    sections.replaceChildren(detailsForm(page), passwordForm(page), roleForm(page), deleteSection(page));
  }

  void (async () => {
    try {
      const d = await gql<{ adminUser: AdminUser }>(Q_ADMIN_USER, { id: params.id });
      if (!disposed) show(d.adminUser);
    } catch (err) {
      if (!disposed) msg.error(`Could not load the account: ${describe(err)} Go back to the list of users.`);
    }
  })();
  return () => {
    disposed = true;
  };
};
