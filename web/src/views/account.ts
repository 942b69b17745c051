/**
 * Account: the signed-in user's own settings. Their name and email (a new email asks for the current
 * password), a new password (their other sessions end, this one stays), the API tokens of their
 * programs (a new token's secret is shown once) and their own activity, in pages. Refused fields
 * (VALIDATION_ERROR, ALREADY_EXISTS) show next to their field, other refusals in the section's message box.
 */
import { describe, gql } from '../api';
import { followMe, state, type View } from '../app';
import { copyText } from '../clipboard';
import { announce, field, h, messageBox, pagerButtons } from '../dom';
import { M_CREATE_API_TOKEN, M_REVOKE_API_TOKEN, M_UPDATE_ME, Q_API_TOKENS, Q_MY_ACTIVITY, type ActivityEntry, type ApiToken, type CreatedApiToken, type User } from '../queries';
import { activityRow, activityTable, areaSelect } from './activity-table';
import { showRefusal, type ErrorTarget } from './field-errors';

const TOKENS_PAGE = 20;
const ACTIVITY_PAGE = 25;
type Msg = ReturnType<typeof messageBox>;
type Field = ReturnType<typeof field>;
type Page<T> = { total: number; items: T[] };

// ---- helpers --------------------------------------------------------------------------------------

const valueOf = (f: Field) => (f.control as HTMLInputElement).value;
const emptied = (...fields: Field[]) => fields.forEach((f) => ((f.control as HTMLInputElement).value = ''));
const input = (attrs: Record<string, unknown>) => h('input', attrs);
const when = (iso: string | null, none: string) => (iso ? h('time', { datetime: iso, title: new Date(iso).toISOString() }, new Date(iso).toLocaleString()) : none);

/** A card of the page: its heading, its message box, then `body`. */
function card(id: string, title: string, msg: Msg, ...body: (HTMLElement | null)[]): HTMLElement {
  return h('section', { className: 'card', 'aria-labelledby': id }, h('h2', { id }, title), msg.el, ...body);
}

/**
 * A form that sends `input()` to `updateMe`; `input()` returns null when the page refuses it itself
 * (having said why). Refused fields show next to `fields` (keyed by their name in UpdateMeInput).
 */
function meForm(opts: { id: string; title: string; lead: string; fields: Record<string, Field>; submit: string; what: string; input: (msg: Msg) => Record<string, unknown> | null; done: (saved: User, msg: Msg) => void }): HTMLElement {
  const msg = messageBox();
  const submit = h('button', { type: 'submit', className: 'btn btn-primary' }, opts.submit);
  const form = h('form', { className: 'form', novalidate: true }, h('p', { className: 'muted' }, opts.lead), Object.values(opts.fields).map((f) => f.wrap), h('div', { className: 'actions' }, submit));
  const target = (name: string): ErrorTarget | null => (Object.hasOwn(opts.fields, name) ? opts.fields[name]! : null);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    msg.clear();
    Object.values(opts.fields).forEach((f) => f.setError(null));
    const sent = opts.input(msg);
    if (!sent) return;
    submit.disabled = true;
    try {
      const d = await gql<{ updateMe: User }>(M_UPDATE_ME, { input: sent });
      opts.done(d.updateMe, msg);
    } catch (err) {
      showRefusal(err, target, msg, opts.what);
    } finally {
      submit.disabled = false;
    }
  });
  return card(opts.id, opts.title, msg, form);
}

// ---- profile and password ---------------------------------------------------------------------------

