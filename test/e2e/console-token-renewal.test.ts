/**
 * The web page's command socket with a short console token lifetime renews once per token
 * (CONSOLE_TOKEN_TTL_SECONDS, CONTRACT §8, allowed from 10 to 600).
 */
import type { Page } from 'playwright-core';
import { describeWithBrowser, TestBrowser } from '../support/browser.js';
import { blueprintsByKey, localNodeId, waitForStatus } from '../support/fixtures.js';
import { until } from '../support/wait.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestPlatform, type TestPlatform } from '../support/harness.js';

const maybe = describeWithBrowser('test/e2e/console-token-renewal.test.ts');

maybe('web console with CONSOLE_TOKEN_TTL_SECONDS=30', () => {
  let p: TestPlatform;
  let tb: TestBrowser;
  let admin: { token: string };

  beforeAll(async () => {
    p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 3, consoleTokenTtlSeconds: 30 });
    tb = await TestBrowser.launch();
    admin = await p.admin();
  }, 120_000);

  afterAll(async () => {
    await tb?.close();
    await p?.stop();
  }, 60_000);

  test('the command socket renews its token once per lifetime, not in a loop (no burst of consoleToken requests)', async () => {
    const [nodeId, bp] = await Promise.all([localNodeId(p, admin.token), blueprintsByKey(p, admin.token)]);
    const created = await p.request('POST', '/api/v1/servers', { token: admin.token, body: { name: 'ttl', nodeId, blueprintId: bp['shell-command'].id, variables: { COMMAND: 'while read l; do echo "got $l"; done' } } });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    await waitForStatus(p, admin.token, id, 'offline');
    expect((await p.request('POST', `/api/v1/servers/${id}/start`, { token: admin.token })).status).toBe(200);
    await waitForStatus(p, admin.token, id, 'running');

    const page: Page = await tb.signedInPage(p.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    let tokenRequests = 0;
    page.on('request', (r) => {
      if (r.url().endsWith('/graphql') && (r.postData() ?? '').includes('consoleToken')) tokenRequests++;
    });
    let authFrames = 0;
    page.on('websocket', (ws) => ws.on('framesent', (f) => String(f.payload).includes('"type":"auth"') && authFrames++));
    await page.goto(`${p.url}/servers/${id}`);
    await page.locator('.console-terminal .xterm-rows').waitFor();
    const input = page.locator('#console-command');
    await until(() => input.isEnabled(), 20_000, 'the command input');
    await input.fill('hello');
    await input.press('Enter');
    await until(async () => authFrames >= 1, 10_000, 'the command socket');
    // a 30 s token needs one renewal in the next 3 s at most (a sane client renews halfway, at 15 s)
    await new Promise((r) => setTimeout(r, 3000));
    expect(tokenRequests).toBeLessThanOrEqual(2);
    expect(authFrames).toBeLessThanOrEqual(2);
    await p.request('POST', `/api/v1/servers/${id}/kill`, { token: admin.token });
  }, 120_000);
});
