/**
 * A day of using the web page, in headless Chromium against a real node agent: what a probe found.
 * On a phone (390 px) every server page fits the screen: the section tabs wrap, the console's search
 * row wraps, the file list's buttons keep their words whole, the activity table scrolls in its card,
 * and the SFTP details wrap. A friend whose key to the activity log was taken away, opening its kept
 * address, is told what is missing, not "Live updates stopped" over an empty table. A refusal does not
 * stay on the page over the success that follows it (a schedule saved after a wrong time zone, a
 * backup made after the limit's "delete one first"), nor does a success over the refusal that follows it
 * (an invitation, then the same one again).
 */
import type { Page } from 'playwright-core';
import { describeWithBrowser, horizontalOverflow, webWorld } from '../support/browser.js';

// page.evaluate() callbacks run in the browser; this file is type-checked without the DOM lib
declare const document: any;

const maybe = describeWithBrowser('test/e2e/web-day-fixes.test.ts');

maybe('the web page through a day', () => {
  const w = webWorld('Day world');

  const overflow = (page: Page) => horizontalOverflow(page);

  test('on a 390 px phone every server page fits the screen, and no button word is cut', async () => {
    const { p, tb, owner, serverId } = w;
    const page = await tb.signedInPage(p.url, owner.email, owner.password, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, consoleErrors: true });
    const seen: Record<string, unknown> = {};
    for (const [tab, ready] of [
      ['', '.console-search'],
      ['/files', 'tr[data-path="/eula.txt"]'],
      ['/backups', 'nav.tabs'],
      ['/schedules', 'nav.tabs'],
      ['/startup', 'nav.tabs'],
      ['/users', 'nav.tabs'],
      // the server's creation: the owner's e-mail and a long line of details (ids without spaces)
      ['/activity', 'tr[data-event="server:create"]'],
    ] as const) {
      await page.goto(`${p.url}/servers/${serverId}${tab}`);
      await page.locator(ready).first().waitFor();
      if (tab === '/files') await page.locator('.sftp-fingerprint, .sftp-command').first().waitFor();
      const o = await overflow(page);
      seen[tab || '/'] = o.scrollWidth > o.width ? o : 'fits';
    }
    expect(seen).toEqual({ '/': 'fits', '/files': 'fits', '/backups': 'fits', '/schedules': 'fits', '/startup': 'fits', '/users': 'fits', '/activity': 'fits' });

    // the file list's buttons ("Rename" read "Re / na / me", one syllable a line)
    await page.goto(`${p.url}/servers/${serverId}/files`);
    await page.locator('tr[data-path="/eula.txt"]').waitFor();
    const cut = await page.evaluate(() =>
      (Array.from(document.querySelectorAll('.row-actions .btn')) as any[])
        .filter((b) => {
          const r = document.createRange();
          r.selectNodeContents(b);
          return r.getClientRects().length > 1;
        })
        .map((b) => b.textContent),
    );
    expect(cut).toEqual([]);
    expect(w.tb.problems).toEqual([]);
  });

  test('a friend without activity.read who opens the Activity address is told why, with no empty table', async () => {
    const { p, tb, owner, serverId } = w;
    const friend = await p.newUser('Friend');
    const share = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['file.read', 'backup.read'] } });
    expect(share.status).toBe(201);
    const page = await tb.signedInPage(p.url, friend.email, friend.password);
    await page.goto(`${p.url}/servers/${serverId}/activity`);
    await page.getByRole('heading', { level: 1, name: 'Day world: activity' }).waitFor();
    await page.getByRole('alert').filter({ hasText: 'Could not load the activity: You need the "activity.read" permission on this server; ask its owner.' }).waitFor();
    expect(await page.locator('table.activity').count()).toBe(0);
    expect(await page.getByRole('navigation', { name: 'Server sections' }).getByRole('link', { name: 'Activity' }).count()).toBe(0);
  });

  test('a schedule refused for its time zone, then created: the refusal goes', async () => {
    const { p, tb, owner, serverId } = w;
    const page = await tb.signedInPage(p.url, owner.email, owner.password);
    await page.goto(`${p.url}/servers/${serverId}/schedules`);
    const form = page.getByRole('form', { name: 'New schedule' });
    await form.getByLabel('Name').fill('Hourly');
    await form.getByLabel('Cron (minute hour day month weekday)').fill('0 * * * *');
    await form.getByLabel('Time zone').fill('Mars/Olympus');
    await form.getByLabel('Command or power action').fill('say hi');
    await form.getByRole('button', { name: 'Create schedule' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'Could not save the schedule: correct the highlighted fields and try again.' });
    await refusal.waitFor();
    await form.getByLabel('Time zone').fill('UTC');
    await form.getByRole('button', { name: 'Create schedule' }).click();
    await page.getByRole('region', { name: 'Schedule Hourly' }).waitFor();
    expect(await refusal.isVisible()).toBe(false);
  });

  test('a backup refused by the limit, then made once one is deleted: the refusal goes', async () => {
    const { p, tb, owner, admin, serverId } = w;
    expect((await p.request('PATCH', `/api/v1/servers/${serverId}`, { token: admin.token, body: { backupLimit: 1 } })).status).toBe(200);
    const page = await tb.signedInPage(p.url, owner.email, owner.password);
    await page.goto(`${p.url}/servers/${serverId}/backups`);
    const row = (name: string) => page.locator('tr[data-backup]', { hasText: name });
    await page.getByLabel('Name').fill('First');
    await page.getByRole('button', { name: 'Back up now' }).click();
    await row('First').and(page.locator('[data-status="completed"]')).waitFor();
    await page.getByLabel('Name').fill('Second');
    await page.getByRole('button', { name: 'Back up now' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'This server keeps at most 1 backups: delete one first.' });
    await refusal.waitFor();
    await row('First').getByRole('button', { name: 'Delete First' }).click();
    await page.waitForFunction(() => !document.querySelector('tr[data-backup]'));
    await page.getByLabel('Name').fill('Third');
    await page.getByRole('button', { name: 'Back up now' }).click();
    await row('Third').waitFor();
    expect(await refusal.isVisible()).toBe(false);
  });

  test('an invitation, then the same one again: the refusal is not shown under the first one\'s success', async () => {
    const { p, tb, owner, serverId } = w;
    const friend = await p.newUser('Invited');
    const page = await tb.signedInPage(p.url, owner.email, owner.password);
    await page.goto(`${p.url}/servers/${serverId}/users`);
    const email = page.getByLabel('Email of their account');
    await email.fill(friend.email);
    await page.locator('form.invite input[value="file.read"]').check();
    await page.getByRole('button', { name: 'Invite' }).click();
    const success = page.getByRole('status').filter({ hasText: `${friend.email} can now use this server.` });
    await success.waitFor();
    await email.fill(friend.email);
    await page.getByRole('button', { name: 'Invite' }).click();
    await page.getByText('This account is already a subuser of this server.').waitFor();
    expect(await success.isVisible()).toBe(false);
  });
});
