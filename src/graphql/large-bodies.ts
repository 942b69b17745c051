/**
 * How many large GraphQL bodies the panel holds at once. A signed-in caller's HTTP body may hold up to
 * graphqlBodyLimit (9 MiB by default: a file saved from the editor), and it is read and parsed whole
 * before the rate limit knows its operation. Without a bound, a caller sending such bodies in parallel
 * makes the panel buffer and parse all of them together (and several times their size as strings and
 * objects). So a body over 1 MiB must declare its length (Content-Length, without Content-Encoding),
 * and it is read only while its caller has fewer than MAX_LARGE_PER_CALLER large bodies on their way
 * and all large bodies together stay within MAX_LARGE_TOTAL_BYTES; otherwise it is answered
 * 429 RATE_LIMITED (`Retry-After: 1`) before any of it is read. A body's share is given back when its
 * answer has gone (or its connection closed).
 */
import type { IncomingMessage } from 'node:http';

/** Large bodies one caller may have on their way at once. */
export const MAX_LARGE_PER_CALLER = 2;
/** Bytes of large bodies the panel reads at once, all callers together. */
export const MAX_LARGE_TOTAL_BYTES = 64 * 1024 * 1024;

export class LargeBodyBudget {
  private total = 0;
  private readonly perCaller = new Map<string, number>();

  constructor(
    private readonly maxTotalBytes = MAX_LARGE_TOTAL_BYTES,
    private readonly maxPerCaller = MAX_LARGE_PER_CALLER,
  ) {}

  /** Takes `bytes` for `caller`: the function that gives them back (once), or null when over the budget. */
  take(caller: string, bytes: number): (() => void) | null {
    const held = this.perCaller.get(caller) ?? 0;
    if (held >= this.maxPerCaller || this.total + bytes > this.maxTotalBytes) return null;
    this.perCaller.set(caller, held + 1);
    this.total += bytes;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.total -= bytes;
      const left = (this.perCaller.get(caller) ?? 1) - 1;
      if (left > 0) this.perCaller.set(caller, left);
      else this.perCaller.delete(caller);
    };
  }
}

/** The declared length of a body that may be large: over `smallLimit`, given as Content-Length, not compressed; else null. */
export function declaredLargeBody(req: IncomingMessage, smallLimit: number): number | null {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') return null;
  if (req.headers['transfer-encoding'] !== undefined) return null;
  const length = Number(req.headers['content-length'] ?? NaN);
  return Number.isSafeInteger(length) && length > smallLimit ? length : null;
}
