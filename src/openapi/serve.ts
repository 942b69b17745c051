/**
 * Serving the API reference: `GET /api/v1/openapi.json` (mounted inside the /api/v1 router, so it
 * gets the X-RateLimit headers and counts in the general bucket like every response there; no
 * credentials needed) and the `/docs` page (static, not rate-limited).
 */
import { Router, type RequestHandler } from 'express';
import { DOCS_CSS, DOCS_HTML, DOCS_JS } from './docs-page.js';
import { openApiJson } from './document.js';

export const openApiDocument: RequestHandler = (_req, res) => {
  res.status(200).type('application/json').set('Cache-Control', 'no-cache').send(openApiJson());
};

export function docsRoutes(): Router {
  const r = Router();
  const send = (type: string, body: string): RequestHandler => (_req, res) => {
    res.status(200).type(type).set('Cache-Control', 'no-cache').send(body);
  };
  r.get('/', send('html', DOCS_HTML));
  r.get('/docs.js', send('application/javascript', DOCS_JS));
  r.get('/docs.css', send('css', DOCS_CSS));
  return r;
}
