/**
 * A second day of using the web page, in headless Chromium against a real node agent: what a probe
 * found. A refused backup delete leaves its row; a refused "Back up now" keeps the name typed; the
 * Edit form of a schedule has ids of its own (the New schedule form's labels stay on their fields) and a
 * Cancel; "Run now" follows the run to its end. The browser's Back with unsaved editor changes asks
 * first (and stays, the address with it, when told to); after Save the file's row shows its new size;
 * the upload picker is emptied after each pick; renaming the file open in the editor takes the
 * editor along. On a 390 px phone, long backup and schedule names wrap. A subuser without
 * backup.read opening the Backups address is told which key is missing, with no empty table.
 */
import type { Page } from 'playwright-core';
import { describeWithBrowser, horizontalOverflow, webWorld } from '../support/browser.js';
import { until } from '../support/wait.js';

// page.evaluate() callbacks run in the browser; this file is type-checked without the DOM lib

const maybe = describeWithBrowser('test/e2e/web-day-two.test.ts');
const XSS = '<img src=x onerror=alert(1)>';
const LONG = 'a_very_long_world_save_name_without_any_spaces_' + 'x'.repeat(150);

maybe('the web page through a day, two: backups and schedules', () => {
  const w = webWorld('Day two world');
  const B = (sub = '') => `/api/v1/servers/${w.serverId}/backups${sub}`;

  async function backup(name: string): Promise<string> {
    const r = await w.p.request('POST', B(), { token: w.owner.token, body: { name } });
    expect(r.status).toBe(201);
    const id = r.body.data.id as string;
    await until(async () => (await w.p.request('GET', B(`/${id}`), { token: w.owner.token })).body.data.status === 'completed', 30_000, 'the backup');
    return id;
  }

  const backupRow = (page: Page, name: string) => page.locator('tr[data-backup]', { hasText: name });

  beforeAll(async () => {
    await until(async () => (await w.p.request('GET', `/api/v1/servers/${w.serverId}`, { token: w.owner.token })).body.data.status === 'offline', 30_000, 'the install');
  }, 60_000);

  test('a backup whose delete is refused stays listed (the row is not removed under the error)', async () => {
    await backup('Keep me');
    const helper = await w.p.newUser('Backup helper');
    const r = await w.p.request('POST', `/api/v1/servers/${w.serverId}/subusers`, { token: w.owner.token, body: { email: helper.email, permissions: ['backup.read', 'backup.delete'] } });
    expect(r.status).toBe(201);
    const page = await w.tb.signedInPage(w.p.url, helper.email, helper.password);
    await page.goto(`${w.p.url}/servers/${w.serverId}/backups`);
    await backupRow(page, 'Keep me').getByRole('button', { name: 'Delete Keep me' }).waitFor();
    // the owner takes the key back meanwhile: the delete is refused
    const patch = await w.p.request('PATCH', `/api/v1/servers/${w.serverId}/subusers/${helper.user.id}`, { token: w.owner.token, body: { permissions: ['backup.read'] } });
    expect(patch.status).toBe(200);
    await backupRow(page, 'Keep me').getByRole('button', { name: 'Delete Keep me' }).click();
    await page.getByRole('alert').filter({ hasText: /Delete failed/ }).waitFor();
    await page.waitForTimeout(500);
    // the backup still exists on the panel...
    const list = await w.p.request('GET', B(), { token: w.owner.token });
    expect(list.body.data.some((b: { name: string }) => b.name === 'Keep me')).toBe(true);
    // ...so the page must still list it
    expect(await backupRow(page, 'Keep me').count()).toBe(1);
  }, 90_000);

  test('in the schedules tab, the New schedule form keeps its labels while a schedule is being edited', async () => {
    const r = await w.p.request('POST', `/api/v1/servers/${w.serverId}/schedules`, {
      token: w.owner.token,
      body: { name: 'Nightly', cron: '0 4 * * *', timezone: 'UTC', tasks: [{ action: 'command', payload: { command: 'say hi' }, offsetSeconds: 0 }] },
    });
    expect(r.status).toBe(201);
    const page = await w.tb.signedInPage(w.p.url, w.owner.email, w.owner.password);
    await page.goto(`${w.p.url}/servers/${w.serverId}/schedules`);
    const create = page.getByRole('form', { name: 'New schedule' });
    await create.waitFor();
    await page.getByRole('button', { name: 'Edit Nightly' }).click();
    const edit = page.getByRole('form', { name: 'Edit Nightly' });
    await edit.waitFor();
    // clicking the "Name" label of the new-schedule form and typing names the new schedule, not the edited one
    await create.locator('label', { hasText: /^Name$/ }).click();
    await page.keyboard.type('Weekly');
    expect(await create.locator('input[name=name]').inputValue()).toBe('Weekly');
    expect(await edit.locator('input[name=name]').inputValue()).toBe('Nightly');
  }, 60_000);

  test('a schedule opened with Edit can be put back without saving (a Cancel)', async () => {
    const r = await w.p.request('POST', `/api/v1/servers/${w.serverId}/schedules`, {
      token: w.owner.token,
      body: { name: 'Restart daily', cron: '0 6 * * *', timezone: 'UTC', tasks: [{ action: 'command', payload: { command: 'say bye' }, offsetSeconds: 0 }] },
    });
    expect(r.status).toBe(201);
    const page = await w.tb.signedInPage(w.p.url, w.owner.email, w.owner.password);
    await page.goto(`${w.p.url}/servers/${w.serverId}/schedules`);
    await page.getByRole('button', { name: 'Edit Restart daily' }).click();
    const edit = page.getByRole('form', { name: 'Edit Restart daily' });
    await edit.waitFor();
    await edit.locator('input[name=name]').fill('Oops');
    // changed their mind: Cancel puts the card back as it was, nothing saved
    await edit.getByRole('button', { name: /cancel/i }).click({ timeout: 3000 });
    const card = page.getByRole('region', { name: 'Schedule Restart daily' });
    await card.waitFor({ timeout: 3000 });
    expect(await edit.count()).toBe(0);
    expect(await card.getByRole('heading', { level: 2 }).innerText()).toBe('Restart daily');
    const again = await w.p.request('GET', `/api/v1/servers/${w.serverId}/schedules/${r.body.data.id}`, { token: w.owner.token });
    expect(again.body.data.name).toBe('Restart daily');
  }, 60_000);

  test('"Run now" of a schedule whose tasks take a few seconds shows the run finished without a reload', async () => {
    const r = await w.p.request('POST', `/api/v1/servers/${w.serverId}/schedules`, {
      token: w.owner.token,
      body: { name: 'Slow one', cron: '0 5 * * *', timezone: 'UTC', tasks: [{ action: 'command', payload: { command: 'say 1' }, offsetSeconds: 0, continueOnFailure: true }, { action: 'command', payload: { command: 'say 2' }, offsetSeconds: 3, continueOnFailure: true }] },
    });
    expect(r.status).toBe(201);
    const sid = r.body.data.id as string;
    const page = await w.tb.signedInPage(w.p.url, w.owner.email, w.owner.password);
    await page.goto(`${w.p.url}/servers/${w.serverId}/schedules`);
    await page.getByRole('button', { name: 'Run now Slow one' }).click();
    // the panel finishes the run
    await until(async () => {
      const runs = await w.p.request('GET', `/api/v1/servers/${w.serverId}/schedules/${sid}/runs`, { token: w.owner.token });
      const st = runs.body.data?.[0]?.status;
      return st && st !== 'running';
    }, 30_000, 'the run');
    const runs = await w.p.request('GET', `/api/v1/servers/${w.serverId}/schedules/${sid}/runs`, { token: w.owner.token });
    const final = runs.body.data[0].status as string;
    // the page's history follows (it is still showing "running" after several seconds)
    const history = page.getByRole('list', { name: 'Runs of Slow one' });
    await page.waitForTimeout(3000);
    expect(await history.locator('li').first().getAttribute('data-status')).toBe(final);
  }, 60_000);

  test('a refused "Back up now" (at the backup limit) keeps the name typed and says what to do', async () => {
    // fill the server up to its limit
    for (let i = 0; i < 10; i++) {
      const r = await w.p.request('POST', B(), { token: w.owner.token, body: { name: `filler ${i}` } });
      if (r.status === 422) break;
      expect(r.status).toBe(201);
      await until(async () => (await w.p.request('GET', B(`/${r.body.data.id}`), { token: w.owner.token })).body.data.status !== 'pending', 30_000, 'the backup');
    }
    const page = await w.tb.signedInPage(w.p.url, w.owner.email, w.owner.password);
    await page.goto(`${w.p.url}/servers/${w.serverId}/backups`);
    const form = page.getByRole('form', { name: 'New backup' });
    await form.waitFor();
    await form.getByLabel('Name').fill('Before the big mod update');
    await form.getByRole('button', { name: 'Back up now' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toMatch(/delete one first/);
    await page.waitForTimeout(300);
    expect(await form.getByLabel('Name').inputValue()).toBe('Before the big mod update');
  }, 180_000);
});

maybe('the web page through a day, two: the file editor and uploads', () => {
  const w = webWorld('Editor world');
  const F = (sub: string, q = '') => `/api/v1/servers/${w.serverId}/files${sub}${q ? `?${q}` : ''}`;
  const put = async (path: string, text: string) =>
    expect((await w.p.request('PUT', F('/contents', `path=${encodeURIComponent(path)}`), { token: w.owner.token, raw: text, headers: { 'content-type': 'text/plain' } })).status).toBeLessThan(300);
  const row = (page: Page, path: string) => page.locator(`tr[data-path="${path}"]`);

  beforeAll(async () => {
    await until(async () => (await w.p.request('GET', `/api/v1/servers/${w.serverId}`, { token: w.owner.token })).body.data.status === 'offline', 30_000, 'the install');
  }, 60_000);

  async function openInEditor(page: Page, name: string, text: string) {
    await row(page, `/${name}`).getByRole('button', { name, exact: true }).click();
    const editor = page.getByRole('textbox', { name: `Contents of ${name}` });
    await editor.waitFor();
    await editor.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type(text);
  }

  test("the browser's Back button with unsaved changes in the editor asks before dropping them", async () => {
    await put('/motd.txt', 'Welcome\n');
    const page = await w.tb.signedInPage(w.p.url, w.owner.email, w.owner.password, { dialogs: 'manual' });
    const dialogs: string[] = [];
    let leave = false;
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void (leave ? d.accept() : d.dismiss()); // first "stay": keep my changes
    });
    await page.goto(`${w.p.url}/servers/${w.serverId}/backups`);
    await page.getByRole('navigation', { name: 'Server sections' }).getByRole('link', { name: 'Files', exact: true }).click();
    await row(page, '/motd.txt').waitFor();
    await openInEditor(page, 'motd.txt', 'Have fun!');
    // the user presses Back (an in-page history entry: popstate)
    await page.evaluate('history.back()');
    await page.waitForTimeout(1500);
    expect(dialogs.length).toBeGreaterThan(0);
    // the changes are still there, in the editor, and the address is still the files'
    expect(await page.getByRole('textbox', { name: 'Contents of motd.txt' }).count()).toBe(1);
    expect(new URL(page.url()).pathname).toBe(`/servers/${w.serverId}/files`);
    // Back again, and this time drop them: the backups page
    leave = true;
    await page.evaluate('history.back()');
    await page.getByRole('form', { name: 'New backup' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/servers/${w.serverId}/backups`);
    expect(dialogs.length).toBe(2);
  }, 60_000);

  test("after Save, the file's row shows its new size", async () => {
    await put('/notes.txt', 'hi\n');
    const page = await w.tb.signedInPage(w.p.url, w.owner.email, w.owner.password);
    await page.goto(`${w.p.url}/servers/${w.serverId}/files`);
    await row(page, '/notes.txt').waitFor();
    expect(await row(page, '/notes.txt').locator('td').nth(2).innerText()).toBe('3 B');
    await openInEditor(page, 'notes.txt', 'x'.repeat(2000));
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/^Saved at/).waitFor();
    const onDisk = (await w.p.request('GET', F('/contents', 'path=/notes.txt'), { token: w.owner.token })).text as string;
    expect(onDisk.length).toBeGreaterThan(2000);
    await page.waitForTimeout(1500);
    expect(await row(page, '/notes.txt').locator('td').nth(2).innerText()).toBe(`${(onDisk.length / 1024).toFixed(1)} KiB`);
  }, 60_000);

  test('the same file picked again in "Upload files" is uploaded again (the picker is emptied after each pick)', async () => {
    const page = await w.tb.signedInPage(w.p.url, w.owner.email, w.owner.password);
    await page.goto(`${w.p.url}/servers/${w.serverId}/files`);
    const picker = page.getByLabel('Upload files');
    await picker.waitFor({ state: 'attached' });
    await picker.setInputFiles({ name: 'pack.txt', mimeType: 'text/plain', buffer: Buffer.from('one\n') });
    await page.getByText('Uploaded pack.txt.').waitFor();
    await row(page, '/pack.txt').waitFor();
    // a picker still holding pack.txt would not tell the page when the user picks pack.txt again
    expect(await picker.inputValue()).toBe('');
    await picker.setInputFiles({ name: 'pack.txt', mimeType: 'text/plain', buffer: Buffer.from('two\n') });
    await until(async () => (await w.p.request('GET', F('/contents', 'path=/pack.txt'), { token: w.owner.token })).text === 'two\n', 15_000, 'the second upload');
    expect(await picker.inputValue()).toBe('');
  }, 60_000);

  test('renaming the file open in the editor takes the editor along: Save writes the file under its new name', async () => {
    await put('/draft.txt', 'first\n');
    const page = await w.tb.signedInPage(w.p.url, w.owner.email, w.owner.password, { dialogs: 'manual' });
    page.on('dialog', (d) => void (d.type() === 'prompt' ? d.accept('final.txt') : d.accept()));
    await page.goto(`${w.p.url}/servers/${w.serverId}/files`);
    await row(page, '/draft.txt').waitFor();
    await openInEditor(page, 'draft.txt', 'second');
    await row(page, '/draft.txt').getByRole('button', { name: 'Rename draft.txt' }).click();
    await row(page, '/final.txt').waitFor();
    // the editor is on the new path, the changes not yet saved still in it
    const panel = page.getByRole('region', { name: 'Editor' });
    await panel.getByRole('heading', { name: '/final.txt' }).waitFor();
    const editor = page.getByRole('textbox', { name: 'Contents of final.txt' });
    expect(await editor.innerText()).toContain('second');
    await panel.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/^Saved at/).waitFor();
    expect((await w.p.request('GET', F('/contents', 'path=/final.txt'), { token: w.owner.token })).text).toBe('first\nsecond');
    // no file is made again under the old name
    expect((await w.p.request('GET', F('/contents', 'path=/draft.txt'), { token: w.owner.token })).status).toBe(404);
    expect(await row(page, '/draft.txt').count()).toBe(0);
  }, 60_000);
});

maybe('the web page through a day, two: long names on a phone', () => {
  const w = webWorld('Names world');

  const overflow = (page: Page) => horizontalOverflow(page, '.table-scroll, .xterm, pre');

  beforeAll(async () => {
    const { p, owner, serverId } = w;
    await until(async () => (await p.request('GET', `/api/v1/servers/${serverId}`, { token: owner.token })).body.data.status === 'offline', 30_000, 'the install');
    for (const name of [LONG, XSS.replace(/\//g, '_'), 'ünïcødé wörld 世界 🎮.txt'])
      expect((await p.request('PUT', `/api/v1/servers/${serverId}/files/contents?path=${encodeURIComponent('/' + name)}`, { token: owner.token, raw: 'x', headers: { 'content-type': 'text/plain' } })).status).toBeLessThan(300);
    const b = await p.request('POST', `/api/v1/servers/${serverId}/backups`, { token: owner.token, body: { name: LONG.slice(0, 100) } });
    expect(b.status).toBe(201);
    await until(async () => (await p.request('GET', `/api/v1/servers/${serverId}/backups/${b.body.data.id}`, { token: owner.token })).body.data.status === 'completed', 30_000, 'the backup');
    await p.request('POST', `/api/v1/servers/${serverId}/backups`, { token: owner.token, body: { name: XSS } });
    const s = await p.request('POST', `/api/v1/servers/${serverId}/schedules`, { token: owner.token, body: { name: LONG.slice(0, 100), cron: '0 4 * * *', timezone: 'UTC', tasks: [{ action: 'command', payload: { command: LONG }, offsetSeconds: 0 }] } });
    expect(s.status).toBe(201);
    await p.request('POST', `/api/v1/servers/${serverId}/schedules`, { token: owner.token, body: { name: XSS, cron: '0 4 * * *', timezone: 'UTC', tasks: [{ action: 'command', payload: { command: XSS }, offsetSeconds: 0 }] } });
  }, 90_000);

  // /files and /activity fit (checked); the backups table and the schedule cards do not wrap long names
  for (const tab of ['/backups', '/schedules'])
    test(`on a 390 px phone, ${tab} with very long names fits the screen`, async () => {
      const { p, tb, owner, serverId } = w;
      const page = await tb.signedInPage(p.url, owner.email, owner.password, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
      let alerted = false;
      page.on('dialog', () => (alerted = true));
      await page.goto(`${p.url}/servers/${serverId}${tab}`);
      await page.locator('nav.tabs').waitFor();
      await page.waitForTimeout(1500);
      expect(alerted).toBe(false);
      expect(await overflow(page)).toEqual({ scrollWidth: 390, width: 390, past: [] });
    }, 60_000);
});

maybe('the web page through a day, two: a subuser at a section they may not open', () => {
  const w = webWorld('Friends world');

  for (const [tab, key, table] of [
    ['backups', 'backup.read', 'table.backups'],
    // /schedules and /users already say "You need the ... permission" without an empty list (checked)
  ] as const)
    test(`without ${key}, /${tab} says which key is missing, with no empty list`, async () => {
      const friend = await w.p.newUser(`Friend ${tab}`);
      const r = await w.p.request('POST', `/api/v1/servers/${w.serverId}/subusers`, { token: w.owner.token, body: { email: friend.email, permissions: ['file.read'] } });
      expect(r.status).toBe(201);
      const page = await w.tb.signedInPage(w.p.url, friend.email, friend.password);
      await page.goto(`${w.p.url}/servers/${w.serverId}/${tab}`);
      await page.getByRole('navigation', { name: 'Server sections' }).waitFor();
      await page.waitForTimeout(2000);
      const text = await page.locator('main').innerText();
      expect(text).toContain(`"${key}" permission`);
      expect(text).not.toMatch(/Live updates stopped/);
      expect(await page.locator(table).count()).toBe(0);
    }, 60_000);
});
