/**
 * A server deleted while its pages are open (in another tab, or by an administrator): the panel ends
 * the server's live feeds, and the page says the server is gone instead of showing it "Offline" with
 * buttons that answer "Server not found". The server page gives way to "Server deleted" with the way
 * back; on the server list the card stays where it was, marked Deleted, without its buttons.
 */
import { describeWithBrowser, webWorld } from '../support/browser.js';

const maybe = describeWithBrowser('test/e2e/server-deleted-web.test.ts');

maybe('a server deleted while its pages are open', () => {
  const w = webWorld('Doomed world');

  test('the server page and the list say so, and offer the way back', async () => {
    const { p, tb, owner, serverId } = w;
    const serverPage = await tb.signedInPage(p.url, owner.email, owner.password, { consoleErrors: true });
    await serverPage.goto(`${p.url}/servers/${serverId}`);
    await serverPage.getByRole('heading', { level: 1, name: 'Doomed world' }).waitFor();
    await serverPage.locator('.status-line .status[data-status="offline"]').waitFor();
    const listPage = await tb.signedInPage(p.url, owner.email, owner.password, { consoleErrors: true });
    await listPage.goto(`${p.url}/`);
    const card = listPage.locator(`li[data-server-id="${serverId}"]`);
    await card.getByRole('button', { name: /Start/ }).waitFor();

    const del = await p.request('DELETE', `/api/v1/servers/${serverId}`, { token: owner.token });
    expect(del.status).toBe(204);

    await serverPage.getByRole('heading', { level: 1, name: 'Server deleted' }).waitFor();
    await serverPage.getByRole('status').filter({ hasText: 'Doomed world has been deleted' }).waitFor();
    expect(await serverPage.locator('.card.console, nav.tabs').count()).toBe(0);
    await serverPage.getByRole('link', { name: 'Back to your servers' }).click();
    await serverPage.getByRole('heading', { level: 1, name: 'Your servers' }).waitFor();

    await card.locator('.status[data-status="deleted"]').waitFor();
    expect(await card.getByRole('button').count()).toBe(0);
    expect(await card.getByRole('link', { name: 'Doomed world' }).count()).toBe(0);
    await card.getByRole('status').filter({ hasText: 'Doomed world has been deleted.' }).waitFor();
    expect(tb.problems).toEqual([]);
  });
});
