/**
 * The web page (web/, built by `npm run build:web` into web/dist) served at `/`: hashed assets with a
 * long cache, and index.html for every other browser page address (the page routes with the History API).
 * API paths are never answered here. Without a build, `/` answers a short hint instead.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { Router } from 'express';

/** web/dist seen from src/http (ts-jest, tsx) and from dist/src/http (the compiled panel). */
const CANDIDATES = [path.resolve(__dirname, '../../web/dist'), path.resolve(__dirname, '../../../web/dist')];

export function findWebDist(candidates = CANDIDATES): string | null {
  return candidates.find((d) => existsSync(path.join(d, 'index.html'))) ?? null;
}

/** Paths that belong to the APIs: an unknown one there stays a JSON 404, never the page. */
const API_PREFIXES = ['/api/', '/graphql', '/health', '/docs', '/plants'];

function isApiPath(p: string): boolean {
  return p === '/api' || API_PREFIXES.some((prefix) => p === prefix || p.startsWith(prefix.endsWith('/') ? prefix : prefix + '/'));
}

const HINT_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>HostPanel</title></head>
<body><main><h1>HostPanel</h1>
<p>The web page has not been built. Run <code>npm run build:web</code> (or <code>npm run build</code>) and reload.</p>
<p>The APIs are up: REST at <a href="/api/v1">/api/v1</a>, GraphQL at <a href="/graphql">/graphql</a>, docs at <a href="/docs">/docs</a>.</p>
</main></body></html>`;

export function webRoutes(dir: string | null = findWebDist()): Router {
  const r = Router();
  if (!dir) {
    r.get('/', (req, res) => {
      if (req.accepts(['json', 'html']) === 'html') res.type('html').send(HINT_HTML);
      else res.json({ name: 'HostPanel', web: 'not built: run npm run build:web', api: '/api/v1', graphql: '/graphql', docs: '/docs' });
    });
    return r;
  }
  const indexFile = path.join(dir, 'index.html');
  r.use(
    express.static(dir, {
      index: false,
      redirect: false,
      setHeaders(res, file) {
        // file names under assets/ carry a content hash
        if (file.includes(`${path.sep}assets${path.sep}`)) res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
        else res.setHeader('Cache-Control', 'no-cache');
      },
    }),
  );
  // SPA fallback: a browser asking for a page address gets index.html
  r.use((req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (isApiPath(req.path) || path.extname(req.path)) return next();
    if (req.path !== '/' && req.accepts(['json', 'html']) !== 'html') return next();
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(indexFile, (err) => {
      if (err && !res.headersSent) next(err);
    });
  });
  return r;
}
