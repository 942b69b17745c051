import { ApiError, describe, gql } from '../api';
import { navigate, signedIn, type View } from '../app';
import { field, h, messageBox } from '../dom';
import { M_SIGN_IN, type User } from '../queries';

export const signInView: View = (main) => {
  const params = new URLSearchParams(location.search);
  const msg = messageBox();
  const email = field('Email', h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true, autocapitalize: 'off', spellcheck: 'false' }));
  const password = field('Password', h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true }));
  const submit = h('button', { type: 'submit', className: 'btn btn-primary' }, 'Sign in');

  const form = h(
    'form',
    { className: 'card form narrow', novalidate: true, 'aria-labelledby': 'signin-title' },
    h('h1', { id: 'signin-title' }, 'Sign in'),
    h('p', { className: 'lead' }, 'Manage your game servers: power, live console and resources.'),
    msg.el,
    email.wrap,
    password.wrap,
    h('div', { className: 'actions' }, submit),
  );
  if (params.get('expired')) msg.info('Your session has ended. Please sign in again.');

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    msg.clear();
    email.setError(null);
    password.setError(null);
    const ev = (email.control as HTMLInputElement).value.trim();
    const pv = (password.control as HTMLInputElement).value;
    let bad = false;
    if (!ev) {
      email.setError('Enter your email address.');
      bad = true;
    }
    if (!pv) {
      password.setError('Enter your password.');
      bad = true;
    }
    if (bad) {
      (form.querySelector('[aria-invalid="true"]') as HTMLElement | null)?.focus();
      return;
    }
    submit.disabled = true;
    submit.textContent = 'Signing in…';
    try {
      const d = await gql<{ signIn: { user: User } }>(M_SIGN_IN, { input: { email: ev, password: pv } }, { quietAuth: true });
      signedIn(d.signIn.user);
      navigate(sameOriginPath(params.get('next')), { replace: true });
    } catch (err) {
      if (err instanceof ApiError && err.code === 'UNAUTHORIZED') msg.error('Wrong email or password.');
      else if (err instanceof ApiError && err.code === 'VALIDATION_ERROR') {
        const f = err.fields;
        if (f.email) email.setError(f.email);
        if (f.password) password.setError(f.password);
        msg.error(describe(err));
      } else msg.error(describe(err));
      submit.disabled = false;
      submit.textContent = 'Sign in';
      (password.control as HTMLInputElement).select();
    }
  });

  main.append(form);
  // first screen of a visit: put the cursor in the email box
  queueMicrotask(() => (email.control as HTMLInputElement).focus());
};

/**
 * The page to go to after signing in: `next` when it is a path of this site, else `/`. Parsed as a URL
 * (a browser reads `/\evil.example/` or `/\t/evil.example/` as another host; a prefix check let them
 * through, and the navigation then failed with the user signed in).
 */
export function sameOriginPath(next: string | null): string {
  if (!next) return '/';
  try {
    const url = new URL(next, location.origin);
    return url.origin === location.origin ? url.pathname + url.search + url.hash : '/';
  } catch {
    return '/';
  }
}
