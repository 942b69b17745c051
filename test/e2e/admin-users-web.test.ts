/**
 * Administration → Users in headless Chromium, against a real panel, database and local node agent:
 * the first administrator finds an account by search, renames it, sets its password (the account then
 * signs in with it over REST, its old session is gone), promotes and demotes it; refusals show next to
 * their fields (a taken email, an empty name, a short password) or in the message box (the last
 * administrator, an account that owns a server); an account without servers is deleted after a confirm
 * naming its email; names are shown as text; pages of 20; on a 390 px phone a 200-character email
 * does not widen the page.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { adminWorld, ARTIFACTS, confirmations, describeWithBrowser, horizontalOverflow, type TestBrowser } from '../support/browser.js';
import { createLocalDemoServer } from '../support/fixtures.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from '../support/harness.js';

// the page's globals, inside page.evaluate
declare const window: any;

const XSS = '<img src=x onerror=window.__xss=1>';

describeWithBrowser('test/e2e/admin-users-web.test.ts')('the Users screen of the administration', () => {
  const w = adminWorld();

  const account = (id: string) => w.p.request('GET', `/api/v1/admin/users/${id}`, { token: w.admin.token });
  const signin = (email: string, password: string) => w.p.request('POST', '/api/v1/auth/signin', { body: { email, password } });
  const row = (page: Page, email: string) => page.locator('table.accounts tbody tr', { has: page.getByRole('link', { name: email, exact: true }) });
  const status = (page: Page, text: string | RegExp) => page.getByRole('status').filter({ hasText: text }).waitFor();
  const alert = (page: Page, text: string | RegExp) => page.getByRole('alert').filter({ hasText: text }).waitFor();

  /** Signs in as the first administrator and opens Users from the navigation. */
  async function openScreen(opts: Parameters<TestBrowser['newPage']>[0] = {}): Promise<Page> {
    const page = await w.tb.signedInPage(w.p.url, ADMIN_EMAIL, ADMIN_PASSWORD, opts);
    await page.getByRole('navigation').getByRole('link', { name: 'Admin', exact: true }).click();
    await page.getByRole('link', { name: /^Users/ }).click();
    await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
    await page.locator('table.accounts tbody tr').first().waitFor();
    return page;
  }

  async function search(page: Page, text: string, expected: string | RegExp): Promise<void> {
    await page.getByLabel('Search').fill(text);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await status(page, expected);
  }

  test('search, rename, a new password, promote and demote: refusals next to their fields', async () => {
    const alice = await w.p.newUser('Alice Example');
    const page = await openScreen();

    // the administrator's own row says so and has no Delete
    const mine = row(page, ADMIN_EMAIL);
    await mine.getByText('You', { exact: true }).waitFor();
    expect(await mine.getByRole('button', { name: /^Delete/ }).count()).toBe(0);

    await search(page, alice.email.split('@')[0]!.toUpperCase(), '1 account matches');
    expect(await page.locator('table.accounts tbody tr').count()).toBe(1);
    expect(await row(page, alice.email).locator('td').nth(1).textContent()).toBe('Alice Example');
    expect(new URL(page.url()).searchParams.get('search')).toBe(alice.email.split('@')[0]!.toUpperCase());
    await row(page, alice.email).getByRole('link', { name: `Edit ${alice.email}` }).click();
    await page.getByRole('heading', { level: 1, name: alice.email }).waitFor();

    // refused: an empty name, then a taken email, each next to its field; nothing saved
    await page.getByLabel('Name', { exact: true }).fill('  ');
    await page.getByRole('button', { name: 'Save name and email' }).click();
    await page.locator('#account-name-error').getByText('must not be empty').waitFor();
    expect(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await alert(page, 'correct the highlighted fields');
    await page.getByLabel('Name', { exact: true }).fill('Alice Renamed');
    await page.getByLabel('Email', { exact: true }).fill(ADMIN_EMAIL.toUpperCase());
    await page.getByRole('button', { name: 'Save name and email' }).click();
    await page.locator('#account-email-error').getByText('An account with this email already exists.').waitFor();
    expect(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBeNull();
    expect((await account(alice.user.id)).body.data).toMatchObject({ name: 'Alice Example', email: alice.email });

    await page.getByLabel('Email', { exact: true }).fill(alice.email);
    await page.getByRole('button', { name: 'Save name and email' }).click();
    await status(page, `Saved the name and email of ${alice.email}.`);
    expect(await page.locator('[aria-invalid="true"]').count()).toBe(0);
    expect((await account(alice.user.id)).body.data.name).toBe('Alice Renamed');

    // a new password: the note says what it ends; too short is refused next to the field; then it is set
    expect(await page.locator('#account-password-hint').textContent()).toContain('all of its sessions end and its consoles and SFTP sessions close');
    await page.getByLabel('New password', { exact: true }).fill('short');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.locator('#account-password-error').getByText('must be at least 8 characters').waitFor();
    expect((await w.p.request('GET', '/api/v1/users/me', { token: alice.token })).status).toBe(200);
    await page.getByLabel('New password', { exact: true }).fill('brand-new-password-1');
    await page.getByRole('button', { name: 'Set password' }).click();
    await status(page, `New password set for ${alice.email}.`);
    expect(await page.getByLabel('New password', { exact: true }).inputValue()).toBe('');
    expect((await w.p.request('GET', '/api/v1/users/me', { token: alice.token })).status).toBe(401);
    expect((await signin(alice.email, alice.password)).status).toBe(401);
    const again = await signin(alice.email, 'brand-new-password-1');
    expect(again.status).toBe(200);

    // promote: the account can use the administration; demote: it cannot any more
    expect(await page.getByText('Taking administrator away closes the account\'s live connections at once').count()).toBe(1);
    await page.getByRole('combobox', { name: 'Role' }).selectOption('admin');
    await page.getByRole('button', { name: 'Save role' }).click();
    await status(page, `${alice.email} is now an administrator.`);
    expect((await account(alice.user.id)).body.data.role).toBe('admin');
    expect((await w.p.request('GET', '/api/v1/admin/users', { token: again.body.data.token })).status).toBe(200);
    await page.getByRole('combobox', { name: 'Role' }).selectOption('user');
    await page.getByRole('button', { name: 'Save role' }).click();
    await status(page, `${alice.email} is now a user.`);
    expect((await account(alice.user.id)).body.data.role).toBe('user');
    expect((await w.p.request('GET', '/api/v1/admin/users', { token: again.body.data.token })).status).toBe(403);

    // back on the list (the search kept), the account as it is now
    await page.getByRole('link', { name: '← Users' }).click();
    await status(page, '1 account matches');
    expect(await row(page, alice.email).locator('td').nth(1).textContent()).toBe('Alice Renamed');
    expect(await row(page, alice.email).locator('td').nth(2).textContent()).toBe('User');

    // the last administrator keeps the role: the panel's message says what to do
    await page.getByLabel('Search').fill('');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await row(page, ADMIN_EMAIL).getByRole('link', { name: `Edit ${ADMIN_EMAIL}` }).click();
    await page.getByRole('heading', { level: 1, name: ADMIN_EMAIL }).waitFor();
    expect(await page.locator('.lead').textContent()).toContain('· this is you');
    expect(await page.getByRole('button', { name: 'Delete account' }).count()).toBe(0);
    await page.getByText('This is your own account: you cannot delete it here. Another administrator can.').waitFor();
    await page.getByRole('combobox', { name: 'Role' }).selectOption('user');
    await page.getByRole('button', { name: 'Save role' }).click();
    await alert(page, 'This is the last administrator: promote another account first');
    expect((await account(w.admin.user.id)).body.data.role).toBe('admin');
    expect(w.tb.problems).toEqual([]);
  }, 90_000);

  test('delete: refused for an account that owns a server, done after a confirm naming the email', async () => {
    const owner = await w.p.newUser('Server Owner');
    await createLocalDemoServer(w.p, w.admin.token, owner.token, 'Kept world');
    const leaving = await w.p.newUser('Leaving Soon');
    const other = await w.p.newUser('Leaving Too');
    const page = await openScreen({ dialogs: 'manual' });
    const confirms = confirmations(page);

    await search(page, owner.email, '1 account matches');
    await row(page, owner.email).getByRole('button', { name: `Delete ${owner.email}` }).click();
    await alert(page, `Could not delete ${owner.email}: This account still owns 1 server(s). Delete them (or have them deleted) first.`);
    expect(await confirms.asked()).toContain(`Delete the account ${owner.email}?`);
    expect((await account(owner.user.id)).status).toBe(200);
    expect(await row(page, owner.email).count()).toBe(1);

    // cancelled: nothing happens; confirmed: gone from the list and the panel
    await search(page, leaving.email, '1 account matches');
    confirms.answer = false;
    await row(page, leaving.email).getByRole('button', { name: `Delete ${leaving.email}` }).click();
    expect(await confirms.asked()).toContain(`Delete the account ${leaving.email}?`);
    expect((await account(leaving.user.id)).status).toBe(200);
    confirms.answer = true;
    await row(page, leaving.email).getByRole('button', { name: `Delete ${leaving.email}` }).click();
    expect(await confirms.asked()).toContain(`Delete the account ${leaving.email}?`);
    await status(page, `Deleted ${leaving.email}.`);
    await status(page, `No account matches “${leaving.email}”.`);
    expect(await row(page, leaving.email).count()).toBe(0);
    expect((await account(leaving.user.id)).status).toBe(404);
    expect((await signin(leaving.email, leaving.password)).status).toBe(401);

    // from the account's own page: back on the list, which says so
    await search(page, other.email, '1 account matches');
    await row(page, other.email).getByRole('link', { name: other.email, exact: true }).click();
    await page.getByRole('button', { name: 'Delete account' }).click();
    await page.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
    await status(page, `Deleted ${other.email}.`);
    expect(await confirms.asked()).toContain(`Delete the account ${other.email}?`);
    expect((await account(other.user.id)).status).toBe(404);
    expect(w.tb.problems).toEqual([]);
  }, 90_000);

  test('names are text, never markup: on the list, on the page, and as changed there', async () => {
    const evil = await w.p.newUser(XSS);
    const page = await openScreen();
    await search(page, evil.email, '1 account matches');
    expect(await row(page, evil.email).locator('td').nth(1).textContent()).toBe(XSS);
    await row(page, evil.email).getByRole('link', { name: evil.email, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: evil.email }).waitFor();
    expect(await page.locator('.lead').textContent()).toContain(XSS);
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe(XSS);
    const svg = '<svg onload=window.__xss=2>"\'&amp;';
    await page.getByLabel('Name', { exact: true }).fill(svg);
    await page.getByRole('button', { name: 'Save name and email' }).click();
    await status(page, 'Saved the name and email');
    expect(await page.locator('.lead').textContent()).toContain(svg);
    await page.getByRole('link', { name: '← Users' }).click();
    await status(page, '1 account matches');
    expect(await row(page, evil.email).locator('td').nth(1).textContent()).toBe(svg);
    expect(await page.locator('.accounts-view img, .accounts-view svg').count()).toBe(0);
    expect(await page.evaluate(() => window.__xss)).toBeUndefined();
    expect(w.tb.problems).toEqual([]);
  }, 60_000);

  test('pages of 20: next and previous, the page in the address', async () => {
    const tag = `pager${Date.now().toString(36)}`;
    for (let i = 0; i < 21; i++) {
      const r = await w.p.request('POST', '/api/v1/auth/signup', { body: { email: `${tag}.${i}@example.com`, password: 'password-123', name: `Paged ${i}` } });
      expect(r.status).toBe(201);
    }
    const page = await openScreen();
    await search(page, tag, '21 accounts match');
    await status(page, 'showing 1–20');
    expect(await page.locator('table.accounts tbody tr').count()).toBe(20);
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-users.png'), fullPage: true });
    await page.getByRole('button', { name: 'Next page' }).click();
    await status(page, 'showing 21–21');
    expect(await page.locator('table.accounts tbody tr').count()).toBe(1);
    expect(new URL(page.url()).searchParams.get('page')).toBe('2');
    await page.getByText('Page 2 of 2').waitFor();
    await page.getByRole('button', { name: 'Previous page' }).click();
    await status(page, 'showing 1–20');
  }, 60_000);

  test('on a 390 px phone a 200-character email and a long name do not widen the page', async () => {
    const email = `${'x'.repeat(188)}@example.com`;
    expect(email).toHaveLength(200);
    const r = await w.p.request('POST', '/api/v1/auth/signup', { body: { email, password: 'password-123', name: 'N'.repeat(100) } });
    expect(r.status).toBe(201);
    const page = await openScreen({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const overflow = () => horizontalOverflow(page);
    expect(await overflow()).toEqual({ scrollWidth: 390, width: 390, past: [] });
    await search(page, email, '1 account matches');
    expect(await overflow()).toEqual({ scrollWidth: 390, width: 390, past: [] });
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-users-phone.png'), fullPage: true });
    await row(page, email).getByRole('link', { name: email, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: email }).waitFor();
    expect(await overflow()).toEqual({ scrollWidth: 390, width: 390, past: [] });
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-user-phone.png'), fullPage: true });
    expect(w.tb.problems).toEqual([]);
  }, 60_000);
});
