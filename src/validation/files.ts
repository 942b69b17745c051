/** Inputs of the file manager (paths are checked by src/files/paths.ts, scopes by the policy). */
import { z } from 'zod';
import { isWellFormed, parseInput, UNICODE_MESSAGE } from './common.js';
import { intParam } from './pagination.js';

const path = z.string({ message: 'must be a path string' }).max(8192, 'must be at most 8192 characters');
export const listQuery = z.object({
  path: path.optional(),
  page: intParam('page', 1, 1, 1_000_000, 'Page number, from 1. Anything but a plain integer in range is a 422.'),
  limit: intParam('limit', 500, 1, 1000, 'Entries per page, 1..1000. Anything else is a 422.'),
});
export const searchQuery = z.object({ path: path.optional(), query: z.string({ message: 'must be a string' }).min(1, 'must not be empty').max(255, 'must be at most 255 characters') });
export type FileListQuery = z.output<typeof listQuery>;
export type FileSearchQuery = z.output<typeof searchQuery>;
/** A repeated REST parameter counts once (its first value). */
const firsts = (raw: unknown, keys: string[]) => Object.fromEntries(keys.map((k) => [k, ((v) => (Array.isArray(v) ? v[0] : v))((raw as Record<string, unknown> | undefined)?.[k])]));
export const parseFileListQuery = (raw: unknown): FileListQuery => parseInput(listQuery, firsts(raw, ['path', 'page', 'limit']));
export const parseFileSearchQuery = (raw: unknown): FileSearchQuery => parseInput(searchQuery, firsts(raw, ['path', 'query']));
export const pathInput = z.object({ path });
/** A text file's contents as the editor saves them (written as UTF-8). */
export const textContentsInput = z.object({ contents: z.string({ message: 'must be a string' }).refine(isWellFormed, UNICODE_MESSAGE) });
export const renameInput = z.object({ from: path, to: path });
export const deleteInput = z.object({ paths: z.array(path, { message: 'must be a list of paths' }).min(1, 'must name at least one path').max(1000, 'must name at most 1000 paths') });
export const chmodInput = z.object({ path, mode: z.string({ message: 'must be an octal string' }).regex(/^0?[0-7]{3}$/, 'must be an octal string of permission bits, e.g. "644" (no setuid, setgid or sticky bit)') });
export const compressInput = z.object({
  paths: z.array(path, { message: 'must be a list of paths' }).min(1, 'must name at least one path').max(1000, 'must name at most 1000 paths'),
  destination: path.nullish(),
});
export const decompressInput = z.object({ path, destination: path.nullish() });
