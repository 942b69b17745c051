/**
 * The Users, Schedules and Activity tabs and the panel's refusals, in headless Chromium against a real
 * panel and node agent: a refused field is named; a subuser's summary follows a save; the schedule
 * form is usable again after a create; the activity log names the files of a delete; an unreachable
 * node is said once.
 */
import type { Page } from 'playwright-core';
import { describeWithBrowser, webWorld, type TestBrowser } from '../support/browser.js';
import type { TestPlatform } from '../support/harness.js';

const maybe = describeWithBrowser('test/e2e/sections-web.test.ts');

maybe('server sections: refusals, summaries, forms, activity', () => {
  let p: TestPlatform;
  let tb: TestBrowser;
  let owner: { token: string; email: string; password: string };
  let helper: { token: string; email: string; password: string };
  let serverId: string;

  const world = webWorld('Sections world');
  beforeAll(async () => {
    ({ p, tb, owner, serverId } = world);
    helper = await p.newUser('Helper');
    await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: helper.email, permissions: ['websocket.connect', 'file.read'] } });
  });

  const open = async (section: string): Promise<Page> => {
    const page = await tb.signedInPage(p.url, owner.email, owner.password);
    await page.goto(`${p.url}/servers/${serverId}/${section}`);
    return page;
  };

  /** The Users tab with the helper's entry open. */
  const openHelper = async () => {
    const page = await open('users');
    const item = page.locator(`li.subuser[data-email="${helper.email}"]`);
    await item.locator('summary').click();
    return { page, item };
  };

  test('users: a save refreshes the summary', async () => {
    const { page, item } = await openHelper();
    const summary = item.locator('summary');
    expect(await summary.textContent()).toBe(`Helper ${helper.email} · 2 permissions`);
    await item.locator('input[value="control.console"]').check();
    await item.locator('textarea').fill('/data');
    await item.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: `Saved the permissions of ${helper.email}.` }).waitFor();
    expect(await summary.textContent()).toBe(`Helper ${helper.email} · 3 permissions · /data`);
  });

  test('users: a refused folder is named next to the field', async () => {
    const { page, item } = await openHelper();
    await item.locator('textarea').fill('../etc');
    await item.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').filter({ hasText: 'Could not save: correct the highlighted fields and try again.' }).waitFor();
    expect(await item.locator('textarea').getAttribute('aria-invalid')).toBe('true');
    expect(await item.locator('.field-error').textContent()).toMatch(/paths.*: each path must be a folder inside the server \(no "\.\."/);
    // nothing changed on the panel
    const api = await p.request('GET', `/api/v1/servers/${serverId}/subusers`, { token: owner.token });
    expect(api.body.data[0].paths).toEqual(['/data']);
  });

  test('schedules: refused fields are named', async () => {
    const page = await open('schedules');
    const form = page.getByRole('form', { name: 'New schedule' });
    await form.getByLabel('Name').fill('Nightly');
    await form.getByRole('textbox', { name: 'Command or power action' }).fill('say hi');
    await form.getByLabel('Time zone').fill('Mars/Olympus');
    await form.getByRole('button', { name: 'Create schedule' }).click();
    await page.getByRole('alert').filter({ hasText: 'Could not save the schedule: correct the highlighted fields and try again.' }).waitFor();
    expect(await form.getByLabel('Time zone').getAttribute('aria-invalid')).toBe('true');
    expect(await form.locator('#schedule-timezone-error').textContent()).toMatch(/IANA time zone/);

    // a task the panel refuses: no field of the form holds it, the message names it
    await form.getByLabel('Time zone').fill('UTC');
    await form.getByRole('combobox', { name: 'Task action' }).selectOption('power');
    await form.getByRole('textbox', { name: 'Command or power action' }).fill('jump');
    await form.getByRole('button', { name: 'Create schedule' }).click();
    await page.getByRole('alert').filter({ hasText: /Could not save the schedule: .*tasks\.0\S*: / }).waitFor();
    expect(await form.getByLabel('Time zone').getAttribute('aria-invalid')).toBeNull();
    expect((await p.request('GET', `/api/v1/servers/${serverId}/schedules`, { token: owner.token })).body.data).toEqual([]);
  });

  test('schedules: after a create the form is ready for the next one', async () => {
    const page = await open('schedules');
    const form = page.getByRole('form', { name: 'New schedule' });
    const zoneDefault = await form.getByLabel('Time zone').inputValue();
    expect([await form.getByLabel('Cron (minute hour day month weekday)').inputValue(), zoneDefault]).toEqual(['0 4 * * *', expect.stringMatching(/.+/)]);
    await form.getByLabel('Name').fill('Nightly');
    await form.getByLabel('Time zone').fill('UTC');
    await form.getByRole('textbox', { name: 'Command or power action' }).fill('say hi');
    await form.getByRole('button', { name: 'Create schedule' }).click();
    await page.getByRole('region', { name: 'Schedule Nightly' }).waitFor();
    // the form is back at its defaults, and makes the next schedule
    const fresh = page.getByRole('form', { name: 'New schedule' });
    expect([await fresh.getByLabel('Name').inputValue(), await fresh.getByLabel('Cron (minute hour day month weekday)').inputValue(), await fresh.getByLabel('Time zone').inputValue()]).toEqual([
      '',
      '0 4 * * *',
      zoneDefault,
    ]);
    await fresh.getByLabel('Name').fill('Hourly');
    await fresh.getByRole('textbox', { name: 'Command or power action' }).fill('say tick');
    await fresh.getByRole('button', { name: 'Create schedule' }).click();
    await page.getByRole('region', { name: 'Schedule Hourly' }).waitFor();
    const api = await p.request('GET', `/api/v1/servers/${serverId}/schedules`, { token: owner.token });
    expect(api.body.data.map((s: { name: string; cron: string; timezone: string }) => [s.name, s.cron, s.timezone]).sort()).toEqual([
      ['Hourly', '0 4 * * *', zoneDefault],
      ['Nightly', '0 4 * * *', 'UTC'],
    ]);
    expect(tb.problems).toEqual([]);
  });

  test('activity: a delete of files names them (the first few of a long list)', async () => {
    const F = (sub: string, q = '') => `/api/v1/servers/${serverId}/files${sub}${q ? `?${q}` : ''}`;
    const names = Array.from({ length: 7 }, (_, i) => `/old-${i}.log`);
    for (const n of names) await p.request('PUT', F('/contents', `path=${encodeURIComponent(n)}`), { token: owner.token, raw: 'x', headers: { 'content-type': 'text/plain' } });
    expect((await p.request('POST', F('/delete'), { token: owner.token, body: { paths: ['/old-0.log'] } })).status).toBe(204);
    expect((await p.request('POST', F('/delete'), { token: owner.token, body: { paths: names.slice(1) } })).status).toBe(204);
    const page = await open('activity');
    const deletes = page.locator('tr[data-event="server:file.delete"] td.activity-details');
    await deletes.nth(1).waitFor();
    expect(await deletes.allTextContents()).toEqual([
      expect.stringContaining('paths: /old-1.log, /old-2.log, /old-3.log, /old-4.log, /old-5.log and 1 more'),
      expect.stringContaining('paths: /old-0.log'),
    ]);
  });

  test('activity: renames over SFTP name their files (from → to)', async () => {
    const user = (await p.request('GET', '/api/v1/users/me', { token: owner.token })).body.data;
    // an entry as the panel records an SFTP session's renames (src/services/node-agent.service.ts)
    await p.services.activity.record({ event: 'server:file.rename', serverId, user: { id: user.id, email: user.email }, properties: { via: 'sftp', count: 2, renames: [{ from: '/maps/a.dat', to: '/maps/b.dat' }, { from: '/x.txt', to: '/y.txt' }] } });
    const page = await open('activity');
    const renames = page.locator('tr[data-event="server:file.rename"] td.activity-details');
    await renames.first().waitFor();
    expect(await renames.first().textContent()).toContain('renames: /maps/a.dat → /maps/b.dat, /x.txt → /y.txt');
  });

  test('a node that cannot be reached is said once', async () => {
    await p.agent()!.close();
    const page = await open('files');
    const alert = page.getByRole('alert').filter({ hasText: 'Could not open this folder' });
    await alert.waitFor();
    const text = (await alert.textContent())!;
    expect(text.split('cannot be reached').length - 1).toBe(1);
    expect(text).toBe('Could not open this folder: The node hosting this server cannot be reached right now.');
  });
});
