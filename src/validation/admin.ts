import { z } from 'zod';

const one = (v: unknown) => (Array.isArray(v) ? { __many: true } : v);

/** `GET /admin/users` filters (besides page/limit): `search` matches email or name, case-insensitively. */
export const adminUsersQuery = z.object({
  search: z.preprocess(one, z.string({ message: 'must be a string' }).max(254, 'must be at most 254 characters').optional()).meta({ description: 'Case-insensitive substring of the email or the name.' }),
});

/** Escapes `%`, `_` and `\` so that user input is matched literally by LIKE/ILIKE (escape char `\`). */
export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => '\\' + c);
}
