/**
 * The Backups tab in headless Chromium against a real node agent: make a backup and see it complete
 * live, download link, lock and unlock, restore after the confirmations (files come back, checked
 * over REST), delete; a subuser with backup.read only sees the list and no actions.
 */
import type { Page } from 'playwright-core';
import { describeWithBrowser, holdLiveSocket, TestBrowser } from '../support/browser.js';
import { createLocalDemoServer } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

const maybe = describeWithBrowser('test/e2e/backups-web.test.ts');

maybe('the Backups tab', () => {
  let p: TestPlatform;
  let tb: TestBrowser;
  let owner: { token: string; email: string; password: string };
  let viewer: { token: string; email: string; password: string };
  let serverId: string;
  const F = (sub: string, q = '') => `/api/v1/servers/${serverId}/files${sub}${q ? `?${q}` : ''}`;

  beforeAll(async () => {
    p = await startTestPlatform({ localAgent: true, agentPort: 0 });
    const admin = await p.admin();
    owner = await p.newUser('Owner');
    viewer = await p.newUser('Viewer');
    serverId = await createLocalDemoServer(p, admin.token, owner.token, 'Backed-up world');
    await until(async () => (await p.request('GET', `/api/v1/servers/${serverId}`, { token: owner.token })).body.data.status === 'offline', 30_000, 'the install');
    await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: viewer.email, permissions: ['backup.read'] } });
    await p.request('PUT', F('/contents', 'path=/world.dat'), { token: owner.token, raw: 'precious', headers: { 'content-type': 'text/plain' } });
    tb = await TestBrowser.launch();
  }, 120_000);

  afterAll(async () => {
    await tb?.close();
    await p?.stop();
  }, 60_000);

  const row = (page: Page, name: string) => page.locator('tr[data-backup]', { hasText: name });

  test('make, lock, restore and delete a backup', async () => {
    const page = await tb.signedInPage(p.url, owner.email, owner.password, { dialogs: 'manual' });
    await page.goto(`${p.url}/servers/${serverId}`);
    await page.getByRole('navigation', { name: 'Server sections' }).getByRole('link', { name: 'Backups' }).click();
    await page.getByRole('form', { name: 'New backup' }).waitFor();
    await page.getByLabel('Name').fill('Before the update');
    await page.getByRole('button', { name: 'Back up now' }).click();
    await row(page, 'Before the update').and(page.locator('[data-status="completed"]')).waitFor();
    expect(await row(page, 'Before the update').getByRole('link', { name: 'Download Before the update' }).getAttribute('href')).toMatch(/\/download$/);

    await row(page, 'Before the update').getByRole('button', { name: 'Lock Before the update' }).click();
    await row(page, 'Before the update').getByText('(locked)').waitFor();
    expect(await row(page, 'Before the update').getByRole('button', { name: 'Delete Before the update' }).count()).toBe(0);
    await row(page, 'Before the update').getByRole('button', { name: 'Unlock Before the update' }).click();
    await row(page, 'Before the update').getByRole('button', { name: 'Delete Before the update' }).waitFor();

    // the world is damaged; the backup puts it back (two confirmations: restore, and keep newer files)
    await p.request('PUT', F('/contents', 'path=/world.dat'), { token: owner.token, raw: 'griefed', headers: { 'content-type': 'text/plain' } });
    const answers = [true, false];
    page.on('dialog', (d) => void (answers.shift() ? d.accept() : d.dismiss()));
    await row(page, 'Before the update').getByRole('button', { name: 'Restore Before the update' }).click();
    await until(async () => (await p.request('GET', F('/contents', 'path=/world.dat'), { token: owner.token })).text === 'precious', 20_000, 'the restored file');
    await until(async () => (await p.request('GET', `/api/v1/servers/${serverId}`, { token: owner.token })).body.data.status === 'offline', 20_000, 'the end of the restore');

    page.removeAllListeners('dialog');
    page.once('dialog', (d) => void d.accept());
    await row(page, 'Before the update').getByRole('button', { name: 'Delete Before the update' }).click();
    await until(async () => (await row(page, 'Before the update').count()) === 0, 10_000, 'the row to go');
    expect((await p.request('GET', `/api/v1/servers/${serverId}/backups`, { token: owner.token })).body.meta.total).toBe(0);
    expect(tb.problems).toEqual([]);
  });

  test('a subuser with backup.read sees the backups and no actions', async () => {
    const made = await p.request('POST', `/api/v1/servers/${serverId}/backups`, { token: owner.token, body: { name: 'Shared view' } });
    expect(made.status).toBe(201);
    const page = await tb.signedInPage(p.url, viewer.email, viewer.password, { dialogs: 'manual' });
    await page.goto(`${p.url}/servers/${serverId}/backups`);
    await row(page, 'Shared view').and(page.locator('[data-status="completed"]')).waitFor();
    expect(await page.getByRole('form', { name: 'New backup' }).count()).toBe(0);
    expect(await row(page, 'Shared view').getByRole('button').count()).toBe(0);
    expect(await row(page, 'Shared view').getByRole('link').count()).toBe(0);
    expect(tb.problems).toEqual([]);
  });

  test('a backup made while the page loaded, before its live updates began, shows as it ends', async () => {
    // the page's WebSocket is held before its first message: the list loads, a backup is made and
    // completes, and only then does the socket come up
    const page = await tb.signedInPage(p.url, owner.email, owner.password, { dialogs: 'manual' });
    const release = await holdLiveSocket(page);
    await page.goto(`${p.url}/servers/${serverId}/backups`);
    await row(page, 'Shared view').waitFor();
    const made = await p.request('POST', `/api/v1/servers/${serverId}/backups`, { token: owner.token, body: { name: 'Made meanwhile' } });
    expect(made.status).toBe(201);
    await until(async () => (await p.request('GET', `/api/v1/servers/${serverId}/backups/${made.body.data.id}`, { token: owner.token })).body.data.status === 'completed', 20_000, 'the backup');
    expect(await row(page, 'Made meanwhile').count()).toBe(0);
    release();
    await row(page, 'Made meanwhile').and(page.locator('[data-status="completed"]')).waitFor({ timeout: 10_000 });
    expect(tb.problems).toEqual([]);
  });
});