function profileSection(me: User, changed: () => void): HTMLElement {
  let saved = me;
  const fields = {
    name: field('Name', input({ type: 'text', id: 'me-name', value: me.name, autocomplete: 'name', required: true }), 'Shown to the people you share servers with.'),
    email: field('Email', input({ type: 'email', id: 'me-email', value: me.email, autocomplete: 'email', spellcheck: 'false', required: true }), 'You sign in with it.'),
    currentPassword: field('Current password', input({ type: 'password', id: 'me-email-password', autocomplete: 'current-password', required: true }), 'A new email asks for your current password.'),
  };
  const emailChanged = () => valueOf(fields.email).trim().toLowerCase() !== saved.email;
  const askPassword = () => {
    fields.currentPassword.wrap.hidden = !emailChanged();
  };
  fields.email.control.addEventListener('input', askPassword);
  askPassword();
  return meForm({
    id: 'me-profile-title',
    title: 'Profile',
    lead: 'Your name and the email you sign in with.',
    fields,
    submit: 'Save profile',
    what: 'Could not save your profile',
    input: (msg) => {
      const sent: Record<string, unknown> = {};
      if (valueOf(fields.name).trim() !== saved.name) sent.name = valueOf(fields.name);
      if (emailChanged()) Object.assign(sent, { email: valueOf(fields.email), currentPassword: valueOf(fields.currentPassword) });
      if (Object.keys(sent).length) return sent;
      msg.info('Nothing to save: change your name or your email first.');
      return null;
    },
    done: (u, msg) => {
      const newEmail = u.email !== saved.email;
      saved = u;
      followMe(u);
      (fields.name.control as HTMLInputElement).value = u.name;
      (fields.email.control as HTMLInputElement).value = u.email;
      emptied(fields.currentPassword);
      askPassword();
      msg.info(newEmail ? `Profile saved. From now on you sign in with ${u.email}.` : 'Profile saved.');
      announce('Profile saved');
      changed();
    },
  });
}

function passwordSection(changed: () => void): HTMLElement {
  const fields = {
    password: field('New password', input({ type: 'password', id: 'me-password', autocomplete: 'new-password', minlength: '8', maxlength: '128', required: true }), '8 to 128 characters.'),
    confirm: field('Confirm new password', input({ type: 'password', id: 'me-password-confirm', autocomplete: 'new-password', required: true })),
    currentPassword: field('Current password', input({ type: 'password', id: 'me-password-current', autocomplete: 'current-password', required: true })),
  };
  return meForm({
    id: 'me-password-title',
    title: 'Password',
    lead: 'Changing your password signs you out everywhere else: your other sessions end. This one stays signed in, and your API tokens keep working.',
    fields,
    submit: 'Change password',
    what: 'Could not change your password',
    input: (msg) => {
      if (valueOf(fields.password) === valueOf(fields.confirm)) return { password: valueOf(fields.password), currentPassword: valueOf(fields.currentPassword) };
      fields.confirm.setError('does not match the new password: type the same password in both fields.');
      msg.error('Could not change your password: correct the highlighted fields and try again.');
      fields.confirm.control.focus();
      return null;
    },
    done: (_u, msg) => {
      emptied(...Object.values(fields));
      msg.info('Password changed. Your other sessions were signed out; this one stays signed in.');
      announce('Password changed');
      changed();
    },
  });
}

// ---- API tokens -------------------------------------------------------------------------------------

function tokenItem(t: ApiToken, revoke: (t: ApiToken) => void): HTMLLIElement {
  return h(
    'li',
    { 'data-id': t.id },
    h(
      'div',
      { className: 'token-facts' },
      h('strong', { className: 'token-name' }, t.name),
      h('p', { className: 'meta' }, 'Starts with ', h('code', null, `${t.prefix}…`), ' · created ', when(t.createdAt, ''), ' · last used ', when(t.lastUsedAt, 'never'), ' · ', t.expiresAt ? ['expires ', when(t.expiresAt, '')] : 'never expires'),
    ),
    h('button', { type: 'button', className: 'btn btn-danger', 'aria-label': `Revoke ${t.name}`, onclick: () => revoke(t) }, 'Revoke'),
  );
}

