/**
 * Inputs of a server's subusers: an existing account's email, the permission keys granted, and the
 * folders their file keys are limited to. Paths are relative to the server's root (a leading `/` is
 * that root) and are stored normalised (`/plugins/x`); `..`, NUL, backslashes and control characters
 * are refused, since a scope must name a folder inside the server.
 */
import { z } from 'zod';
import { isPermissionKey, PERMISSION_KEYS } from '../permissions/keys.js';
import { email, isWellFormed } from './common.js';

export const MAX_SCOPE_PATHS = 50;
const MAX_PATH_LENGTH = 4096;
const PATH_CONTROL = /[\u0000-\u001F\u007F\\]/;

/** `a//b/./c/` → `/a/b/c`; null when a segment is `..` (or the text is not a usable path). */
export function normaliseScope(raw: string): string | null {
  if (!raw.length || raw.length > MAX_PATH_LENGTH || PATH_CONTROL.test(raw) || !isWellFormed(raw)) return null;
  const parts: string[] = [];
  for (const seg of raw.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') return null;
    parts.push(seg);
  }
  return '/' + parts.join('/');
}

export const permissionList = z
  .array(z.string({ message: 'must be a list of permission keys' }), { message: 'must be a list of permission keys' })
  .max(PERMISSION_KEYS.length, `must hold at most ${PERMISSION_KEYS.length} keys`)
  .superRefine((keys, ctx) => {
    const unknown = keys.filter((k) => !isPermissionKey(k));
    if (unknown.length) {
      const shown = unknown.slice(0, 5).map((k) => JSON.stringify(k.slice(0, 40))).join(', ');
      ctx.addIssue({ code: 'custom', message: `unknown permission keys: ${shown} (GET /api/v1/permissions lists them)`, path: [] });
    }
  })
  .transform((keys) => [...new Set(keys)].sort())
  .meta({ example: ['websocket.connect', 'control.console', 'control.start'] });

export const scopePaths = z
  .array(z.string({ message: 'must be a list of folder paths' }), { message: 'must be a list of folder paths' })
  .max(MAX_SCOPE_PATHS, `must hold at most ${MAX_SCOPE_PATHS} paths`)
  .transform((paths, ctx) => {
    const out = new Set<string>();
    for (const p of paths) {
      const n = normaliseScope(p);
      if (n === null) {
        ctx.addIssue({ code: 'custom', message: 'each path must be a folder inside the server (no "..", NUL, backslash or control characters)', path: [] });
        return z.NEVER;
      }
      out.add(n);
    }
    // the root is the whole server, whatever else is named beside it: stored as the whole server is
    return out.has('/') ? [] : [...out].sort();
  })
  .meta({ description: 'Folders, relative to the server root, that the file permissions are limited to. Empty, absent or `/`: the whole server.', example: ['/plugins'] });

export const createSubuserInput = z.object({
  email,
  permissions: permissionList,
  paths: scopePaths.optional(),
});

export const updateSubuserInput = z.object({
  permissions: permissionList.optional(),
  paths: scopePaths.optional(),
});
