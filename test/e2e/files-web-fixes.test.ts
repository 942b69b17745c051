/**
 * The file browser's everyday edges, in headless Chromium against a real node agent and real files:
 * a CRLF file keeps its line breaks through the editor; unsaved changes are not dropped without
 * asking (Close, another file, another page, leaving the page); an editor module that cannot be
 * loaded says to reload; a folder of more than one page of entries can be listed to its end; a deep
 * link to a folder opened while signed out comes back to that folder.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Dialog, Page } from 'playwright-core';
import { agentPaths, serverDir } from '../../src/agent/paths.js';
import { describeWithBrowser, webWorld, type TestBrowser } from '../support/browser.js';
import type { TestPlatform } from '../support/harness.js';

// page.evaluate() callbacks run in the browser; this file is type-checked without the DOM lib
declare const document: any;

const maybe = describeWithBrowser('test/e2e/files-web-fixes.test.ts');

maybe('the file browser: line breaks, unsaved changes, paging, deep links', () => {
  let p: TestPlatform;
  let tb: TestBrowser;
  let owner: { token: string; email: string; password: string };
  let serverId: string;
  const F = (sub: string, q = '') => `/api/v1/servers/${serverId}/files${sub}${q ? `?${q}` : ''}`;
  const put = (path: string, raw: string) => p.request('PUT', F('/contents', `path=${encodeURIComponent(path)}`), { token: owner.token, raw, headers: { 'content-type': 'application/octet-stream' } });
  const read = async (path: string) => (await p.request('GET', F('/contents', `path=${encodeURIComponent(path)}`), { token: owner.token })).text;
  const row = (page: Page, entryPath: string) => page.locator(`tr[data-path="${entryPath}"]`);

  const world = webWorld('Edges world');
  beforeAll(async () => {
    ({ p, tb, owner, serverId } = world);
  });

  /** The owner's page on the folder `dir`, listed; every dialog is recorded and answered by `answer`. */
  const openFolder = async (dir: string, dialogs: Dialog[] = [], answer = (d: Dialog) => void d.accept()) => {
    const page = await tb.signedInPage(p.url, owner.email, owner.password, { dialogs: 'manual' });
    page.on('dialog', (d) => {
      dialogs.push(d);
      answer(d);
    });
    await page.goto(`${p.url}/servers/${serverId}/files?path=${encodeURIComponent(dir)}`);
    await page.locator('.file-list [role=status]').filter({ hasText: /entr/ }).waitFor();
    return page;
  };

  /** Opens `name` (in the root) in the editor and types `text` at its end. */
  const edit = async (page: Page, name: string, text: string) => {
    await row(page, `/${name}`).getByRole('button', { name, exact: true }).click();
    const editor = page.getByRole('textbox', { name: `Contents of ${name}` });
    await editor.waitFor();
    await editor.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type(text);
  };

  const save = async (page: Page) => {
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/^Saved at/).waitFor();
  };

  test('a CRLF file saved in the editor keeps CRLF; an LF file stays LF', async () => {
    await put('/start.bat', 'echo one\r\necho two\r\n');
    await put('/run.sh', 'echo one\necho two\n');
    await put('/mixed.txt', 'a\r\nb\nc\rd\n');
    const page = await openFolder('/');
    await edit(page, 'start.bat', 'echo three');
    await page.keyboard.press('Enter');
    await save(page);
    expect(JSON.stringify(await read('/start.bat'))).toBe(JSON.stringify('echo one\r\necho two\r\necho three\r\n'));
    await page.getByRole('button', { name: 'Close' }).click();
    await edit(page, 'run.sh', 'echo three');
    await save(page);
    expect(JSON.stringify(await read('/run.sh'))).toBe(JSON.stringify('echo one\necho two\necho three'));
    // a file of mixed breaks comes back as it was: every break became the first kind
    await page.getByRole('button', { name: 'Close' }).click();
    await edit(page, 'mixed.txt', 'x');
    await save(page);
    expect(JSON.stringify(await read('/mixed.txt'))).toBe(JSON.stringify('a\r\nb\nc\rd\nx'));
    expect(tb.problems).toEqual([]);
  });

  test('a long file name without spaces wraps: the list stays as wide as the page', async () => {
    // one 250-character name made the table 2,680 px wide in a 1,280 px window
    await put(`/${'n'.repeat(250)}.txt`, 'x');
    const page = await openFolder('/');
    const widths = await page.evaluate(() => ({ table: document.querySelector('table.files')!.getBoundingClientRect().width, page: document.documentElement.clientWidth }));
    expect(widths.table).toBeLessThanOrEqual(widths.page);
    await page.close();
  });

  test('a name with a direction override (a server\'s process made it) is shown with the override visible', async () => {
    // `\u202Egnp.exe` read as "exe.png" in the list
    writeFileSync(path.join(serverDir(agentPaths(p.config.dataDir), serverId), '\u202Egnp.exe'), 'x');
    const page = await openFolder('/');
    const cell = row(page, '/\u202Egnp.exe').locator('td').nth(1);
    expect(await cell.innerText()).toBe('\u27E8U+202E\u27E9gnp.exe');
    await page.close();
  });

  test('unsaved changes are not dropped without asking: Close, another file, another page, leaving', async () => {
    await put('/motd.txt', 'hello');
    await put('/other.txt', 'other');
    const dialogs: Dialog[] = [];
    // confirms are declined (the changes are kept); the browser's own question on leaving is answered yes
    const page = await openFolder('/', dialogs, (d) => void (d.type() === 'beforeunload' ? d.accept() : d.dismiss()));
    await edit(page, 'motd.txt', ' and an hour of typing');
    const editor = page.getByRole('textbox', { name: 'Contents of motd.txt' });

    // Close, declined: the editor stays with the typing
    await page.getByRole('button', { name: 'Close' }).click();
    expect(dialogs.map((d) => [d.type(), d.message()])).toEqual([['confirm', 'Discard your unsaved changes to motd.txt?']]);
    expect(await editor.textContent()).toBe('hello and an hour of typing');
    // another file, declined
    await row(page, '/other.txt').getByRole('button', { name: 'other.txt', exact: true }).click();
    expect(dialogs.length).toBe(2);
    expect(await editor.isVisible()).toBe(true);
    // another page of the site, declined
    await page.getByRole('navigation', { name: 'Server sections' }).getByRole('link', { name: 'Console' }).click();
    expect(dialogs.length).toBe(3);
    expect(page.url()).toContain('/files');
    expect(await editor.isVisible()).toBe(true);
    // leaving the page: the browser asks
    const closed = page.waitForEvent('close');
    await page.close({ runBeforeUnload: true });
    await closed;
    expect(dialogs.map((d) => d.type())).toEqual(['confirm', 'confirm', 'confirm', 'beforeunload']);

    // agreeing drops the changes; after a save nothing is asked
    const again = await openFolder('/', dialogs, (d) => void d.accept());
    const asked = dialogs.length;
    await edit(again, 'motd.txt', ' typed');
    await again.getByRole('button', { name: 'Close' }).click();
    await again.getByRole('textbox', { name: 'Contents of motd.txt' }).waitFor({ state: 'detached' });
    expect(dialogs.length).toBe(asked + 1);
    expect(await read('/motd.txt')).toBe('hello');
    await edit(again, 'motd.txt', ' saved');
    await save(again);
    await again.getByRole('button', { name: 'Close' }).click();
    await again.getByRole('textbox', { name: 'Contents of motd.txt' }).waitFor({ state: 'detached' });
    expect(dialogs.length).toBe(asked + 1);
    expect(await read('/motd.txt')).toBe('hello saved');
  });

  test('an editor module that cannot be loaded (the panel was upgraded) says to reload', async () => {
    await put('/notes.txt', 'n');
    const page = await openFolder('/');
    // the module's file is gone, as after an upgrade of the panel while the page was open
    await page.route(/\/assets\/editor-[^/]*\.js$/, (r) => r.fulfill({ status: 404, body: 'not found' }));
    await row(page, '/notes.txt').getByRole('button', { name: 'notes.txt', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'Could not open notes.txt: the editor could not be loaded. Reload the page to try again.' }).waitFor();
  });

  test('a folder of more entries than one page lists them all, a page at a time', async () => {
    await p.request('POST', F('/directory'), { token: owner.token, body: { path: '/many' } });
    const names = Array.from({ length: 1005 }, (_, i) => `f${String(i).padStart(4, '0')}.txt`);
    // every file must be written before the page is opened: a write refused under load (another
    // test file's work on the same machine) is tried again, and what stays refused fails here, named
    const refused: string[] = [];
    const write = async (n: string) => {
      for (let attempt = 0; ; attempt++) {
        const r = await put(`/many/${n}`, 'x');
        if (r.status < 300) return;
        if (attempt === 4) return void refused.push(`${n}: ${r.status} ${r.text.slice(0, 120)}`);
        await new Promise((done) => setTimeout(done, 250 * (attempt + 1)));
      }
    };
    for (let i = 0; i < names.length; i += 20) await Promise.all(names.slice(i, i + 20).map(write));
    expect(refused).toEqual([]);
    const page = await openFolder('/many');
    expect(await page.locator('.file-list [role=status]').textContent()).toMatch(/1000 of 1005 entries are shown/);
    expect(await page.locator('tr[data-path]').count()).toBe(1000);
    await page.getByRole('button', { name: 'Show the next 5' }).click();
    await row(page, '/many/f1004.txt').waitFor();
    expect(await page.locator('tr[data-path]').count()).toBe(1005);
    expect(await page.locator('.file-list [role=status]').textContent()).toBe('1005 entries');
    expect(await page.getByRole('button', { name: /^Show the next/ }).isVisible()).toBe(false);
  }, 180_000);

  test('a deep link to a folder opened while signed out comes back to that folder', async () => {
    await p.request('POST', F('/directory'), { token: owner.token, body: { path: '/plugins' } });
    await put('/plugins/a.jar', 'jar');
    const page = await tb.newPage();
    await page.goto(`${p.url}/servers/${serverId}/files?path=%2Fplugins`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await row(page, '/plugins/a.jar').waitFor();
    expect(new URL(page.url()).search).toBe('?path=%2Fplugins');
  });

  test('a subuser limited to a folder opens it from the Files tab; the folders above it are named, not linked', async () => {
    // the tab led to `/`, refused ("limited to /data; / is outside it"), with no way to /data
    expect((await p.request('POST', F('/directory'), { token: owner.token, body: { path: '/data' } })).status).toBe(201);
    expect((await put('/data/mine.txt', 'mine')).status).toBe(200);
    const sub = await p.newUser('Scoped');
    const share = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: sub.email, permissions: ['file.read', 'file.read-content'], paths: ['/data'] } });
    expect(share.status).toBe(201);
    const page = await tb.signedInPage(p.url, sub.email, sub.password);
    await page.goto(`${p.url}/servers/${serverId}`);
    await page.getByRole('link', { name: 'Files', exact: true }).click();
    await row(page, '/data/mine.txt').waitFor();
    expect(new URL(page.url()).searchParams.get('path')).toBe('/data');
    const crumbs = page.getByRole('navigation', { name: 'Folder' });
    expect(await crumbs.getByRole('link').count()).toBe(0);
    expect(await crumbs.textContent()).toContain('Files');
  });

});
