import { z } from 'zod';
import { displayName, email, parseInput, password, plainText } from './common.js';
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

/**
 * `PATCH /admin/users/:id`: what an administrator may change of an account. No current password is
 * asked (the administrator is not the account's holder); setting a password ends all the account's sessions.
 */
export const adminUpdateUserInput = z.object({
  name: displayName(100).optional(),
  email: email.optional(),
  password: password.meta({ description: "A new password for the account; ends all of the account's sessions and closes its console sockets and SFTP sessions (its API tokens stay)." }).optional(),
  role: z.enum(['admin', 'user'], { message: 'must be "admin" or "user"' }).meta({ description: 'Taking the role `admin` away closes the account\'s GraphQL sockets, console sockets and SFTP sessions at once; the last administrator keeps it (422 INVALID_STATE).' }).optional(),
});
export type AdminUpdateUserInput = z.infer<typeof adminUpdateUserInput>;
