/**
 * The Account page in headless Chromium, against a real panel and database: a user reaches it from
 * their name in the navigation; a new name shows there at once; a new email is refused next to the
 * "Current password" field without it (and with a wrong one) and saved with it (the account then signs
 * in with it over REST); a new password is checked against its confirmation in the page, refused with a
 * wrong current password, and once changed ends the user's other sessions while the page stays signed
 * in; an API token made in the page works with the secret shown once, until it is revoked there after
 * a confirm naming it; the activity section lists the user's own events; on a 375 px phone nothing
 * reaches past the edge.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { adminWorld, ARTIFACTS, confirmations, describeWithBrowser, horizontalOverflow, type PageOptions } from '../support/browser.js';
import { ADMIN_EMAIL } from '../support/harness.js';
import { until } from '../support/wait.js';

// the page's globals, inside page.evaluate
declare const navigator: any;

type Account = { token: string; email: string; password: string };

describeWithBrowser('test/e2e/account-web.test.ts')('the Account page', () => {
  const w = adminWorld();

  const me = (token: string) => w.p.request('GET', '/api/v1/users/me', { token });
  const signin = (email: string, password: string) => w.p.request('POST', '/api/v1/auth/signin', { body: { email, password } });
  const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });
  const section = (page: Page, title: string) => page.locator('section.card', { has: page.getByRole('heading', { level: 2, name: title, exact: true }) });
  const status = (page: Page, text: string | RegExp) => page.getByRole('status').filter({ hasText: text }).first().waitFor();
  const alert = (page: Page, text: string | RegExp) => page.getByRole('alert').filter({ hasText: text }).waitFor();
  const invalid = (page: Page, id: string) => page.locator(`#${id}`).getAttribute('aria-invalid');

  /** The user's name in the navigation: the link to Account. */
  const accountLink = (page: Page) => nav(page).locator('a[href="/account"]');

  /** Signs `u` in and opens Account from their name in the navigation. */
  async function openAccount(u: Account, name: string, opts: PageOptions = {}): Promise<Page> {
    const page = await w.tb.signedInPage(w.p.url, u.email, u.password, opts);
    expect(await accountLink(page).textContent()).toBe(name);
    expect(await accountLink(page).getAttribute('aria-current')).toBeNull();
    await accountLink(page).click();
    await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
    await status(page, /entr(y|ies), newest first|Nothing yet/);
    return page;
  }

  test('profile: a new name shows in the navigation; a new email needs the current password', async () => {
    const u = await w.p.newUser('Ada Account');
    const page = await openAccount(u, 'Ada Account');
    expect(new URL(page.url()).pathname).toBe('/account');
    expect(await page.title()).toBe('Account · HostPanel');
    expect(await accountLink(page).getAttribute('aria-current')).toBe('page');
    const profile = section(page, 'Profile');
    expect(await profile.getByLabel('Email').inputValue()).toBe(u.email);
    // the current password is asked for only once the email is changed
    expect(await profile.getByLabel('Current password').isVisible()).toBe(false);

    await profile.getByLabel('Name').fill('Ada Renamed');
    await profile.getByRole('button', { name: 'Save profile' }).click();
    await status(page, 'Profile saved.');
    await until(async () => (await accountLink(page).textContent()) === 'Ada Renamed', 10_000, 'the new name in the navigation');
    expect((await me(u.token)).body.data.name).toBe('Ada Renamed');

    // a new email without the current password, then with a wrong one: refused next to the field, nothing saved
    const newEmail = `moved.${u.email}`;
    await profile.getByLabel('Email').fill(newEmail);
    await profile.getByLabel('Current password').waitFor();
    await profile.getByRole('button', { name: 'Save profile' }).click();
    await page.locator('#me-email-password-error').getByText('is required to change the email').waitFor();
    expect(await invalid(page, 'me-email-password')).toBe('true');
    await alert(page, 'Could not save your profile: correct the highlighted fields');
    await profile.getByLabel('Current password').fill('not-the-password');
    await profile.getByRole('button', { name: 'Save profile' }).click();
    await page.locator('#me-email-password-error').getByText('is not your current password').waitFor();
    expect((await me(u.token)).body.data.email).toBe(u.email);

    // another account's email: refused next to the email field
    await profile.getByLabel('Email').fill(ADMIN_EMAIL.toUpperCase());
    await profile.getByLabel('Current password').fill(u.password);
    await profile.getByRole('button', { name: 'Save profile' }).click();
    await page.locator('#me-email-error').getByText('An account with this email already exists.').waitFor();
    expect(await invalid(page, 'me-email-password')).toBeNull();
    expect((await me(u.token)).body.data.email).toBe(u.email);

    // with the current password: saved, and the account signs in with the new email only
    await profile.getByLabel('Email').fill(newEmail);
    await profile.getByLabel('Current password').fill(u.password);
    await profile.getByRole('button', { name: 'Save profile' }).click();
    await status(page, `From now on you sign in with ${newEmail}.`);
    expect(await profile.getByLabel('Current password').isVisible()).toBe(false);
    expect(await page.locator('[aria-invalid="true"]').count()).toBe(0);
    expect((await me(u.token)).body.data.email).toBe(newEmail);
    expect((await signin(newEmail, u.password)).status).toBe(200);
    expect((await signin(u.email, u.password)).status).toBe(401);

    // both changes are in the account's activity, refreshed after each
    const activity = section(page, 'Your activity');
    await until(async () => (await activity.locator('tr[data-event="user:update"]').count()) === 2, 10_000, 'two user:update entries');
    expect(w.tb.problems).toEqual([]);
  }, 90_000);

  test('password: the confirmation is checked in the page; a change ends the other sessions, not this one', async () => {
    const u = await w.p.newUser('Pat Password');
    const other = await signin(u.email, u.password);
    expect(other.status).toBe(200);
    const page = await openAccount(u, 'Pat Password');
    const form = section(page, 'Password');
    const fill = async (next: string, confirm: string, current: string) => {
      await form.getByLabel('New password', { exact: true }).fill(next);
      await form.getByLabel('Confirm new password').fill(confirm);
      await form.getByLabel('Current password').fill(current);
      await form.getByRole('button', { name: 'Change password' }).click();
    };
    expect(await form.getByText('your other sessions end. This one stays signed in').count()).toBe(1);

    // a confirmation that differs: caught in the page, the password is as it was
    await fill('brand-new-password-1', 'brand-new-password-2', u.password);
    await page.locator('#me-password-confirm-error').getByText('does not match the new password').waitFor();
    await alert(page, 'Could not change your password: correct the highlighted fields');
    expect((await me(u.token)).status).toBe(200);
    expect((await signin(u.email, 'brand-new-password-1')).status).toBe(401);

    // a wrong current password: refused next to its field
    await fill('brand-new-password-1', 'brand-new-password-1', 'not-the-password');
    await page.locator('#me-password-current-error').getByText('is not your current password').waitFor();
    expect(await invalid(page, 'me-password-confirm')).toBeNull();
    expect((await me(u.token)).status).toBe(200);

    // changed: the other sessions end, this page stays signed in
    await fill('brand-new-password-1', 'brand-new-password-1', u.password);
    await status(page, 'Password changed. Your other sessions were signed out; this one stays signed in.');
    expect(await form.getByLabel('New password', { exact: true }).inputValue()).toBe('');
    expect(await form.getByLabel('Current password').inputValue()).toBe('');
    expect((await me(u.token)).status).toBe(401);
    expect((await me(other.body.data.token)).status).toBe(401);
    expect((await signin(u.email, u.password)).status).toBe(401);
    expect((await signin(u.email, 'brand-new-password-1')).status).toBe(200);
    await section(page, 'Your activity').locator('tr[data-event="user:password-changed"]').waitFor();
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/account');
    expect(await accountLink(page).textContent()).toBe('Pat Password');
    expect(w.tb.problems).toEqual([]);
  }, 90_000);

  test('API tokens: the secret shown once works until the token is revoked in the page', async () => {
    const u = await w.p.newUser('Tia Token');
    const page = await openAccount(u, 'Tia Token', { dialogs: 'manual' });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: w.p.url });
    const confirms = confirmations(page);
    const tokens = section(page, 'API tokens');
    const item = (name: string) => tokens.locator('.token-list li', { has: page.getByText(name, { exact: true }) });
    await status(page, 'You have no API tokens.');

    // refused fields show next to them
    await tokens.getByLabel('Token name').fill('  ');
    await tokens.getByRole('button', { name: 'Create token' }).click();
    await page.locator('#token-name-error').getByText('must not be empty').waitFor();
    await tokens.getByLabel('Token name').fill('CI deploy');
    await tokens.getByLabel('Lifetime in days').fill('5000');
    await tokens.getByRole('button', { name: 'Create token' }).click();
    await page.locator('#token-days-error').getByText('must be at most 3650').waitFor();
    expect(await invalid(page, 'token-name')).toBeNull();

    // made: its secret once, read-only, with a Copy button
    await tokens.getByLabel('Lifetime in days').fill('30');
    await tokens.getByRole('button', { name: 'Create token' }).click();
    const shown = tokens.getByLabel('Your new API token');
    await shown.waitFor();
    const secret = await shown.inputValue();
    expect(secret).toMatch(/^hpt_/);
    expect(await shown.getAttribute('readonly')).toBe('');
    await tokens.getByText('Copy the token “CI deploy” now: it will not be shown again.').waitFor();
    await tokens.getByRole('button', { name: 'Copy', exact: true }).click();
    await until(() => page.evaluate(() => navigator.clipboard.readText()).then((t: string) => t === secret), 5_000, 'the copied secret');
    await status(page, '1 active token.');
    const listed = await item('CI deploy').textContent();
    expect(listed).toContain(`${secret.slice(0, 12)}…`);
    expect(listed).toContain('last used never');
    expect(listed).toContain('expires');
    expect(listed).not.toContain(secret);
    await page.screenshot({ path: path.join(ARTIFACTS, 'account.png'), fullPage: true });

    // the secret shown works against the API
    const used = await w.p.request('GET', '/api/v1/users/me', { headers: { authorization: `Bearer ${secret}` } });
    expect(used.status).toBe(200);
    expect(used.body.data.email).toBe(u.email);

    // shown once: not after a reload, where the token says it was used
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
    await status(page, '1 active token.');
    expect(await page.getByLabel('Your new API token').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    expect(await item('CI deploy').textContent()).not.toContain('last used never');

    // revoke: cancelled, it keeps working; confirmed, it is gone and refused
    confirms.answer = false;
    await item('CI deploy').getByRole('button', { name: 'Revoke CI deploy' }).click();
    expect(await confirms.asked()).toContain('Revoke the API token “CI deploy”');
    expect((await w.p.request('GET', '/api/v1/users/me', { headers: { authorization: `Bearer ${secret}` } })).status).toBe(200);
    confirms.answer = true;
    await item('CI deploy').getByRole('button', { name: 'Revoke CI deploy' }).click();
    expect(await confirms.asked()).toContain('Revoke the API token “CI deploy”');
    await status(page, 'Revoked the token “CI deploy”.');
    await status(page, 'You have no API tokens.');
    expect(await item('CI deploy').count()).toBe(0);
    expect((await w.p.request('GET', '/api/v1/users/me', { headers: { authorization: `Bearer ${secret}` } })).status).toBe(401);
    expect(w.tb.problems).toEqual([]);
  }, 90_000);

  test('your activity: the user\'s own events, by area', async () => {
    const u = await w.p.newUser('Ari Activity');
    const stranger = await w.p.newUser('Stranger');
    expect((await w.p.request('POST', '/api/v1/users/me/api-tokens', { token: stranger.token, body: { name: 'not yours' } })).status).toBe(201);
    expect((await w.p.request('POST', '/api/v1/users/me/api-tokens', { token: u.token, body: { name: 'made over REST' } })).status).toBe(201);
    const page = await openAccount(u, 'Ari Activity');
    const activity = section(page, 'Your activity');
    const rows = activity.locator('tbody tr');
    const made = activity.locator('tr[data-event="user:api-token.create"]');
    await made.waitFor();
    expect(await made.count()).toBe(1);
    expect(await made.textContent()).toContain('made over REST');
    await activity.locator('tr[data-event="auth:signin"]').first().waitFor();
    // every entry is the user's own
    const who = await rows.evaluateAll((trs) => trs.map((tr) => (tr as { cells: { textContent: string }[] }).cells[2]!.textContent));
    expect(who.length).toBeGreaterThan(1);
    expect(new Set(who)).toEqual(new Set([u.email]));
    expect(await activity.getByText('not yours').count()).toBe(0);

    // by area: Account shows only user: events
    await activity.getByLabel('Show').selectOption({ label: 'Account' });
    await until(async () => (await activity.locator('tr[data-event^="auth:"]').count()) === 0, 10_000, 'the sign-ins filtered out');
    const events = await rows.evaluateAll((trs) => trs.map((tr) => (tr as { dataset: { event: string } }).dataset.event));
    expect(events).toEqual(['user:api-token.create']);
    expect(w.tb.problems).toEqual([]);
  }, 60_000);

  test('on a 375 px phone a long email, name and token name do not widen the page', async () => {
    const email = `${'x'.repeat(188)}@example.com`;
    const name = 'N'.repeat(100);
    const password = 'password-123';
    expect((await w.p.request('POST', '/api/v1/auth/signup', { body: { email, password, name } })).status).toBe(201);
    const page = await openAccount({ token: '', email, password }, name, { viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true });
    const fits = { scrollWidth: 375, width: 375, past: [] };
    expect(await horizontalOverflow(page)).toEqual(fits);
    const tokens = section(page, 'API tokens');
    await tokens.getByLabel('Token name').fill('T'.repeat(100));
    await tokens.getByRole('button', { name: 'Create token' }).click();
    await tokens.getByLabel('Your new API token').waitFor();
    await status(page, '1 active token.');
    await section(page, 'Your activity').locator('tr[data-event="user:api-token.create"]').waitFor();
    expect(await horizontalOverflow(page)).toEqual(fits);
    await page.screenshot({ path: path.join(ARTIFACTS, 'account-phone.png'), fullPage: true });
    expect(w.tb.problems).toEqual([]);
  }, 60_000);
});
