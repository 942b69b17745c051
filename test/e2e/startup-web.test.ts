/**
 * The Startup tab in headless Chromium: the command with the server's values, the user-viewable
 * variables (a hidden one is not on the page), a refused value shown next to its field, a saved
 * value in the command and over REST; a subuser with startup.read only sees read-only fields and
 * no Save button.
 */
import type { Page } from 'playwright-core';
import { describeWithBrowser, TestBrowser } from '../support/browser.js';
import { createNode } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

const maybe = describeWithBrowser('test/e2e/startup-web.test.ts');

maybe('the Startup tab', () => {
  let p: TestPlatform;
  let tb: TestBrowser;
  let owner: { token: string; email: string; password: string };
  let viewer: { token: string; email: string; password: string };
  let serverId: string;

  beforeAll(async () => {
    p = await startTestPlatform();
    const admin = await p.admin();
    owner = await p.newUser('Owner');
    viewer = await p.newUser('Viewer');
    const node = await createNode(p, admin.token);
    const bp = await p.request('POST', '/api/v1/admin/blueprints', {
      token: admin.token,
      body: {
        key: 'startup-web',
        name: 'Startup web',
        startup: './game --port {{PORT}} --motd {{MOTD}} --secret {{SECRET}}',
        stop: 'stop',
        variables: [
          { key: 'PORT', name: 'Port', default: '27015', rules: 'required|integer|between:1024,65535' },
          { key: 'MOTD', name: 'Message', default: 'hello', rules: 'string|max:16', userEditable: false },
          { key: 'SECRET', name: 'Secret', default: 'hunter2', rules: 'string', userViewable: false },
        ],
      },
    });
    const made = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'Startup world', nodeId: node.id, blueprintId: bp.body.data.id, memory: 64, cpu: 10, disk: 128 } });
    serverId = made.body.data.id;
    await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: viewer.email, permissions: ['startup.read'] } });
    tb = await TestBrowser.launch();
  }, 120_000);

  afterAll(async () => {
    await tb?.close();
    await p?.stop();
  }, 60_000);

  const command = (page: Page) => page.locator('#startup-command');
  const input = (page: Page, key: string) => page.locator(`input[data-variable="${key}"]`);

  test('see the command, have a value refused next to its field, save a good one', async () => {
    const page = await tb.signedInPage(p.url, owner.email, owner.password);
    await page.goto(`${p.url}/servers/${serverId}`);
    await page.getByRole('navigation', { name: 'Server sections' }).getByRole('link', { name: 'Startup' }).click();
    await input(page, 'PORT').waitFor();
    expect(await command(page).textContent()).toBe('./game --port 27015 --motd hello --secret {{SECRET}}');
    expect(await input(page, 'SECRET').count()).toBe(0);
    expect(await page.content()).not.toContain('hunter2');
    expect(await input(page, 'MOTD').getAttribute('readonly')).not.toBeNull();

    await page.getByLabel('Port (PORT)').fill('80');
    await page.getByRole('button', { name: 'Save' }).click();
    const error = page.locator(`#${await input(page, 'PORT').getAttribute('id')}-error`);
    await error.waitFor();
    expect(await error.textContent()).toBe('must be between 1024 and 65535');
    expect(await input(page, 'PORT').getAttribute('aria-invalid')).toBe('true');

    await page.getByLabel('Port (PORT)').fill('30000');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('./game --port 30000 --motd hello').waitFor();
    const saved = await p.request('GET', `/api/v1/servers/${serverId}/startup`, { token: owner.token });
    expect(saved.body.data.variables[0].value).toBe('30000');
    expect(tb.problems).toEqual([]);
  });

  test('a subuser with startup.read sees read-only fields and no Save button', async () => {
    const page = await tb.signedInPage(p.url, viewer.email, viewer.password);
    await page.goto(`${p.url}/servers/${serverId}/startup`);
    await input(page, 'PORT').waitFor();
    expect(await input(page, 'PORT').getAttribute('readonly')).not.toBeNull();
    expect(await page.getByRole('button', { name: 'Save' }).count()).toBe(0);
    expect(tb.problems).toEqual([]);
  });
});
