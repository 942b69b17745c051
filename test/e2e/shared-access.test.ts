/**
 * Shared access in the web page, in headless Chromium: the owner invites a friend from the Users tab
 * with a few permissions; the friend's page shows only what those keys allow; the owner's Activity tab
 * lists the invitation and shows new entries live, including one recorded before its subscription was
 * live; the admin sees the whole log.
 */
import path from 'node:path';
import { ARTIFACTS, describeWithBrowser, holdLiveSocket, TestBrowser } from '../support/browser.js';
import { createLocalDemoServer } from '../support/fixtures.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestPlatform, type TestPlatform } from '../support/harness.js';

const maybe = describeWithBrowser('test/e2e/shared-access.test.ts');

maybe('shared access in the web page', () => {
  let p: TestPlatform;
  let tb: TestBrowser;
  let owner: { token: string; email: string; password: string };
  let friend: { token: string; email: string; password: string };
  let serverId: string;

  beforeAll(async () => {
    p = await startTestPlatform({ localAgent: true, agentPort: 0 });
    const admin = await p.admin();
    owner = await p.newUser('Owner');
    friend = await p.newUser('Friend');
    serverId = await createLocalDemoServer(p, admin.token, owner.token, 'Shared world');
    tb = await TestBrowser.launch();
  }, 120_000);

  afterAll(async () => {
    await tb?.close();
    await p?.stop();
  }, 60_000);

  const signedInPage = (email: string, password: string) => tb.signedInPage(p.url, email, password);

  test('the owner invites a friend with a few keys; the friend sees only what they allow', async () => {
    const page = await signedInPage(owner.email, owner.password);
    await page.goto(`${p.url}/servers/${serverId}`);
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'Invite someone' }).waitFor();
    await page.getByLabel('Email of their account').fill(friend.email);
    // websocket.connect is ticked by default; add start
    await page.locator('#invite-control\\.start').check();
    await page.getByRole('button', { name: 'Invite' }).click();
    await page.locator('.subuser', { hasText: friend.email }).waitFor();
    await page.screenshot({ path: path.join(ARTIFACTS, 'shared-users.png'), fullPage: true });
    const api = await p.request('GET', `/api/v1/servers/${serverId}/subusers`, { token: owner.token });
    expect(api.body.data[0].permissions).toEqual(['control.start', 'websocket.connect']);

    const theirs = await signedInPage(friend.email, friend.password);
    await theirs.goto(`${p.url}/servers/${serverId}`);
    await theirs.getByRole('heading', { level: 1, name: 'Shared world' }).waitFor();
    await theirs.getByRole('button', { name: 'Start Shared world' }).waitFor();
    expect(await theirs.getByRole('button', { name: 'Stop Shared world' }).count()).toBe(0);
    expect(await theirs.getByRole('button', { name: 'Kill Shared world' }).count()).toBe(0);
    expect(await theirs.getByRole('button', { name: 'Delete server' }).count()).toBe(0);
    expect(await theirs.getByRole('link', { name: 'Users' }).count()).toBe(0);
    expect(await theirs.getByRole('link', { name: 'Activity' }).count()).toBe(0);
    expect(await theirs.locator('#console-command').count()).toBe(0);
    await theirs.screenshot({ path: path.join(ARTIFACTS, 'shared-subuser-view.png'), fullPage: true });
  });

  test('the Activity tab lists what happened and shows new entries live; admins see the whole log', async () => {
    const page = await signedInPage(owner.email, owner.password);
    // the page's WebSocket is held before its first message, so that the list loads before the
    // subscription is live, and a change is made in between: it must show once the socket is up
    const release = await holdLiveSocket(page);
    await page.goto(`${p.url}/servers/${serverId}/activity`);
    await page.locator('tr[data-event="server:subuser.create"]').waitFor();
    await page.locator('tr[data-event="server:create"]').waitFor();
    const updated = page.locator('tr[data-event="server:update"]');
    expect(await updated.count()).toBe(0);
    expect((await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: owner.token, body: { description: 'while the socket was held' } })).status).toBe(200);
    release();
    await updated.first().waitFor({ timeout: 10_000 });
    // and a change made elsewhere afterwards appears without a reload (changed again until one arrives:
    // the subscription may go live a moment after the socket is up; each change is a new entry)
    for (let i = 0; (await updated.count()) < 2; i++) {
      expect(i).toBeLessThan(10);
      expect((await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: owner.token, body: { description: `live ${i}` } })).status).toBe(200);
      await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('tr[data-event="server:update"]').length >= 2, null, { timeout: 2_000 }).catch(() => undefined);
    }
    // filter by area
    await page.getByLabel('Show').selectOption('server:subuser');
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('tr[data-event="server:create"]').length === 0);
    expect(await page.locator('tr[data-event="server:subuser.create"]').count()).toBe(1);
    await page.screenshot({ path: path.join(ARTIFACTS, 'shared-activity.png'), fullPage: true });

    const admin = await signedInPage(ADMIN_EMAIL, ADMIN_PASSWORD);
    await admin.goto(`${p.url}/admin`);
    await admin.getByRole('link', { name: /Activity log/ }).click();
    await admin.locator('tr[data-event="auth:signin"]').first().waitFor();
    expect(tb.problems).toEqual([]);
  });
});
