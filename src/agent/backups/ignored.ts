/**
 * A backup's ignore patterns (gitignore style, matched by the `ignore` package), bounded so that no
 * pattern can hold the agent: its regular expressions backtrack, and `*a*a*a*a*a*b` against one name
 * of 130 `a`s alone takes half a minute of the agent's only thread. A pattern past the limits of
 * src/shared/ignore-patterns.ts fails the backup, naming it, and the names are matched in batches,
 * each for at most BATCH_MS (src/shared/bounded-regex.ts; a batch that takes longer fails the
 * backup): the agent's other work waits BATCH_MS at most.
 */
import ignore, { type Ignore } from 'ignore';
import { PatternTimeout, withinTime } from '../../shared/bounded-regex';
import { clip, ignorePatternProblem } from '../../shared/ignore-patterns';
import { AgentError } from '../errors';

/** names matched in one go (one bounded call costs about 0.1 ms) */
export const BATCH = 256;
export const BATCH_MS = 250;

const refused = (message: string) => new AgentError(422, 'VALIDATION_ERROR', message);

/** The patterns of `lines` (blank lines and comments left out); VALIDATION_ERROR for one past the limits. */
export function ignorePatterns(lines: string[]): string[] {
  const patterns = lines.filter((p) => p.trim() && !p.startsWith('#'));
  for (const p of patterns) {
    const problem = ignorePatternProblem(p);
    if (problem) throw refused(problem);
  }
  return patterns;
}

/** Matches names (relative, a folder's ending in `/`) against the patterns, a batch at a time. */
export class IgnoreMatcher {
  private readonly ig: Ignore | null;

  constructor(patterns: string[]) {
    const kept = ignorePatterns(patterns);
    this.ig = kept.length ? ignore().add(kept) : null;
  }

  /** For each name, whether it is ignored; VALIDATION_ERROR when the batch takes longer than BATCH_MS. */
  ignores(names: string[]): boolean[] {
    const ig = this.ig;
    if (!ig) return names.map(() => false);
    try {
      return withinTime(() => names.map((name) => ig.ignores(name)), BATCH_MS);
    } catch (err) {
      if (!(err instanceof PatternTimeout)) throw err;
      throw refused(`The ignore patterns take too long to match the server\u2019s files (more than ${BATCH_MS} ms for ${names.length} names, from ${clip(`/${names[0]}`)}): use fewer wildcards.`);
    }
  }
}
