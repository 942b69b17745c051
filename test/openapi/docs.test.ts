/**
 * Serving the API reference: `GET /api/v1/openapi.json` (public, rate-limit headers, the same bytes
 * as the committed /openapi.json) and the `/docs` page, rendered in a real headless Chromium
 * (Debian's /usr/bin/chromium via playwright-core; skipped when it is missing) under the panel's CSP:
 * every operation of the document is listed, with parameters, body and responses.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { openApiJson } from '../../src/openapi/document.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { operationsOf } from './contract.js';

declare const document: any;

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-quic', '--no-first-run', '--disable-sync'];
const ARTIFACTS = path.resolve(__dirname, '../../test-artifacts/openapi');

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

test('GET /api/v1/openapi.json: no credentials, the generated document, rate-limit headers', async () => {
  const r = await p.request('GET', '/api/v1/openapi.json');
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(r.text).toBe(openApiJson());
  for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(r.headers.get(h)).toMatch(/^\d+$/);
  // a bad credential does not matter here
  expect((await p.request('GET', '/api/v1/openapi.json', { token: 'hps_bogus' })).status).toBe(200);
});

test('GET /docs serves a self-contained page (no CDN, no inline script) under the CSP', async () => {
  const html = await p.request('GET', '/docs');
  expect(html.status).toBe(200);
  expect(html.headers.get('content-type')).toMatch(/^text\/html/);
  expect(html.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
  expect(html.text).not.toMatch(/https?:\/\//);
  expect(html.text).not.toMatch(/<script>(?!<\/script>)|<script(?![^>]*src=)[^>]*>/);
  const js = await p.request('GET', '/docs/docs.js');
  expect(js.status).toBe(200);
  expect(js.headers.get('content-type')).toMatch(/javascript/);
  expect(() => new Function(js.text)).not.toThrow();
  expect((await p.request('GET', '/docs/docs.css')).status).toBe(200);
  expect((await p.request('GET', '/docs/nope')).status).toBe(404);
});

const maybe = existsSync(CHROMIUM) ? describe : describe.skip;
if (!existsSync(CHROMIUM)) console.warn(`docs page browser test skipped: ${CHROMIUM} missing`);

maybe('the /docs page in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS, timeout: 60_000 });
  }, 60_000);
  afterAll(async () => browser?.close().catch(() => undefined));

  test('lists every operation with its details; filtering works; no errors', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`console: ${m.text()}`);
    });
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`HTTP ${r.status()} ${r.url()}`);
    });
    await page.goto(p.url + '/docs');
    await page.waitForSelector('details.op', { timeout: 20_000 });
    const doc = JSON.parse(openApiJson());
    const ops = operationsOf(doc);
    const listed = await page.evaluate(() =>
      Array.from(document.querySelectorAll('details.op > summary')).map((s: any) => s.querySelector('.m').textContent.toUpperCase() + ' ' + s.querySelector('.path').textContent),
    );
    expect(listed.sort()).toEqual(ops.map((o) => `${o.method} ${o.template}`).sort());
    expect(await page.locator('nav a[data-op]').count()).toBe(ops.length);

    // one operation in full: parameters, request body fields, responses with their schemas
    await page.click('#op-createServer > summary');
    const text = await page.locator('#op-createServer .body').textContent() ?? '';
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.locator('#op-createServer').screenshot({ path: path.join(ARTIFACTS, 'docs-createServer.png') });
    for (const s of ['Request body', 'nodeId', 'blueprintId', 'memory', 'MiB', '201', '422', '429', 'X-RateLimit-Limit', 'CAPACITY_EXCEEDED']) expect([s, text.includes(s)]).toEqual([s, true]);
    await page.click('#op-listServers > summary');
    const list = await page.locator('#op-listServers .body').textContent() ?? '';
    for (const s of ['Parameters', 'page', 'limit', 'status', 'nodeId', 'meta']) expect([s, list.includes(s)]).toEqual([s, true]);
    expect(await page.locator('.intro').innerText()).toContain('auth_success');

    await page.fill('#filter', 'plants');
    const visible = await page.evaluate(() => Array.from(document.querySelectorAll('details.op:not(.hidden)')).map((d: any) => d.id));
    expect(visible).toEqual(['op-addPlant']);
    await page.fill('#filter', '');
    await page.screenshot({ path: path.join(ARTIFACTS, 'docs.png') });
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
