/**
 * The query string's parser: Node's querystring (Express's "simple" parser), except that a value whose
 * escapes are not UTF-8 (`?path=/caf%E9.txt`) keeps a lone surrogate at its start rather than reading
 * as U+FFFD: every text rule then refuses it (a path is INVALID_PATH, other text a VALIDATION_ERROR),
 * where two names that differ in such bytes were one file.
 */
import querystring, { type ParsedUrlQuery } from 'node:querystring';

const NOT_UTF8 = '\udc80';
/** A `%` that starts no escape (`100%`) stands for itself, as querystring reads it. */
const LONE_PERCENT = /%(?![0-9a-fA-F]{2})/g;

function decode(text: string): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text.replace(LONE_PERCENT, '%25'));
  } catch {
    // escapes that are not UTF-8
    return NOT_UTF8 + querystring.unescape(text);
  }
}

export const parseQuery = (text: string): ParsedUrlQuery => querystring.parse(text, '&', '=', { decodeURIComponent: decode });
