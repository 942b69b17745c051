import { z } from 'zod';
import { parseInput } from './common.js';

/**
 * An integer query parameter (a plain decimal integer in its text), `def` when absent or empty,
 * documented (OpenAPI) as the integer it is, with its bounds, its default and `description`.
 */
export const intParam = (name: string, def: number, min: number, max: number | undefined, description: string) =>
  z
    .union([z.string(), z.number()], { message: `${name} must be an integer` })
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return def;
      const s = String(v);
      const n = /^[0-9]+$/.test(s) ? Number(s) : NaN;
      if (!Number.isSafeInteger(n) || n < min || (max !== undefined && n > max)) {
        ctx.addIssue({ code: 'custom', message: max === undefined ? `must be an integer >= ${min}` : `must be an integer from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    })
    .meta({ type: 'integer', minimum: min, ...(max === undefined ? {} : { maximum: max }), default: def, description });

export const paginationQuery = z.object({
  page: intParam('page', 1, 1, Number.MAX_SAFE_INTEGER, 'Page number, from 1 to 9007199254740991 (2^53 − 1, the largest integer a JSON number carries exactly, so that `meta.page` gives it back as sent). A page past the end returns `data: []` with the true `meta.total`. Anything else (0, `abc`, `1.5`, a larger number) is a 422.'),
  limit: intParam('limit', 20, 1, 100, 'Items per page, 1..100. Anything else (0, 101, `abc`, `1.5`) is a 422.'),
});

export interface Page {
  page: number;
  limit: number;
  offset: number;
}

export interface PageMeta {
  total: number;
  page: number;
  limit: number;
}

export interface Paginated<T> {
  items: T[];
  meta: PageMeta;
}

export function parsePagination(query: unknown): Page {
  const q = (query ?? {}) as Record<string, unknown>;
  const { page, limit } = parseInput(paginationQuery, { page: single(q.page), limit: single(q.limit) });
  return { page, limit, offset: (page - 1) * limit };
}

/** `?page=1&page=2` arrives as an array: that is not an integer. */
function single(v: unknown): unknown {
  return Array.isArray(v) ? 'not-an-integer' : v;
}
