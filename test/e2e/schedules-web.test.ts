/**
 * The Schedules tab in headless Chromium against a real node agent: a schedule made with the form
 * (cron, time zone, a task from the task editor) shows the next five runs in its zone as the panel
 * computes them; a bad expression is explained before saving; run now fills the history; a subuser
 * with schedule.read only sees the schedules and no form or actions.
 */
import { describeWithBrowser, TestBrowser } from '../support/browser.js';
import { createLocalDemoServer } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

const maybe = describeWithBrowser('test/e2e/schedules-web.test.ts');

maybe('the Schedules tab', () => {
  let p: TestPlatform;
  let tb: TestBrowser;
  let owner: { token: string; email: string; password: string };
  let viewer: { token: string; email: string; password: string };
  let serverId: string;

  beforeAll(async () => {
    p = await startTestPlatform({ localAgent: true, agentPort: 0 });
    const admin = await p.admin();
    owner = await p.newUser('Owner');
    viewer = await p.newUser('Viewer');
    serverId = await createLocalDemoServer(p, admin.token, owner.token, 'Scheduled world');
    await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: viewer.email, permissions: ['schedule.read'] } });
    tb = await TestBrowser.launch();
  }, 120_000);

  afterAll(async () => {
    await tb?.close();
    await p?.stop();
  }, 60_000);

  test('make a schedule with the form; its next runs in its zone; run it now', async () => {
    const page = await tb.signedInPage(p.url, owner.email, owner.password, { dialogs: 'manual' });
    await page.goto(`${p.url}/servers/${serverId}`);
    await page.getByRole('navigation', { name: 'Server sections' }).getByRole('link', { name: 'Schedules' }).click();
    const form = page.getByRole('form', { name: 'New schedule' });
    await form.waitFor();
    await form.getByLabel('Name').fill('Nightly restart');
    await form.getByLabel('Cron (minute hour day month weekday)').fill('30 2 * * * *');
    await form.getByText(/five fields/).waitFor();
    await form.getByLabel('Cron (minute hour day month weekday)').fill('30 2 * * *');
    await form.getByLabel('Time zone').fill('Europe/Berlin');
    expect(await form.getByRole('list', { name: 'Next five runs' }).getByRole('listitem').count()).toBe(5);
    await form.getByLabel('Command or power action').fill('say restarting');
    await form.getByRole('button', { name: 'Create schedule' }).click();
    const card = page.getByRole('region', { name: 'Schedule Nightly restart' });
    await card.waitFor();
    // the page's first "next run" is the panel's nextRunAt, in Berlin
    const api = (await p.request('GET', `/api/v1/servers/${serverId}/schedules`, { token: owner.token })).body.data[0];
    expect(api).toMatchObject({ cron: '30 2 * * *', timezone: 'Europe/Berlin', tasks: [{ action: 'command', payload: { command: 'say restarting' } }] });
    const berlin = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', dateStyle: 'full', timeStyle: 'short' }).format(new Date(api.nextRunAt));
    expect(await card.locator('.next-runs li').first().textContent()).toBe(berlin);
    expect(berlin).toMatch(/02:30/);
    await card.getByRole('button', { name: 'Run now Nightly restart' }).click();
    await until(async () => (await card.getByRole('list', { name: 'Runs of Nightly restart' }).textContent())?.includes('manual'), 15_000, 'the run in the history');
    expect(tb.problems).toEqual([]);
  });

  test('a subuser with schedule.read sees the schedules and no form or actions', async () => {
    const page = await tb.signedInPage(p.url, viewer.email, viewer.password, { dialogs: 'manual' });
    await page.goto(`${p.url}/servers/${serverId}/schedules`);
    const card = page.getByRole('region', { name: 'Schedule Nightly restart' });
    await card.waitFor();
    expect(await page.getByRole('form', { name: 'New schedule' }).count()).toBe(0);
    expect(await card.getByRole('button').count()).toBe(0);
    expect(tb.problems).toEqual([]);
  });
});
