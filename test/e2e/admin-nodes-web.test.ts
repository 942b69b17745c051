/**
 * Administration → a node's card → Edit in headless Chromium, against a real panel, database and local
 * node agent: the form opens with the node's values; a rename (to a name with markup, shown as text)
 * and more memory are saved, and only those two fields are sent; another node's name is refused next
 * to Name; on the node `local`, which hosts a server, memory below its allocation is refused with the
 * figure next to Memory, and a rename with the panel's message; nothing refused is saved.
 */
import type { Page } from 'playwright-core';
import { adminWorld, describeWithBrowser } from '../support/browser.js';
import { createLocalDemoServer, createNode, localNodeId } from '../support/fixtures.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from '../support/harness.js';

// the page's globals, inside page.evaluate
declare const window: any;

const XSS = '<img src=x onerror=window.__xss=1>';

describeWithBrowser('test/e2e/admin-nodes-web.test.ts')('editing a node on the administration page', () => {
  const w = adminWorld();

  const node = async (id: string) => (await w.p.request('GET', `/api/v1/nodes/${id}`, { token: w.admin.token })).body.data;
  const card = (page: Page, name: string) => page.locator('li.node-card', { has: page.getByRole('heading', { level: 3, name, exact: true }) });
  const form = (page: Page) => page.locator('form.node-form');
  const input = (page: Page, label: string) => form(page).getByLabel(label, { exact: true });

  /** Signs in as the first administrator, opens Administration and the form of the node named `name`. */
  async function openForm(name: string): Promise<Page> {
    const page = await w.tb.signedInPage(w.p.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    await page.getByRole('navigation').getByRole('link', { name: 'Admin', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Administration' }).waitFor();
    await card(page, name).getByRole('button', { name: `Edit ${name}`, exact: true }).click();
    await form(page).getByRole('heading', { name: `Edit ${name}` }).waitFor();
    return page;
  }

  async function save(page: Page): Promise<void> {
    await form(page).getByRole('button', { name: 'Save', exact: true }).click();
  }

  test('rename and more memory are saved (only they are sent); another node\'s name is refused next to Name', async () => {
    const second = await createNode(w.p, w.admin.token, { name: 'second-node', port: 5099, memory: 1024, disk: 1024 });
    const page = await openForm('second-node');
    expect(await input(page, 'Name').inputValue()).toBe('second-node');
    expect(await input(page, 'Address').inputValue()).toBe('127.0.0.1');
    expect(await input(page, 'Port').inputValue()).toBe('5099');
    expect(await input(page, 'Scheme').inputValue()).toBe('http');
    expect(await input(page, 'Memory (MiB)').inputValue()).toBe('1024');
    expect(await input(page, 'Disk (MiB)').inputValue()).toBe('1024');
    expect(await input(page, 'CPU cores').inputValue()).toBe('4');

    const sent: any[] = [];
    page.on('request', (r) => {
      const body = r.postDataJSON?.();
      if (r.url().endsWith('/graphql') && body?.query?.includes('updateNode')) sent.push(body.variables.input);
    });
    await input(page, 'Name').fill(XSS);
    await input(page, 'Memory (MiB)').fill('2048');
    await save(page);
    await page.getByRole('status').filter({ hasText: `Saved the node ${XSS}.` }).waitFor();
    expect(await form(page).count()).toBe(0);
    expect(sent).toEqual([{ name: XSS, memory: 2048 }]);
    expect(await node(second.id)).toMatchObject({ name: XSS, memory: 2048, disk: 1024, fqdn: '127.0.0.1', port: 5099, scheme: 'http' });
    // the card shows the saved node, its name as text
    await card(page, XSS).getByText('of 2 GiB allocatable').waitFor();
    expect(await page.locator('main img').count()).toBe(0);

    // another node's name: next to Name, nothing saved; Cancel closes the form
    await card(page, XSS).getByRole('button', { name: `Edit ${XSS}`, exact: true }).click();
    await input(page, 'Name').fill('local');
    await input(page, 'Disk (MiB)').fill('4096');
    await save(page);
    await form(page).locator('.field-error').getByText('A node with this name already exists.').waitFor();
    expect(await input(page, 'Name').getAttribute('aria-invalid')).toBe('true');
    expect(await input(page, 'Disk (MiB)').getAttribute('aria-invalid')).toBeNull();
    await form(page).getByRole('alert').filter({ hasText: 'correct the highlighted fields' }).waitFor();
    expect(await node(second.id)).toMatchObject({ name: XSS, disk: 1024 });
    await form(page).getByRole('button', { name: 'Cancel' }).click();
    expect(await form(page).count()).toBe(0);
    expect(await card(page, XSS).getByRole('button', { name: `Edit ${XSS}`, exact: true }).evaluate((el: any) => el === el.ownerDocument.activeElement)).toBe(true);
    expect(await page.evaluate(() => window.__xss)).toBeUndefined();
    expect(w.tb.problems).toEqual([]);
  }, 90_000);

  test('the node `local` with a server: memory below its allocation and a rename are refused, nothing saved', async () => {
    const owner = await w.p.newUser('Owner');
    await createLocalDemoServer(w.p, w.admin.token, owner.token, 'Hosted world');
    const localId = await localNodeId(w.p, w.admin.token);
    const before = await node(localId);
    expect(before.allocated.memory).toBe(256);
    const page = await openForm('local');

    // memory below the 256 MiB its server has: the figure next to Memory and in the message
    await input(page, 'Memory (MiB)').fill('100');
    await save(page);
    await form(page).locator('.field-error').getByText('The servers on this node have 256 MiB of memory allocated').waitFor();
    expect(await input(page, 'Memory (MiB)').getAttribute('aria-invalid')).toBe('true');
    await form(page).getByRole('alert').filter({ hasText: 'Could not save local: The servers on this node have 256 MiB of memory allocated' }).waitFor();
    expect((await node(localId)).memory).toBe(before.memory);

    // a rename: the panel's message says why; Name is marked
    await input(page, 'Memory (MiB)').fill(String(before.memory));
    await input(page, 'Name').fill('renamed-local');
    await save(page);
    await form(page).getByRole('alert').filter({ hasText: 'runs inside the panel (LOCAL_AGENT)' }).waitFor();
    await form(page).locator('.field-error').getByText('cannot change on the node the panel runs').waitFor();
    expect(await input(page, 'Name').getAttribute('aria-invalid')).toBe('true');
    expect(await input(page, 'Memory (MiB)').getAttribute('aria-invalid')).toBeNull();
    expect(await node(localId)).toMatchObject({ name: 'local', memory: before.memory });
    expect(w.tb.problems).toEqual([]);
  }, 120_000);
});
