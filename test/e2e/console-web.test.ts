/**
 * The web console's terminal (xterm.js) in a real headless Chromium (Debian's /usr/bin/chromium
 * through playwright-core) against a real panel and its local node agent: the colours and cursor
 * movement a server prints are drawn, search finds and highlights a line, the selection is copied,
 * identical lines all show, the lines a node drops over its budget are counted on a dim line, so are
 * the lines printed while the page's live connection was down beyond what a reconnect repeats, and a
 * burst of 20,000 lines keeps 10,000 lines of scrollback while the page keeps answering.
 * Needs web/dist (`npm run build:web`). Screenshots go to test-artifacts/web/.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RunningAgent } from '../../src/agent/index.js';
import type { Page } from 'playwright-core';
import { ARTIFACTS, describeWithBrowser, TestBrowser } from '../support/browser.js';
import { ConsoleClient } from '../support/console-client.js';
import { blueprintsByKey, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startRemoteNode } from '../support/remote-node.js';
import { until } from '../support/wait.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestPlatform, type TestPlatform } from '../support/harness.js';

// page.evaluate() callbacks run in the browser; this file is type-checked without the DOM lib
declare const document: any;
declare const navigator: any;
declare function getComputedStyle(el: unknown): { color: string };

const maybe = describeWithBrowser('test/e2e/console-web.test.ts');

/** What the terminal holds: its lines (scrollback and screen, trailing blanks trimmed), its size and selection. */
interface TerminalState {
  lines: string[];
  length: number;
  rows: number;
  scrollback: number;
  selection: string;
  red: string;
}