/** The secret of a token just made, to copy: shown this once. */
function secretBox(t: CreatedApiToken, close: () => void): HTMLElement {
  const secret = field('Your new API token', input({ type: 'text', id: 'token-secret', value: t.token, readonly: true, spellcheck: 'false', autocomplete: 'off' }), 'Programs send it as the header Authorization: Bearer <token>.');
  const copied = h('span', { className: 'muted', role: 'status' });
  const copy = async () => {
    try {
      await copyText(t.token);
      copied.textContent = 'Copied.';
    } catch {
      copied.textContent = 'Could not copy: select the token and copy it yourself.';
      (secret.control as HTMLInputElement).select();
    }
  };
  return h(
    'div',
    { className: 'token-secret' },
    h('p', null, h('strong', null, `Copy the token “${t.name}” now: it will not be shown again.`), ' Once you leave this page only its first characters are known; if you lose it, revoke it and create another.'),
    secret.wrap,
    h('div', { className: 'actions' }, h('button', { type: 'button', className: 'btn', onclick: () => void copy() }, 'Copy'), h('button', { type: 'button', className: 'btn btn-quiet', onclick: close }, 'Done'), copied),
  );
}

function tokensSection(alive: () => boolean, changed: () => void): { el: HTMLElement; load: () => Promise<void> } {
  const msg = messageBox();
  let page = 1;
  let shown: CreatedApiToken | null = null;
  const list = h('ul', { className: 'token-list', 'aria-label': 'Your API tokens' });
  const count = h('p', { className: 'muted', role: 'status' }, 'Loading…');
  const pager = h('nav', { className: 'pager', 'aria-label': 'Pages of API tokens' });
  const secretHolder = h('div', null);
  const fields = {
    name: field('Token name', input({ type: 'text', id: 'token-name', autocomplete: 'off', required: true }), 'What uses it, to recognise it later.'),
    expiresInDays: field('Lifetime in days', input({ type: 'number', id: 'token-days', min: '1', max: '3650', step: '1', inputmode: 'numeric' }), 'From 1 to 3650; leave empty for a token that does not expire.'),
  };
  const submit = h('button', { type: 'submit', className: 'btn btn-primary' }, 'Create token');
  const form = h('form', { className: 'form token-form', novalidate: true, 'aria-label': 'Create an API token' }, h('div', { className: 'token-form-fields' }, fields.name.wrap, fields.expiresInDays.wrap), h('div', { className: 'actions' }, submit));
  form.addEventListener('submit', (e) => (e.preventDefault(), void create()));

  function showSecret(t: CreatedApiToken | null): void {
    shown = t;
    secretHolder.replaceChildren(...(t ? [secretBox(t, () => showSecret(null))] : []));
  }

  async function create(): Promise<void> {
    msg.clear();
    Object.values(fields).forEach((f) => f.setError(null));
    const days = valueOf(fields.expiresInDays).trim();
    submit.disabled = true;
    try {
      const d = await gql<{ createApiToken: CreatedApiToken }>(M_CREATE_API_TOKEN, { input: { name: valueOf(fields.name), expiresInDays: days ? Number(days) : undefined } });
      emptied(...Object.values(fields));
      showSecret(d.createApiToken);
      announce('API token created');
      (secretHolder.querySelector('input') as HTMLInputElement | null)?.focus();
      changed();
      await load();
    } catch (err) {
      showRefusal(err, (name) => (Object.hasOwn(fields, name) ? fields[name as keyof typeof fields] : null), msg, 'Could not create the token');
    } finally {
      submit.disabled = false;
    }
  }

  async function revoke(t: ApiToken): Promise<void> {
    if (!confirm(`Revoke the API token “${t.name}” (${t.prefix}…)? Programs that use it stop working at once.`)) return;
    msg.clear();
    try {
      await gql(M_REVOKE_API_TOKEN, { id: t.id });
      if (shown?.id === t.id) showSecret(null);
      msg.info(`Revoked the token “${t.name}”.`);
      announce('API token revoked');
      changed();
      await load();
    } catch (err) {
      msg.error(`Could not revoke “${t.name}”: ${describe(err)}`);
    }
  }

  async function load(): Promise<void> {
    try {
      const d = await gql<{ apiTokens: Page<ApiToken> }>(Q_API_TOKENS, { page, limit: TOKENS_PAGE });
      if (!alive()) return;
      const { total, items } = d.apiTokens;
      // the last page emptied (by a revocation): its predecessor
      if (!items.length && page > 1 && total > 0) return goTo(Math.ceil(total / TOKENS_PAGE));
      list.replaceChildren(...items.map((t) => tokenItem(t, (x) => void revoke(x))));
      count.textContent = total ? `${total} active token${total === 1 ? '' : 's'}.` : 'You have no API tokens. Create one for each program that uses the API in your name.';
      pager.replaceChildren(...pagerButtons(page, Math.ceil(total / TOKENS_PAGE), goTo));
    } catch (err) {
      if (alive()) msg.error(`Could not load your API tokens: ${describe(err)}`);
    }
  }

  function goTo(p: number): void {
    page = p;
    void load();
  }

  const lead = h('p', { className: 'muted' }, 'A program that uses the API in your name sends one of them. Revoke a token you no longer use: it stops working at once.');
  return { el: card('me-tokens-title', 'API tokens', msg, lead, count, list, pager, secretHolder, form), load };
}

