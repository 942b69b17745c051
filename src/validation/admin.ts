import { z } from 'zod';
import { parseInput, plainText } from './common.js';
import { parsePagination, type Page } from './pagination.js';

const one = (v: unknown) => (Array.isArray(v) ? { __many: true } : v);

/** `GET /admin/users` filters (besides page/limit): `search` matches email or name, case-insensitively. */
export const adminUsersQuery = z.object({
  search: z.preprocess(one, plainText(254).optional()).meta({ description: 'Case-insensitive substring of the email or the name.' }),
});

export interface AdminUsersQuery {
  page: Page;
  search?: string;
}

export function parseAdminUsersQuery(raw: unknown): AdminUsersQuery {
  const q = (raw ?? {}) as Record<string, unknown>;
  return { page: parsePagination(q), ...parseInput(adminUsersQuery, { search: q.search }) };
}

/** Escapes `%`, `_` and `\` so that user input is matched literally by LIKE/ILIKE (escape char `\`). */
export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => '\\' + c);
}
