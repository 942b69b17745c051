/**
 * The server page of a subuser without `websocket.connect`, in headless Chromium: the page offers only
 * what their keys allow. A files-only helper who opens the server lands on its Files tab with no
 * permission errors, no console, no "You can watch this console" hint and no console or status
 * subscription; a helper who may only start the server gets its Overview (Power and Details, no
 * console); a helper who may only watch gets the console and no empty Power card; the owner's page
 * keeps its console, power buttons and live usage.
 */
import type { Page } from 'playwright-core';
import { describeWithBrowser, webWorld } from '../support/browser.js';

const maybe = describeWithBrowser('test/e2e/subuser-tabs.test.ts');

/**
 * The GraphQL operations a page subscribes to over its WebSocket from its next load on: the page is
 * first taken to a page with no subscriptions (where the server list's, loaded on sign-in, end).
 */
async function subscriptions(page: Page, baseUrl: string): Promise<string[]> {
  await page.goto(`${baseUrl}/no-such-page`);
  await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
  const seen: string[] = [];
  page.on('websocket', (ws) => {
    ws.on('framesent', (f) => {
      try {
        const m = JSON.parse(String(f.payload));
        if (m.type === 'subscribe') seen.push(String(m.payload?.query ?? ''));
      } catch {
        // not JSON: not a graphql-ws message
      }
    });
  });
  return seen;
}

const LIVE_CONSOLE = /\b(consoleBatches|consoleOutput|serverStatus|serverStats)\b/;

