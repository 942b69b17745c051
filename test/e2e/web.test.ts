/**
 * The web page in a real headless Chromium (Debian's /usr/bin/chromium driven by playwright-core,
 * never a downloaded browser) against a real panel with its local node agent: sign in, create a
 * demo-game server, start it, see its ready line, `say hi`, stop it; a phone-sized screen; a
 * keyboard-only sign-in. Needs web/dist (`npm test` builds it; or `npm run build:web`).
 * Screenshots go to test-artifacts/web/.
 */
import path from 'node:path';
import { ARTIFACTS, describeWithBrowser, TestBrowser } from '../support/browser.js';
import type { Page, WebSocketRoute } from 'playwright-core';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';
import { createRecordsOnlyServer } from '../support/fixtures.js';

// page.evaluate() callbacks run in the browser; this file is type-checked without the DOM lib
declare const document: any;
declare const window: any;
declare function getComputedStyle(el: unknown): { outlineStyle: string };

const maybe = describeWithBrowser('test/e2e/web.test.ts');

maybe('web page in headless Chromium', () => {
  let p: TestPlatform;
  let tb: TestBrowser;

  beforeAll(async () => {
    p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 3 });
    tb = await TestBrowser.launch();
  }, 120_000);

  afterAll(async () => {
    await tb?.close();
    await p?.stop();
  }, 60_000);

  /** A page whose errors and console errors (CSP violations, exceptions, failed requests) count as problems; confirm() is accepted. */
  const newPage = (viewport = { width: 1280, height: 900 }, opts: { isMobile?: boolean; hasTouch?: boolean } = {}) => tb.newPage({ viewport, ...opts, consoleErrors: true });

  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

  async function signIn(page: Page): Promise<void> {
    await page.goto(p.url + '/');
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'All servers' }).waitFor();
  }

  test('the panel serves the page at / and page addresses, while API paths stay JSON 404s', async () => {
    const root = await fetch(p.url + '/', { headers: { accept: 'text/html' } });
    expect(root.status).toBe(200);
    expect(root.headers.get('content-type')).toMatch(/text\/html/);
    expect(await root.text()).toContain('<main id="main"');
    const deep = await fetch(p.url + '/servers/00000000-0000-4000-8000-000000000000', { headers: { accept: 'text/html' } });
    expect(deep.status).toBe(200);
    const api = await p.request('GET', '/api/v1/nope', { headers: { accept: 'text/html' } });
    expect(api.status).toBe(404);
    expect(api.body.error.code).toBe('NOT_FOUND');
    const other = await p.request('GET', '/definitely/not/here');
    expect(other.status).toBe(404);
    expect((await fetch(p.url + '/favicon.svg')).status).toBe(200);
  });

  test('sign in, create a demo-game server, start it, console shows the ready line, say hi, stop it', async () => {
    const page = await newPage();
    await page.goto(p.url + '/');
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await shot(page, '01-sign-in');

    // a wrong password is a clear message
    await page.getByLabel('Email').fill(ADMIN_EMAIL);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Wrong email or password' }).waitFor();

    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'All servers' }).waitFor();
    // the session is the HTTP-only cookie
    const cookies = await page.context().cookies();
    expect(cookies.find((c) => c.name === 'hp_session')?.httpOnly).toBe(true);

    // create a server from the demo-game blueprint
    await page.getByRole('link', { name: 'New server' }).click();
    await page.getByRole('heading', { level: 1, name: 'New server' }).waitFor();
    const name = `Web demo ${Date.now().toString(36)}`;
    await page.getByLabel('Name', { exact: true }).fill(name);
    const bp = page.getByLabel('Blueprint');
    expect(await bp.locator('option:checked').textContent()).toMatch(/demo/i);
    // resources are defaulted from the blueprint
    expect(Number(await page.getByLabel('Memory (MiB)').inputValue())).toBeGreaterThanOrEqual(64);
    expect(await page.getByLabel('Node').locator('option').count()).toBeGreaterThanOrEqual(1);
    // every form control has a real label
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('input, select, textarea')].filter((el: any) => (el as any).labels?.length === 0).map((el: any) => el.outerHTML),
    );
    expect(unlabelled).toEqual([]);
    await page.getByLabel('Memory (MiB)').fill('256');
    await shot(page, '02-create-server');
    await page.getByRole('button', { name: 'Create server' }).click();

    // the server page: installing → offline, then start
    await page.getByRole('heading', { level: 1, name }).waitFor();
    const badge = page.locator('.status-line .status');
    await page.locator('.status-line .status[data-status="offline"]').waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: `Start ${name}`, exact: true }).click();
    await page.locator('.status-line .status[data-status="running"]').waitFor({ timeout: 30_000 });
    const output = page.getByRole('log');
    await output.getByText('Done (').waitFor();

    // a command goes over the node console socket; its echo comes back through the subscription
    await page.getByRole('textbox', { name: 'Command' }).fill('say hi');
    await page.getByRole('textbox', { name: 'Command' }).press('Enter');
    await output.getByText('[Server] hi').waitFor({ timeout: 15_000 });
    expect(await page.getByRole('textbox', { name: 'Command' }).inputValue()).toBe('');
    // live usage from the serverStats subscription (about every 2 s while running)
    await page.waitForFunction(() => /%$/.test(document.querySelector('.stats dd')?.textContent ?? ''), null, { timeout: 10_000 });
    await shot(page, '03-console-running');

    await page.getByRole('button', { name: `Stop ${name}`, exact: true }).click();
    await page.locator('.status-line .status[data-status="offline"]').waitFor({ timeout: 30_000 });
    expect(await badge.textContent()).toBe('Offline');
    expect(await page.getByRole('textbox', { name: 'Command' }).isDisabled()).toBe(true);
    await shot(page, '04-stopped');

    // the list shows it offline too, live
    await page.getByRole('link', { name: 'Servers', exact: true }).click();
    const card = page.locator('li.server-card', { hasText: name });
    await card.locator('.status[data-status="offline"]').waitFor();
    await shot(page, '05-server-list');

    // admin view: platform figures and the local node with live figures
    await page.getByRole('link', { name: 'Admin', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Administration' }).waitFor();
    await page.getByRole('heading', { level: 3, name: 'local' }).waitFor();
    await page.locator('.node-card .status-running').waitFor();
    await shot(page, '06-admin');

    // sign out ends the session: back to the sign-in page, and reloading stays there
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(tb.problems).toEqual([]);
  }, 180_000);

  test('a regular user sees only their own servers and no admin pages', async () => {
    const u = await p.newUser('Player One');
    const page = await newPage();
    await page.goto(p.url + '/admin'); // a deep link: sign in first, then back to it
    await page.getByLabel('Email').fill(u.email);
    await page.getByLabel('Password').fill(u.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Administrators only' }).waitFor();
    expect(await page.getByRole('link', { name: 'Admin', exact: true }).count()).toBe(0);
    await page.getByRole('link', { name: 'Servers', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Your servers' }).waitFor();
    await page.getByText('No servers yet.').waitFor();
    // users choose among the nodes offered to them (myNodes), with what each can still allocate
    await page.getByRole('link', { name: 'New server' }).click();
    const nodeSelect = page.getByLabel('Node', { exact: true });
    await nodeSelect.waitFor();
    expect(await nodeSelect.locator('option').first().textContent()).toMatch(/^local — .*MiB RAM/);
    await page.getByRole('button', { name: 'Create server' }).click();
    await page.getByText('Give the server a name.').waitFor();
    expect(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Name', { exact: true }).fill('Mine');
    await page.getByRole('button', { name: 'Create server' }).click();
    await page.getByRole('heading', { level: 1, name: 'Mine' }).waitFor();
    expect(tb.problems).toEqual([]);
  }, 60_000);

  test('phone-sized screen: no sideways scrolling, everything reachable', async () => {
    // a server to look at, also when this test runs alone
    const admin = await p.admin();
    const list = await p.request('GET', '/api/v1/servers', { token: admin.token });
    if (list.body.data.length === 0) {
      const nodes = await p.request('GET', '/api/v1/nodes', { token: admin.token });
      const bps = await p.request('GET', '/api/v1/blueprints?limit=100', { token: admin.token });
      const demo = bps.body.data.find((b: any) => b.key === 'demo-game');
      const r = await p.request('POST', '/api/v1/servers', { token: admin.token, body: { name: 'Phone demo', nodeId: nodes.body.data[0].id, blueprintId: demo.id } });
      expect(r.status).toBe(201);
    }
    const page = await newPage({ width: 375, height: 740 }, { isMobile: true, hasTouch: true });
    await signIn(page);
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await shot(page, '10-phone-servers');
    await page.locator('li.server-card h2 a').first().click();
    await page.getByRole('log').waitFor();
    await page.getByRole('button', { name: /^Start / }).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    // buttons are big enough to tap
    const box = await page.getByRole('button', { name: /^Start / }).boundingBox();
    expect(box!.height).toBeGreaterThanOrEqual(40);
    await shot(page, '11-phone-server');
    await page.getByRole('link', { name: 'Admin', exact: true }).click();
    await page.getByRole('heading', { level: 3, name: 'local' }).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await shot(page, '12-phone-admin');
    expect(tb.problems).toEqual([]);
  }, 90_000);

  test('keyboard only: sign in with Tab and Enter, focus is visible, sign out from the keyboard', async () => {
    const page = await newPage();
    await page.goto(p.url + '/');
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    const focused = () => page.evaluate(() => ({ label: document.activeElement?.labels?.[0]?.textContent ?? null, tag: document.activeElement?.tagName, text: document.activeElement?.textContent?.trim() }));
    // the sign-in page puts the cursor in the email box
    expect((await focused()).label).toBe('Email');
    // going backwards reaches the skip link, with a visible focus outline
    let guard = 0;
    while ((await focused()).text !== 'Skip to content' && guard++ < 5) await page.keyboard.press('Shift+Tab');
    expect((await focused()).text).toBe('Skip to content');
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(outline).not.toBe('none');
    // and forwards again to the email box
    guard = 0;
    while ((await focused()).label !== 'Email' && guard++ < 10) await page.keyboard.press('Tab');
    expect((await focused()).label).toBe('Email');
    await page.keyboard.type(ADMIN_EMAIL);
    await page.keyboard.press('Tab');
    expect((await focused()).label).toBe('Password');
    await page.keyboard.type(ADMIN_PASSWORD);
    await shot(page, '20-keyboard-sign-in');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'All servers' }).waitFor();
    // focus moved to the new page's heading
    expect((await focused()).tag).toBe('H1');
    // reach "Sign out" backwards with Shift+Tab and press it with Enter
    guard = 0;
    while ((await focused()).text !== 'Sign out' && guard++ < 15) await page.keyboard.press('Shift+Tab');
    expect((await focused()).text).toBe('Sign out');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(tb.problems).toEqual([]);
  }, 60_000);

  test('signing out while the live connection is still being made leaves no uncaught error', async () => {
    const admin = (await p.admin()).token;
    await createRecordsOnlyServer(p, admin, admin, 'watched card'); // its card's live status opens the page's socket
    const page = await newPage();
    // the page's GraphQL socket opens but is never acknowledged: its connection stays under way
    const held: WebSocketRoute[] = [];
    await page.routeWebSocket(/\/graphql$/, (ws) => void held.push(ws));
    await signIn(page);
    await until(() => held.length > 0 || null, 10_000, "the page's live connection");
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    // the panel refuses the ended session's connection
    for (const ws of held) await ws.close({ code: 4401, reason: 'Unauthorized' });
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 200)));
    expect(tb.problems).toEqual([]);
  }, 60_000);

  test('sign-in with a crafted ?next= goes to the servers page, never elsewhere', async () => {
    for (const next of ['/\\evil.example/', '/\t/evil.example/', '//evil.example/', 'https://evil.example/']) {
      const page = await newPage();
      await page.goto(`${p.url}/sign-in?next=${encodeURIComponent(next)}`);
      await page.getByLabel('Email').fill(ADMIN_EMAIL);
      await page.getByLabel('Password').fill(ADMIN_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'All servers' }).waitFor();
      expect(new URL(page.url()).origin).toBe(new URL(p.url).origin);
    }
    expect(tb.problems).toEqual([]);
  }, 60_000);
});
