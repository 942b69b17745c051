/**
 * The Blueprints screen of the administration in headless Chromium, against a real panel and database:
 * a real Pterodactyl egg (Paper) imported from its file with its warnings shown, and pasted as YAML, an edit saved (seen
 * over REST), refusals next to their fields, a blueprint in use that cannot be deleted, a created one
 * deleted; built-in blueprints read-only; the screen closed to users who are not administrators.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { stringify } from 'yaml';
import { ARTIFACTS, describeWithBrowser, TestBrowser } from '../support/browser.js';
import { EGGS_DIR } from '../support/eggs.js';
import { createNode } from '../support/fixtures.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestPlatform, type TestPlatform } from '../support/harness.js';

const maybe = EGGS_DIR ? describeWithBrowser('test/e2e/admin-blueprints.test.ts') : describe.skip;
if (!EGGS_DIR) console.warn('[tests] SKIPPED: test/e2e/admin-blueprints.test.ts needs the Pterodactyl eggs in ../shared/eggs/pterodactyl (or EGGS_DIR)');

maybe('the Blueprints screen of the administration', () => {
  let p: TestPlatform;
  let tb: TestBrowser;
  let admin: { token: string };
  let user: { token: string; email: string; password: string };
  let nodeId: string;

  beforeAll(async () => {
    p = await startTestPlatform();
    admin = await p.admin();
    user = await p.newUser('Player');
    nodeId = (await createNode(p, admin.token)).id;
    tb = await TestBrowser.launch();
  }, 120_000);

  afterAll(async () => {
    await tb?.close();
    await p?.stop();
  }, 60_000);

  const blueprintByKey = async (key: string) => {
    const r = await p.request('GET', '/api/v1/blueprints?limit=100', { token: admin.token });
    return r.body.data.find((b: { key: string }) => b.key === key) as { id: string; name: string; variables: { key: string; default: string }[] } | undefined;
  };
  const row = (page: Page, key: string) => page.locator(`tr[data-key="${key}"]`);

  async function openScreen(): Promise<Page> {
    const page = await tb.signedInPage(p.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    await page.getByRole('navigation').getByRole('link', { name: 'Admin', exact: true }).click();
    await page.getByRole('link', { name: /^Blueprints/ }).click();
    await page.getByRole('heading', { level: 1, name: 'Blueprints' }).waitFor();
    await page.locator('tr[data-key]').first().waitFor();
    return page;
  }

  test('import the Paper egg from its file: the warnings, then the new blueprint in the list', async () => {
    const page = await openScreen();
    const builtin = page.locator('tr[data-key]', { has: page.locator('.badge', { hasText: 'Built-in' }) }).first();
    await builtin.waitFor();
    expect(await builtin.getByRole('button', { name: /^Delete/ }).count()).toBe(0);

    await page.getByLabel('Or choose an egg file (.json, .yaml)').setInputFiles(path.join(EGGS_DIR!, 'egg-paper.json'));
    await page.getByText('Read egg-paper.json.').waitFor();
    await page.getByRole('button', { name: 'Import egg' }).click();
    const image = page.locator('.import-warnings li[data-field="docker_images"]');
    await image.waitFor();
    expect(await image.textContent()).toContain("the egg's container image is not used");
    await row(page, 'paper').waitFor();
    const imported = (await blueprintByKey('paper'))!;
    expect(imported.variables.map((v) => v.key)).toContain('SERVER_JARFILE');
    expect(await row(page, 'paper').locator('td').nth(2).textContent()).toBe(`${imported.variables.length} variables`);
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-blueprints-import.png'), fullPage: true });

    // broken JSON is stopped in the page; text that is no egg in YAML either is refused by the panel, next to the field
    await page.getByLabel('Egg (JSON or YAML)').fill('{ "name": ');
    await page.getByRole('button', { name: 'Import egg' }).click();
    await page.locator('#egg-json-error').getByText('This is not valid JSON').waitFor();
    expect(await page.getByLabel('Egg (JSON or YAML)').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Egg (JSON or YAML)').fill('not an egg');
    await page.getByRole('button', { name: 'Import egg' }).click();
    await page.locator('#egg-json-error').getByText('must be a YAML mapping').waitFor();
    await page.getByLabel('Egg (JSON or YAML)').fill('name: [unclosed\nmeta: 1');
    await page.getByRole('button', { name: 'Import egg' }).click();
    await page.locator('#egg-json-error').getByText('is not valid YAML').waitFor();

    // the same egg pasted as YAML (as Pelican exports them) makes a second blueprint like the first
    const egg = JSON.parse(readFileSync(path.join(EGGS_DIR!, 'egg-paper.json'), 'utf8'));
    await page.getByLabel('Egg (JSON or YAML)').fill(stringify({ ...egg, name: 'Paper from YAML' }));
    await page.getByRole('button', { name: 'Import egg' }).click();
    await row(page, 'paper-from-yaml').waitFor();
    const fromYaml = (await blueprintByKey('paper-from-yaml'))!;
    expect(fromYaml.variables).toEqual(imported.variables);

    // an egg the panel refuses: its fields are listed
    await page.getByLabel('Egg (JSON or YAML)').fill('{"name": "Broken", "meta": {"version": "PTDL_v9"}}');
    await page.getByRole('button', { name: 'Import egg' }).click();
    await page.locator('.import-errors li').first().waitFor();
    await page.getByRole('alert').filter({ hasText: 'The egg was not imported' }).waitFor();
    expect(await page.getByLabel('Egg (JSON or YAML)').inputValue()).toContain('PTDL_v9');
    expect(tb.problems).toEqual([]);
  });

  test('edit the imported blueprint: a refused value shows next to its field, a good one is saved', async () => {
    const paper = (await blueprintByKey('paper'))!;
    const page = await openScreen();
    await row(page, 'paper').getByRole('link', { name: 'Edit Paper' }).click();
    await page.getByRole('heading', { level: 1, name: 'Paper' }).waitFor();

    await page.getByLabel('Ready pattern').fill('(');
    await page.getByLabel('SERVER_JARFILE rules').fill('required|no_such_rule');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('#bp-ready-error').waitFor();
    expect(await page.locator('#bp-ready-error').textContent()).toBe('is not a valid regular expression');
    expect(await page.getByLabel('Ready pattern').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('SERVER_JARFILE rules').getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('alert').filter({ hasText: 'correct the highlighted fields' }).waitFor();
    expect((await blueprintByKey('paper'))!.name).toBe('Paper');

    await page.getByLabel('Ready pattern').fill('\\)! For help, type ');
    await page.getByLabel('SERVER_JARFILE rules').fill('required|string|max:64');
    await page.getByLabel('Name', { exact: true }).fill('Paper (ours)');
    await page.getByLabel('SERVER_JARFILE default').fill('paper.jar');
    await page.getByLabel('File denylist').fill('server.jar\nconfig/');
    await page.getByRole('button', { name: 'Add a variable' }).click();
    await page.getByLabel(`new variable ${paper.variables.length + 1} key`).fill('MOTD');
    await page.getByLabel('MOTD default').fill('Welcome');
    await page.getByLabel('MOTD: users change it').uncheck();
    await page.getByRole('button', { name: 'Remove DL_PATH' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(await page.locator('[aria-invalid="true"]').count()).toBe(0);
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-blueprint-edit.png'), fullPage: true });

    const saved = await p.request('GET', `/api/v1/blueprints/${paper.id}`, { token: admin.token });
    expect(saved.body.data.name).toBe('Paper (ours)');
    expect(saved.body.data.ready).toBe('\\)! For help, type ');
    expect(saved.body.data.fileDenylist).toEqual(['server.jar', 'config/']);
    const jar = saved.body.data.variables.find((v: { key: string }) => v.key === 'SERVER_JARFILE');
    expect(jar).toMatchObject({ default: 'paper.jar', rules: 'required|string|max:64' });
    expect(saved.body.data.variables.map((v: { key: string }) => v.key)).toEqual([...paper.variables.map((v) => v.key).filter((k) => k !== 'DL_PATH'), 'MOTD']);
    expect(saved.body.data.variables.at(-1)).toMatchObject({ key: 'MOTD', name: 'MOTD', default: 'Welcome', userViewable: true, userEditable: false });

    // the install script, its shell and the configuration files: a placeholder outside the allow-list
    // and broken JSON are refused next to the field; a good list is saved
    const files = page.getByLabel('Configuration files (JSON)');
    const original = JSON.parse(await files.inputValue());
    expect(original).toEqual(saved.body.data.configFiles);
    expect(original.map((f: { file: string }) => f.file)).toContain('server.properties');
    await files.fill(JSON.stringify([{ file: 'server.properties', parser: 'properties', find: { 'server-ip': '{{config.docker.interface}}' } }]));
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('#bp-config-files-error').getByText('{{config.docker.interface}} is not allowed').waitFor();
    await files.fill('[ {');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('#bp-config-files-error').getByText('This is not valid JSON').waitFor();
    const added = { file: 'config/app.xml', parser: 'xml', find: { 'Config.Port': '{{server.build.default.port}}' } };
    await files.fill(JSON.stringify([...original, added], null, 2));
    await page.getByLabel('Install script', { exact: true }).fill('echo installed > done.txt');
    await page.getByLabel('Install script shell').selectOption('bash');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(await page.locator('[aria-invalid="true"]').count()).toBe(0);
    const again = (await p.request('GET', `/api/v1/blueprints/${paper.id}`, { token: admin.token })).body.data;
    expect(again.configFiles).toEqual([...original, added]);
    expect(again).toMatchObject({ install: 'echo installed > done.txt', installShell: 'bash', name: 'Paper (ours)' });
    expect(tb.problems).toEqual([]);
  });

  test('a built-in blueprint is read-only and says why', async () => {
    const page = await openScreen();
    const builtin = page.locator('tr[data-key]', { has: page.locator('.badge', { hasText: 'Built-in' }) }).first();
    await builtin.getByRole('link').first().click();
    await page.getByText('it belongs to the panel').waitFor();
    expect(await page.getByLabel('Startup command').getAttribute('readonly')).not.toBeNull();
    expect(await page.getByRole('button', { name: 'Save' }).count()).toBe(0);
    expect(tb.problems).toEqual([]);
  });

  test('a blueprint in use is not deleted; a created, unused one is', async () => {
    const paper = (await blueprintByKey('paper'))!;
    const server = await p.request('POST', '/api/v1/servers', { token: admin.token, body: { name: 'Paper world', nodeId, blueprintId: paper.id, memory: 64, cpu: 10, disk: 128 } });
    expect(server.status).toBe(201);

    const page = await openScreen();
    await row(page, 'paper').getByRole('button', { name: 'Delete Paper (ours)' }).click();
    await page.getByRole('alert').filter({ hasText: 'Could not delete Paper (ours): Servers use this blueprint: delete them first.' }).waitFor();
    expect(await row(page, 'paper').count()).toBe(1);

    // the create form: a refused key next to its field, then a good one
    await page.getByLabel('Key', { exact: true }).fill('Not A Key');
    await page.getByLabel('Name', { exact: true }).fill('Unused one');
    await page.getByLabel('Startup command').fill('./run --port {{PORT}}');
    await page.getByLabel('Stop command').fill('stop');
    await page.getByRole('button', { name: 'Create blueprint' }).click();
    await page.locator('#new-key-error').waitFor();
    expect(await page.getByLabel('Key', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Key', { exact: true }).fill('unused-one');
    await page.getByRole('button', { name: 'Create blueprint' }).click();
    await page.getByRole('heading', { level: 1, name: 'Unused one' }).waitFor();
    await page.getByText('Blueprint created.').waitFor();
    const unused = (await blueprintByKey('unused-one'))!;
    expect(unused.name).toBe('Unused one');

    await page.getByRole('link', { name: '← Blueprints' }).click();
    await row(page, 'unused-one').getByRole('button', { name: 'Delete Unused one' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted Unused one.' }).waitFor();
    await row(page, 'unused-one').waitFor({ state: 'detached' });
    expect((await p.request('GET', `/api/v1/blueprints/${unused.id}`, { token: admin.token })).status).toBe(404);
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-blueprints-list.png'), fullPage: true });
    expect(tb.problems).toEqual([]);
  });

  test('a user who is not an administrator has no link and is turned away', async () => {
    const page = await tb.signedInPage(p.url, user.email, user.password);
    expect(await page.getByRole('link', { name: 'Admin', exact: true }).count()).toBe(0);
    expect(await page.getByRole('link', { name: /Blueprints/ }).count()).toBe(0);
    await page.goto(`${p.url}/admin/blueprints`);
    await page.getByRole('heading', { level: 1, name: 'Administrators only' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Import egg' }).count()).toBe(0);
    expect(tb.problems).toEqual([]);
  });
});