maybe('web console terminal in headless Chromium', () => {
  let p: TestPlatform;
  let tb: TestBrowser;
  let admin: { token: string };
  let floodNode: { nodeId: string; agent: RunningAgent };
  const agentDir = mkdtempSync(path.join(os.tmpdir(), 'hostpanel-agent-'));

  beforeAll(async () => {
    p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 3 });
    tb = await TestBrowser.launch();
    admin = await p.admin();
    // a node whose line budget lets the whole burst through, so that the page is what is tested
    // (the local node keeps the default budget, CONSOLE_MAX_LINES_PER_SECOND 2000)
    floodNode = await startRemoteNode(p, admin.token, 'no-flood-limit', agentDir, { tuning: { consoleMaxLinesPerSecond: 1_000_000 } });
  }, 120_000);

  afterAll(async () => {
    await tb?.close();
    await floodNode?.agent.close({ stopServers: true });
    await p?.stop();
    rmSync(agentDir, { recursive: true, force: true });
  }, 60_000);

  const shot = (page: Page, name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

  /** A shell-command server printing `command`'s output (on the local node by default); offline and ready to start. */
  async function shellServer(name: string, command: string, node?: string): Promise<string> {
    const [nodeId, bp] = await Promise.all([node ?? localNodeId(p, admin.token), blueprintsByKey(p, admin.token)]);
    const created = await p.request('POST', '/api/v1/servers', { token: admin.token, body: { name, nodeId, blueprintId: bp['shell-command'].id, variables: { COMMAND: command } } });
    expect(created.status).toBe(201);
    await waitForStatus(p, admin.token, created.body.data.id, 'offline');
    return created.body.data.id;
  }

  /**
   * Signs in, opens the server's page and waits until its three subscriptions (console, status, stats)
   * are live; `sent` collects what the page sends over its WebSockets.
   */
  async function openServer(id: string): Promise<{ page: Page; sent: string[] }> {
    const page = await tb.signedInPage(p.url, ADMIN_EMAIL, ADMIN_PASSWORD, { consoleErrors: true });
    const sent: string[] = [];
    page.on('websocket', (ws) => ws.on('framesent', (f) => sent.push(String(f.payload))));
    await page.goto(`${p.url}/servers/${id}`);
    await page.locator('.console-terminal .xterm-rows').waitFor();
    await until(() => p.services.console.hub.subscriberCount(id) === 3, 10_000, "the page's subscriptions");
    return { page, sent };
  }

  const start = async (id: string) => expect((await p.request('POST', `/api/v1/servers/${id}/start`, { token: admin.token })).status).toBe(200);
  const kill = (id: string) => p.request('POST', `/api/v1/servers/${id}/kill`, { token: admin.token });

  const terminal = (page: Page): Promise<TerminalState> =>
    page.evaluate(() => {
      const t = document.querySelector('.console-terminal').terminal;
      const b = t.buffer.active;
      const lines: string[] = [];
      for (let i = 0; i < b.length; i++) lines.push(b.getLine(i).translateToString(true));
      while (lines.length && lines[lines.length - 1] === '') lines.pop();
      return { lines, length: b.length, rows: t.rows, scrollback: t.options.scrollback, selection: t.getSelection(), red: t.options.theme.red };
    });

  /** Waits until `text` is one of the terminal's last 50 lines. */
  const waitForLine = (page: Page, text: string, timeout = 30_000) =>
    page
      .waitForFunction(
        (want: string) => {
          const b = document.querySelector('.console-terminal')?.terminal?.buffer.active;
          for (let i = b ? b.length - 1 : -1; i >= 0 && i >= b.length - 50; i--) if (b.getLine(i).translateToString(true) === want) return true;
          return false;
        },
        text,
        { timeout, polling: 200 },
      )
      .catch(async (err: Error) => {
        const { lines, length } = await terminal(page);
        throw new Error(`${err.message}\n${length} rows in the terminal; its last lines: ${JSON.stringify(lines.slice(-5))}`);
      });

  const rgb = (hex: string) => `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`;

  test('colours are drawn, search finds and highlights a line, the selection is copied', async () => {
    // a carriage return and a cursor move back overwrite what the line printed before them
    const id = await shellServer('colours', "printf 'first line\\n\\033[31mRED-LINE\\033[0m then plain\\nloading 10%%\\rloading 100%%\\nabcdef\\033[3DXYZ\\nlast line\\n'; exec sleep 1000");
    const { page, sent } = await openServer(id);
    // the console is fed in batches
    const subscriptions = sent.filter((f) => f.includes('"subscribe"')).join('\n');
    expect(subscriptions).toContain('consoleBatches(serverId: $serverId)');
    expect(subscriptions).not.toContain('consoleOutput');
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: p.url });
    await start(id);
    await waitForLine(page, 'last line');

    // xterm's DOM renderer draws RED-LINE in the theme's red, and the rest of the line in the default colour
    const red = page.locator('.xterm-rows span', { hasText: /^RED-LINE$/ });
    const state = await terminal(page);
    expect(await red.evaluate((el: unknown) => getComputedStyle(el).color)).toBe(rgb(state.red));
    const plain = page.locator('.xterm-rows span', { hasText: 'then plain' });
    expect(await plain.evaluate((el: unknown) => getComputedStyle(el).color)).not.toBe(rgb(state.red));
    expect(state.lines).toEqual(expect.arrayContaining(['first line', 'RED-LINE then plain', 'loading 100%', 'abcXYZ', 'last line']));
    await shot(page, '30-console-colours');

    // search: the match is selected and highlighted, and counted
    const search = page.getByRole('searchbox', { name: 'Find in the console' });
    await search.fill('red-line');
    await page.locator('.console-search-count', { hasText: '1 of 1' }).waitFor();
    expect((await terminal(page)).selection).toBe('RED-LINE');
    await page.locator('.xterm-find-result-decoration').first().waitFor({ state: 'attached' });
    // three lines hold "line" in some case: Next and Previous move between them
    await search.fill('line');
    const count = page.locator('.console-search-count');
    await count.filter({ hasText: /^[123] of 3$/ }).waitFor();
    const at = await count.textContent();
    await page.getByRole('button', { name: 'Next match' }).click();
    await count.filter({ hasText: /^[123] of 3$/ }).filter({ hasNotText: at! }).waitFor();
    await page.getByRole('button', { name: 'Previous match' }).click();
    await count.filter({ hasText: at! }).waitFor();
    expect((await terminal(page)).selection.toLowerCase()).toBe('line');
    await search.fill('no such text');
    await page.locator('.console-search-count', { hasText: 'No match' }).waitFor();
    await search.press('Escape');
    expect((await terminal(page)).selection).toBe('');
    await shot(page, '31-console-search');

    // a mouse drag over RED-LINE selects it; the Copy button puts it on the clipboard
    const box = (await red.boundingBox())!;
    await page.mouse.move(box.x + 1, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width - 1, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    expect((await terminal(page)).selection).toBe('RED-LINE');
    await page.getByRole('button', { name: 'Copy' }).click();
    await until(() => page.evaluate(() => navigator.clipboard.readText()).then((t: string) => t === 'RED-LINE'), 5_000, 'the copied selection');

    // Ctrl+C in the terminal copies the selection too
    await page.evaluate(() => navigator.clipboard.writeText('something else'));
    const firstRow = (await terminal(page)).lines.indexOf('first line');
    await page.evaluate((row: number) => document.querySelector('.console-terminal').terminal.selectLines(row, row), firstRow);
    await page.locator('.console-terminal textarea').focus();
    await page.keyboard.press('Control+C');
    await until(() => page.evaluate(() => navigator.clipboard.readText()).then((t: string) => t === 'first line'), 5_000, 'the selection copied with Ctrl+C');
    await kill(id);
    expect(tb.problems).toEqual([]);
  }, 120_000);

  test('identical lines printed in one millisecond all show; Clear empties the terminal', async () => {
    const id = await shellServer('ticker', 'for i in $(seq 40); do echo tick; done; i=0; while [ $i -lt 900 ]; do echo "burst $i"; i=$((i+1)); done; echo burst-done; exec sleep 1000');
    const { page } = await openServer(id);
    await start(id);
    await waitForLine(page, 'burst-done');
    const { lines } = await terminal(page);
    expect(lines.filter((l) => l === 'tick')).toHaveLength(40);
    expect(lines.filter((l) => /^burst \d+$/.test(l))).toEqual(Array.from({ length: 900 }, (_, i) => `burst ${i}`));
    const search = page.getByRole('searchbox', { name: 'Find in the console' });
    await search.fill('tick');
    await page.locator('.console-search-count', { hasText: / of 40$/ }).waitFor();
    // Clear empties the terminal and ends the search
    await page.getByRole('button', { name: 'Clear' }).click();
    await until(async () => (await terminal(page)).lines.length === 0, 5_000, 'an empty terminal');
    expect(await search.inputValue()).toBe('');
    expect(await page.locator('.console-search-count').textContent()).toBe('');
    await kill(id);
    expect(tb.problems).toEqual([]);
  }, 90_000);

  test('lines the node drops over its budget show as dim "skipped" lines, every line accounted for', async () => {
    // the node's bucket refills in a second: the last line comes after it
    const id = await shellServer('over budget', "seq -f 'burst %.0f' 1 20000; sleep 1.5; echo burst-done; exec sleep 1000");
    const { page } = await openServer(id);
    await start(id);
    await waitForLine(page, 'burst-done');
    const { lines } = await terminal(page);
    const shown = lines.filter((l) => /^burst \d+$/.test(l)).length;
    const skipped = lines.map((l) => /^… ([\d,]+) lines? skipped \(output over the limit\)$/.exec(l)).filter((m) => m !== null);
    expect(skipped.length).toBeGreaterThan(0);
    expect(shown).toBeLessThan(20_000);
    expect(shown + skipped.reduce((n, m) => n + Number(m[1]!.replace(/,/g, '')), 0)).toBe(20_000);
    // drawn dim (read from the terminal's buffer: the line may have scrolled out of view)
    const dim = await page.evaluate(() => {
      const term = (document.querySelector('.console-terminal') as unknown as { terminal: any }).terminal;
      const buf = term.buffer.active;
      for (let y = 0; y < buf.length; y++) {
        const line = buf.getLine(y);
        if (line && /skipped \(output over the limit\)/.test(line.translateToString(true))) return Boolean(line.getCell(0)?.isDim());
      }
      return null;
    });
    expect(dim).toBe(true);
    await shot(page, '33-console-skipped');
    await kill(id);
    expect(tb.problems).toEqual([]);
  }, 90_000);

  test('lines printed while the live connection was down, beyond the history a reconnect repeats, are counted on a dim line', async () => {
    const id = await shellServer('gap', 'echo ready; while read l; do if [ "$l" = gap ]; then seq -f \'gap %.0f\' 1 400; echo gap-done; fi; done');
    const page = await tb.signedInPage(p.url, ADMIN_EMAIL, ADMIN_PASSWORD, { consoleErrors: false });
    // the page's GraphQL socket goes through here: `down` closes it and refuses new ones until it is up again
    let down = false;
    const open: { close(): Promise<void> }[] = [];
    await page.routeWebSocket(/\/graphql$/, (ws) => {
      if (down) return void ws.close({ code: 1001, reason: 'down' });
      const server = ws.connectToServer();
      open.push({ close: async () => (await ws.close({ code: 1001, reason: 'down' }), await server.close()) });
    });
    await page.goto(`${p.url}/servers/${id}`);
    await page.locator('.console-terminal .xterm-rows').waitFor();
    await until(() => p.services.console.hub.subscriberCount(id) === 3, 10_000, "the page's subscriptions");
    await start(id);
    await waitForLine(page, 'ready');

    down = true;
    for (const c of open.splice(0)) await c.close();
    await until(() => p.services.console.hub.subscriberCount(id) === 0, 10_000, 'the page to be cut off');
    // typed on the node's console channel, which also sees the lines go by
    const t = await p.request('GET', `/api/v1/servers/${id}/console-token`, { token: admin.token });
    const channel = await ConsoleClient.connect(t.body.data.socket, t.body.data.token);
    channel.send({ type: 'command', data: 'gap' });
    await channel.waitFor((m) => m.type === 'console_output' && m.data?.line === 'gap-done');
    channel.close();
    down = false;

    await waitForLine(page, 'gap-done', 30_000);
    const { lines } = await terminal(page);
    const marks = lines.map((l) => /^… ([\d,]+) lines? missed \(the live connection was down or too slow\)$/.exec(l)).filter((m) => m !== null);
    expect(marks).toHaveLength(1);
    const missed = Number(marks[0]![1]!.replace(/,/g, ''));
    const shown = lines.filter((l) => /^gap \d+$/.test(l)).map((l) => Number(l.slice(4)));
    // the history repeated the last lines: gap n..400 follow the mark, and the ones before them are the count
    expect(shown.length).toBeGreaterThan(0);
    expect(shown).toEqual(Array.from({ length: shown.length }, (_, i) => 401 - shown.length + i));
    expect(missed).toBe(400 - shown.length);
    expect(lines.indexOf(marks[0]![0])).toBe(lines.indexOf(`gap ${shown[0]}`) - 1);
    await shot(page, '34-console-missed');
    await kill(id);
  }, 90_000);

  test('a burst of 20,000 lines keeps 10,000 lines of scrollback and the page answers throughout', async () => {
    // 20,000 lines in about a second and a half, in chunks of 1,000: each of the node's 50 ms batches
    // stays well under the 1 MiB a frame from a node to the gateway may carry
    const burst = "for i in $(seq 0 19); do seq -f 'flood %.0f' $((i*1000)) $((i*1000+999)); sleep 0.06; done; echo flood-done; exec sleep 1000";
    const id = await shellServer('flood', burst, floodNode.nodeId);
    const { page } = await openServer(id);
    // the page's main thread answers again and again all through the burst: rendering never holds it
    // for the whole burst. A timer in the page counts its turns from the first flood line drawn to the
    // last (each turn is a moment the page could have answered a click); counted in the page, not by
    // round trips from the test, which a loaded machine makes slow whatever the page does (how fast
    // it answers depends on the machine: measured in the bench, not here)
    await page.evaluate(() => {
      const w = globalThis as unknown as { burstTurns: number; burstDrawn: boolean };
      w.burstTurns = 0;
      w.burstDrawn = false;
      const timer = setInterval(() => {
        const b = (document.querySelector('.console-terminal') as unknown as { terminal?: any } | null)?.terminal?.buffer.active;
        let flood = false;
        for (let i = b ? b.length - 1 : -1; i >= 0 && i >= b.length - 50; i--) {
          const text = b.getLine(i).translateToString(true);
          if (text === 'flood-done') {
            w.burstDrawn = true;
            return clearInterval(timer);
          }
          if (text.startsWith('flood ')) flood = true;
        }
        if (flood) w.burstTurns++;
      }, 10);
    });
    await start(id);
    await waitForLine(page, 'flood-done', 60_000);
    await page.waitForFunction(() => (globalThis as unknown as { burstDrawn: boolean }).burstDrawn, undefined, { timeout: 10_000 });
    const answers = await page.evaluate(() => (globalThis as unknown as { burstTurns: number }).burstTurns);
    expect(answers).toBeGreaterThanOrEqual(3);

    const state = await terminal(page);
    expect(state.scrollback).toBe(10_000);
    expect(state.length).toBe(10_000 + state.rows);
    expect(state.lines.slice(-2)).toEqual(['flood 19999', 'flood-done']);
    // the kept lines are the last ones, in order, none missing
    const floods = state.lines.filter((l) => l.startsWith('flood '));
    const first = Number(floods[0]!.slice(6));
    expect(floods).toEqual(Array.from({ length: 20_000 - first }, (_, i) => `flood ${first + i}`));
    await shot(page, '32-console-flood');

    // and another tab opens at once
    const t0 = Date.now();
    await page.getByRole('navigation', { name: 'Server sections' }).getByRole('link', { name: 'Activity' }).click();
    await page.getByRole('heading', { level: 1, name: 'flood: activity' }).waitFor({ timeout: 5_000 });
    expect(Date.now() - t0).toBeLessThan(5_000);
    await kill(id);
    expect(tb.problems).toEqual([]);
  }, 120_000);
});