// ---- activity ---------------------------------------------------------------------------------------

function activitySection(alive: () => boolean): { el: HTMLElement; load: () => Promise<void> } {
  const msg = messageBox();
  let page = 1;
  let prefix = '';
  let loads = 0;
  const table = activityTable('What you did, newest first');
  const count = h('p', { className: 'muted', role: 'status' }, 'Loading…');
  const pager = h('nav', { className: 'pager', 'aria-label': 'Pages of your activity' });
  const area = field('Show', areaSelect((value) => ((prefix = value), goTo(1))));

  async function load(): Promise<void> {
    const seq = ++loads;
    try {
      const d = await gql<{ myActivity: Page<ActivityEntry> }>(Q_MY_ACTIVITY, { filter: prefix ? { event: prefix } : null, page, limit: ACTIVITY_PAGE });
      if (!alive() || seq !== loads) return;
      const { total, items } = d.myActivity;
      table.body.replaceChildren(...items.map(activityRow));
      count.textContent = total ? `${total} entr${total === 1 ? 'y' : 'ies'}, newest first.` : 'Nothing yet.';
      pager.replaceChildren(...pagerButtons(page, Math.ceil(total / ACTIVITY_PAGE), goTo));
    } catch (err) {
      if (alive() && seq === loads) msg.error(`Could not load your activity: ${describe(err)}`);
    }
  }

  function goTo(p: number): void {
    page = p;
    void load();
  }

  const lead = h('p', { className: 'muted' }, 'What you did on the panel: signing in, changes to your account, and your actions on servers.');
  return { el: card('me-activity-title', 'Your activity', msg, lead, h('div', { className: 'toolbar' }, area.wrap), count, h('div', { className: 'table-scroll' }, table.el), pager), load };
}

// ---- the page ---------------------------------------------------------------------------------------

export const accountView: View = (main) => {
  let disposed = false;
  const alive = () => !disposed;
  const me = state.user!;
  const activity = activitySection(alive);
  const changed = () => void activity.load();
  const tokens = tokensSection(alive, changed);
  main.append(
    h(
      'div',
      { className: 'account-view' },
      h('h1', null, 'Account'),
      h('p', { className: 'lead' }, 'Your name, email and password, the API tokens of your programs, and what you did.'),
      profileSection(me, changed),
      passwordSection(changed),
      tokens.el,
      activity.el,
    ),
  );
  void tokens.load();
  void activity.load();
  return () => {
    disposed = true;
  };
};
