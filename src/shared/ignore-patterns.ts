/**
 * The limits of a backup's ignore patterns (gitignore style): the `ignore` package's regular
 * expressions backtrack, so a pattern may have at most MAX_WILDCARDS wildcards (a run of `*` counts
 * once, each `?` once) and MAX_PATTERN_CHARS characters. The panel checks a backup's `ignored` with
 * them (422); the agent checks `.hostpanelignore` too and bounds the matching's time
 * (src/agent/backups/ignored.ts).
 */
export const MAX_WILDCARDS = 4;
export const MAX_PATTERN_CHARS = 255;

const WILDCARD = /\*+|\?/g;

/** A pattern or name as a message shows it: quoted, at most 80 characters. */
export const clip = (text: string): string => JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}\u2026` : text);

/** Why the pattern is past the limits, or null. */
export function ignorePatternProblem(pattern: string): string | null {
  const shown = clip(pattern);
  if (pattern.length > MAX_PATTERN_CHARS) return `The ignore pattern ${shown} is longer than ${MAX_PATTERN_CHARS} characters: shorten it and try again.`;
  if ((pattern.match(WILDCARD) ?? []).length > MAX_WILDCARDS) return `The ignore pattern ${shown} has more than ${MAX_WILDCARDS} wildcards (*, **, ?): simplify it and try again.`;
  return null;
}
