/**
 * Lists the routes of an Express app by walking its router stack (Express 5 / router 2), e.g. to
 * check that every route of the REST API has an entry in the authorization matrix test.
 */
import type { Express } from 'express';

export interface RouteEntry {
  method: string;
  /** Full path with Express parameters, e.g. `/api/v1/servers/:id`. */
  path: string;
}

interface LayerLike {
  rawPath?: unknown;
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: LayerLike[] };
}

function join(prefix: string, path: string): string {
  const p = (prefix.replace(/\/+$/, '') + '/' + path.replace(/^\/+/, '')).replace(/\/+$/, '');
  return p === '' ? '/' : p;
}

function walk(stack: LayerLike[], prefix: string, out: RouteEntry[]): void {
  for (const layer of stack) {
    if (layer.route) {
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      for (const p of paths) {
        if (typeof p !== 'string') continue;
        for (const [method, on] of Object.entries(layer.route.methods)) {
          if (on && method !== '_all') out.push({ method: method.toUpperCase(), path: join(prefix, p) });
        }
      }
    } else if (layer.handle?.stack && Array.isArray(layer.handle.stack)) {
      const raw = typeof layer.rawPath === 'string' ? layer.rawPath : '/';
      walk(layer.handle.stack, join(prefix, raw), out);
    }
  }
}

/** Every `{ method, path }` of the app whose path starts with `under` (default: the REST API). */
export function listRoutes(app: Express, under = '/api/v1'): RouteEntry[] {
  const router = (app as unknown as { router?: { stack: LayerLike[] }; _router?: { stack: LayerLike[] } }).router ??
    (app as unknown as { _router?: { stack: LayerLike[] } })._router;
  const out: RouteEntry[] = [];
  walk(router?.stack ?? [], '', out);
  const seen = new Set<string>();
  return out
    .filter((r) => r.path === under || r.path.startsWith(under.replace(/\/+$/, '') + '/'))
    .filter((r) => {
      const k = `${r.method} ${r.path}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
}
