/**
 * The web page and the address's `auth` budget (CONTRACT §6: every /auth/* operation spends the
 * client address's 10 a minute), in headless Chromium: loading the page asks who is signed in with
 * `me` (the user's general budget), so reloads do not use up the address's sign-ins; a sign-out the
 * panel refuses (the address's budget spent) says so and leaves the user signed in, as they are.
 */
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { describeWithBrowser, TestBrowser } from '../support/browser.js';

const maybe = describeWithBrowser('test/e2e/auth-budget-web.test.ts');

maybe('the web page and the auth budget', () => {
  let p: TestPlatform;
  let tb: TestBrowser;
  beforeAll(async () => {
    p = await startTestPlatform({ rateLimits: { general: 1000, auth: 4, admin: 1000 } });
    tb = await TestBrowser.launch();
  }, 120_000);
  afterAll(async () => {
    await tb?.close();
    await p?.stop();
  }, 60_000);

  test('reloads do not spend the address\'s sign-ins; a refused sign-out says so and the user stays signed in', async () => {
    const u = await p.newUser('Reloader'); // one sign-up
    const page = await tb.signedInPage(p.url, u.email, u.password); // one sign-in: two of four left
    for (let i = 0; i < 6; i++) {
      await page.reload();
      await page.getByRole('heading', { level: 1 }).filter({ hasText: /servers/i }).waitFor();
    }
    // the address's last sign-ins, spent by someone else behind it
    for (let i = 0; i < 2; i++) await p.request('POST', '/api/v1/auth/signin', { body: { email: 'nobody@example.com', password: 'wrong-password' } });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('alert').filter({ hasText: /Not signed out: .*Too many requests/ }).waitFor();
    expect(page.url()).not.toContain('/sign-in');
    const me = await page.evaluate(async () => (await fetch('/api/v1/users/me')).status);
    expect(me).toBe(200);
    expect(tb.problems).toEqual([]);
  });
});
