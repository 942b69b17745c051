/** Serving the web page (src/http/web.ts) without a database: built, not built, and what it never answers. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { webRoutes } from '../../src/http/web.js';

async function serve(dir: string | null): Promise<{ url: string; close: () => Promise<void> }> {
  const app = express();
  app.use(webRoutes(dir));
  app.use((_req, res) => res.status(404).json({ error: { code: 'NOT_FOUND', message: 'Not found', details: {} } }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(() => r())) };
}

const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

test('without web/dist, / answers a hint (HTML for browsers, JSON otherwise) and nothing else changes', async () => {
  const s = await serve(null);
  try {
    const page = await fetch(s.url + '/', { headers: html });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('npm run build:web');
    const json = await fetch(s.url + '/');
    expect(((await json.json()) as { api: string }).api).toBe('/api/v1');
    expect((await fetch(s.url + '/servers/x', { headers: html })).status).toBe(404);
  } finally {
    await s.close();
  }
});

test('with a build: assets, index.html for page addresses, API paths and files left alone', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'hostpanel-web-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>t</title><main id="main"></main>');
  writeFileSync(path.join(dir, 'assets', 'app-abc123.js'), 'console.log(1)');
  const s = await serve(dir);
  try {
    const root = await fetch(s.url + '/');
    expect(root.status).toBe(200);
    expect(root.headers.get('cache-control')).toBe('no-cache');
    expect(await root.text()).toContain('id="main"');
    const deep = await fetch(s.url + '/servers/123e4567-e89b-12d3-a456-426614174000', { headers: html });
    expect(deep.status).toBe(200);
    const asset = await fetch(s.url + '/assets/app-abc123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    // not the page: API prefixes, non-HTML clients, missing files, writes
    for (const p of ['/api/v1/nope', '/graphql/x', '/health/x', '/docs/x', '/plants/x']) expect((await fetch(s.url + p, { headers: html })).status).toBe(404);
    expect((await fetch(s.url + '/servers/abc', { headers: { accept: 'application/json' } })).status).toBe(404);
    expect((await fetch(s.url + '/assets/missing.js', { headers: html })).status).toBe(404);
    expect((await fetch(s.url + '/servers', { method: 'POST', headers: html })).status).toBe(404);
  } finally {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
