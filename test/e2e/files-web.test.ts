/**
 * The file browser of the web page, in headless Chromium against a real node agent and real files:
 * folders and breadcrumbs, an upload dropped on the listing, the editor (CodeMirror) saving a file
 * whose bytes are then read back over REST, rename, compress and decompress, delete, search, and a
 * subuser without file.update who gets a read-only editor and no rename; the SFTP connection details
 * for those holding file.sftp.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { ARTIFACTS, describeWithBrowser, TestBrowser } from '../support/browser.js';
import { createLocalDemoServer } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

const maybe = describeWithBrowser('test/e2e/files-web.test.ts');

maybe('the file browser', () => {
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
    serverId = await createLocalDemoServer(p, admin.token, owner.token, 'Files world');
    await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: viewer.email, permissions: ['file.read', 'file.read-content'] } });
    tb = await TestBrowser.launch();
  }, 120_000);

  afterAll(async () => {
    await tb?.close();
    await p?.stop();
  }, 60_000);

  // prompts carry answers here: each test answers its own dialogs
  const signedInPage = (email: string, password: string) => tb.signedInPage(p.url, email, password, { dialogs: 'manual' });

  /** Answers the next prompt() with `text` (and accepts confirms). */
  const answerNextPrompt = (page: Page, text: string) => page.once('dialog', (d) => void d.accept(text));
  const row = (page: Page, entryPath: string) => page.locator(`tr[data-path="${entryPath}"]`);

  test('folders, an upload dropped on the list, the editor, rename, archives, delete and search', async () => {
    const page = await signedInPage(owner.email, owner.password);
    await page.goto(`${p.url}/servers/${serverId}`);
    await page.getByRole('link', { name: 'Files' }).click();
    await page.getByRole('navigation', { name: 'Folder' }).waitFor();
    // the tabs are styled as tabs (their class used to be written as a `classname` attribute)
    const tab = page.getByRole('navigation', { name: 'Server sections' }).getByRole('link', { name: 'Files' });
    expect([await tab.getAttribute('class'), await tab.getAttribute('aria-current')]).toEqual(['tab', 'page']);

    // a new folder, entered through its link
    answerNextPrompt(page, 'config');
    await page.getByRole('button', { name: 'New folder' }).click();
    await row(page, '/config').waitFor();
    await page.getByRole('link', { name: 'config/' }).click();
    await page.waitForURL(/path=%2Fconfig/);
    // the folder's view is drawn once its server is loaded: the listing must be there to drop on
    await page.locator('.file-list').waitFor();

    // a file dropped on the listing is uploaded into this folder
    // (a string: the tests' TypeScript has no DOM types)
    await page.evaluate(`(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['motd=A server\\nmax-players=20\\n'], 'server.properties', { type: 'text/plain' }));
      document.querySelector('.file-list').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    })()`);
    await row(page, '/config/server.properties').waitFor();
    expect((await p.request('GET', F('/contents', 'path=/config/server.properties'), { token: owner.token })).text).toBe('motd=A server\nmax-players=20\n');

    // the editor saves what was typed; the bytes on the node change
    await row(page, '/config/server.properties').getByRole('button', { name: 'server.properties', exact: true }).click();
    const editor = page.getByRole('textbox', { name: 'Contents of server.properties' });
    await editor.waitFor();
    await editor.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('difficulty=hard');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/^Saved at/).waitFor();
    expect((await p.request('GET', F('/contents', 'path=/config/server.properties'), { token: owner.token })).text).toBe('motd=A server\nmax-players=20\ndifficulty=hard');
    await page.screenshot({ path: path.join(ARTIFACTS, 'files-editor.png'), fullPage: true });
    await page.getByRole('button', { name: 'Close' }).click();

    // rename
    answerNextPrompt(page, 'game.properties');
    await page.getByRole('button', { name: 'Rename server.properties' }).click();
    await row(page, '/config/game.properties').waitFor();
    expect((await p.request('GET', F('/contents', 'path=/config/server.properties'), { token: owner.token })).status).toBe(404);

    // back to the root through the breadcrumbs; compress the folder, delete it, unpack the archive
    await page.getByRole('navigation', { name: 'Folder' }).getByRole('link', { name: 'Files' }).click();
    await row(page, '/config').waitFor();
    await row(page, '/config').getByRole('checkbox').check();
    await page.getByRole('button', { name: 'Compress selected' }).click();
    const archive = page.locator('tr[data-path^="/archive-"]');
    await archive.waitFor();
    const archivePath = (await archive.getAttribute('data-path'))!;
    page.once('dialog', (d) => void d.accept());
    await row(page, '/config').getByRole('button', { name: 'Delete config' }).click();
    await row(page, '/config').waitFor({ state: 'detached' });
    await archive.getByRole('button', { name: /^Decompress/ }).click();
    await row(page, '/config').waitFor();
    expect((await p.request('GET', F('/contents', 'path=/config/game.properties'), { token: owner.token })).text).toContain('difficulty=hard');
    expect(archivePath).toMatch(/\.tar\.gz$/);

    // search finds by name below this folder
    await page.getByRole('searchbox', { name: 'Search file names' }).fill('GAME');
    await page.getByRole('button', { name: 'Search' }).click();
    await row(page, '/config/game.properties').waitFor();
    await page.getByText(/1 found for/).waitFor();
    // how to connect over SFTP, with the fingerprint of the key the node serves
    const details = (await p.request('GET', `/api/v1/servers/${serverId}/sftp`, { token: owner.token })).body.data;
    const sftp = page.getByRole('region', { name: 'SFTP access' });
    await sftp.getByText(`sftp -P ${details.port} ${owner.email}.${serverId.slice(0, 8)}@`).waitFor();
    expect(await sftp.locator('.sftp-fingerprint').textContent()).toBe(details.fingerprint);
    expect(details.fingerprint).toMatch(/^SHA256:/);
    expect(tb.problems).toEqual([]);
  });

  test('a subuser without file.update gets a read-only editor and no rename, upload or delete', async () => {
    await p.request('PUT', F('/contents', 'path=/readme.txt'), { token: owner.token, raw: 'read me', headers: { 'content-type': 'text/plain' } });
    const page = await signedInPage(viewer.email, viewer.password);
    await page.goto(`${p.url}/servers/${serverId}/files`);
    await row(page, '/readme.txt').waitFor();
    expect(await page.getByRole('button', { name: 'Rename readme.txt' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Delete readme.txt' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'New folder' }).count()).toBe(0);
    expect(await page.getByRole('region', { name: 'SFTP access' }).count()).toBe(0);
    await row(page, '/readme.txt').getByRole('button', { name: 'readme.txt', exact: true }).click();
    await page.getByText('Read only').waitFor();
    expect(await page.getByRole('button', { name: 'Save' }).count()).toBe(0);
    expect(await page.getByRole('textbox', { name: 'Contents of readme.txt' }).getAttribute('contenteditable')).toBe('false');
    expect(tb.problems).toEqual([]);
  });
});