maybe('a server page shows what the keys allow', () => {
  const w = webWorld('Helpers world');

  async function subuser(name: string, permissions: string[]) {
    const u = await w.p.newUser(name);
    const r = await w.p.request('POST', `/api/v1/servers/${w.serverId}/subusers`, { token: w.owner.token, body: { email: u.email, permissions } });
    expect(r.status).toBe(201);
    return u;
  }

  const sections = (page: Page) => page.getByRole('navigation', { name: 'Server sections' });

  /** What is wrong on the page: errors, and claims of the console, as flags. */
  async function complaints(page: Page) {
    const text = await page.locator('main').innerText();
    return {
      alert: await page.getByRole('alert').count(),
      permissionError: /websocket\.connect/.test(text),
      unavailable: /unavailable/i.test(text),
      claimsWatch: text.includes('You can watch this console'),
    };
  }
  const NONE = { alert: 0, permissionError: false, unavailable: false, claimsWatch: false };

  test('a files-only helper who opens the server from the list lands on Files, without errors or a console', async () => {
    const helper = await subuser('Files helper', ['file.read', 'file.read-content', 'file.update']);
    const page = await w.tb.signedInPage(w.p.url, helper.email, helper.password);
    // the list's card: no power buttons they may not use; its quick link goes to Files
    await page.getByRole('link', { name: 'Files of Helpers world' }).waitFor();
    expect(await page.getByRole('link', { name: 'Console of Helpers world' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Start Helpers world', exact: true }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Stop Helpers world', exact: true }).count()).toBe(0);
    await page.getByRole('link', { name: 'Helpers world' }).first().click();
    await page.waitForURL(`${w.p.url}/servers/${w.serverId}/files`);
    await sections(page).getByRole('link', { name: 'Files', exact: true }).and(page.locator('[aria-current="page"]')).waitFor();
    await page.waitForTimeout(2500);
    expect(await complaints(page)).toEqual(NONE);
    expect(await sections(page).getByRole('link', { name: 'Console' }).count()).toBe(0);
    expect(await page.getByRole('region', { name: 'Console' }).count()).toBe(0);
    expect(await page.getByRole('region', { name: 'Power' }).count()).toBe(0);
    expect(w.tb.problems).toEqual([]);
  });

  test('a files-only helper who goes to the server address is sent to Files and subscribes to no console or status', async () => {
    const helper = await subuser('Files helper 2', ['file.read', 'file.read-content']);
    const page = await w.tb.signedInPage(w.p.url, helper.email, helper.password);
    const subs = await subscriptions(page, w.p.url);
    await page.goto(`${w.p.url}/servers/${w.serverId}`);
    await page.waitForURL(`${w.p.url}/servers/${w.serverId}/files`);
    await page.getByRole('heading', { level: 1, name: 'Helpers world: files' }).waitFor();
    await page.waitForTimeout(2500);
    expect(await complaints(page)).toEqual(NONE);
    expect(subs.filter((q) => LIVE_CONSOLE.test(q))).toEqual([]);
    expect(w.tb.problems).toEqual([]);
  });

  test('a helper who may only start the server gets its Overview: Power and Details, no console', async () => {
    const helper = await subuser('Starter', ['control.start', 'file.read']);
    const page = await w.tb.signedInPage(w.p.url, helper.email, helper.password);
    const subs = await subscriptions(page, w.p.url);
    await page.goto(`${w.p.url}/servers/${w.serverId}`);
    await page.getByRole('heading', { level: 1, name: 'Helpers world' }).waitFor();
    await page.getByRole('button', { name: 'Start Helpers world', exact: true }).waitFor();
    await page.waitForTimeout(2500);
    expect(new URL(page.url()).pathname).toBe(`/servers/${w.serverId}`);
    expect(await complaints(page)).toEqual(NONE);
    expect(await sections(page).getByRole('link', { name: 'Overview' }).getAttribute('aria-current')).toBe('page');
    expect(await sections(page).getByRole('link', { name: 'Console' }).count()).toBe(0);
    expect(await page.getByRole('region', { name: 'Console' }).count()).toBe(0);
    expect(await page.getByRole('region', { name: 'Live usage' }).count()).toBe(0);
    expect(await page.getByRole('region', { name: 'Details' }).count()).toBe(1);
    // the status does not update live for them: it can be loaded again
    await page.getByRole('button', { name: 'Refresh status' }).click();
    await page.locator('.status-line [data-status="offline"]').waitFor();
    await page.waitForTimeout(500);
    expect(await complaints(page)).toEqual(NONE);
    expect(subs.filter((q) => LIVE_CONSOLE.test(q))).toEqual([]);
    expect(w.tb.problems).toEqual([]);
  });

  test('a helper who may only watch gets the console and no empty Power card', async () => {
    const helper = await subuser('Watcher', ['websocket.connect']);
    const page = await w.tb.signedInPage(w.p.url, helper.email, helper.password);
    await page.goto(`${w.p.url}/servers/${w.serverId}`);
    const console = page.getByRole('region', { name: 'Console' });
    await console.waitFor();
    await page.locator('.xterm').waitFor();
    await page.waitForTimeout(1500);
    const text = await page.locator('main').innerText();
    expect(text).toContain('You can watch this console');
    expect(/unavailable/i.test(text)).toBe(false);
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.getByRole('region', { name: 'Power' }).count()).toBe(0);
    expect(await page.getByRole('region', { name: 'Live usage' }).count()).toBe(1);
    expect(await sections(page).getByRole('link', { name: 'Console' }).getAttribute('aria-current')).toBe('page');
    expect(w.tb.problems).toEqual([]);
  });

  test('the owner still gets the console, power buttons and live usage', async () => {
    const page = await w.tb.signedInPage(w.p.url, w.owner.email, w.owner.password);
    await page.getByRole('link', { name: 'Console of Helpers world' }).waitFor();
    await page.getByRole('button', { name: 'Start Helpers world', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Stop Helpers world', exact: true }).waitFor();
    const subs = await subscriptions(page, w.p.url);
    await page.goto(`${w.p.url}/servers/${w.serverId}`);
    await page.getByRole('region', { name: 'Console' }).waitFor();
    await page.locator('.xterm').waitFor();
    await page.locator('#console-command').waitFor();
    await page.getByRole('button', { name: 'Start Helpers world', exact: true }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/servers/${w.serverId}`);
    expect(await page.getByRole('region', { name: 'Power' }).count()).toBe(1);
    expect(await page.getByRole('region', { name: 'Live usage' }).count()).toBe(1);
    expect(await page.getByRole('region', { name: 'Danger zone' }).count()).toBe(1);
    expect(await sections(page).getByRole('link', { name: 'Console' }).getAttribute('aria-current')).toBe('page');
    for (const tab of ['Files', 'Backups', 'Schedules', 'Startup', 'Users', 'Activity']) expect(await sections(page).getByRole('link', { name: tab, exact: true }).count()).toBe(1);
    const text = await page.locator('main').innerText();
    expect(text).not.toContain('You can watch this console');
    expect(/unavailable/i.test(text)).toBe(false);
    expect(await page.getByRole('alert').count()).toBe(0);
    for (let i = 0; !subs.some((q) => /\bconsoleBatches\b/.test(q)); i++) {
      expect(i).toBeLessThan(50);
      await page.waitForTimeout(100);
    }
    expect(w.tb.problems).toEqual([]);
  });
});
