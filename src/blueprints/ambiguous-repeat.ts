/**
 * Whether a regular expression repeats a group that can match the same text in more than one way:
 * a group quantified to repeat (`*`, `+`, `{n,}`, `{n,m}` with m > 1) that holds a quantifier or an
 * alternation at any depth: `(a+)+`, `((a)+)+`, `(?:\w*){2,}`, `(a|a)*`. Such a pattern can backtrack
 * for ever on some values, and values are checked in the panel's process. Escapes, character classes
 * and group prefixes (`?:`, `?=`, `?<name>`, …) are read as the syntax has them, so that nothing hides
 * a group from the check. Strict on purpose: `(a|b)+` is refused too (`[ab]+` says the same).
 */

interface Group {
  /** a quantifier or an alternation somewhere inside */
  ambiguous: boolean;
}

/** The length of the quantifier at `i` (0 if none), and whether it repeats more than once. */
function quantifierAt(src: string, i: number): { length: number; repeats: boolean } {
  const c = src[i];
  let length = 0;
  let repeats = false;
  if (c === '*' || c === '+') [length, repeats] = [1, true];
  else if (c === '?') length = 1;
  else if (c === '{') {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(i));
    if (!m) return { length: 0, repeats: false };
    length = m[0].length;
    repeats = m[2] !== undefined && (m[3] === '' || Number(m[3]) > 1);
  }
  if (length && src[i + length] === '?') length++; // lazy
  return { length, repeats };
}

/** The index after the character class that starts at `i` (`[`). */
function afterClass(src: string, i: number): number {
  let j = i + 1;
  if (src[j] === '^') j++;
  while (j < src.length && src[j] !== ']') j += src[j] === '\\' ? 2 : 1;
  return j + 1;
}

/** The index after a group's opening `(` and its prefix (`?:`, `?=`, `?!`, `?<=`, `?<!`, `?<name>`). */
function afterGroupStart(src: string, i: number): number {
  if (src[i + 1] !== '?') return i + 1;
  if (src[i + 2] === '<' && src[i + 3] !== '=' && src[i + 3] !== '!') {
    const close = src.indexOf('>', i + 3);
    return close < 0 ? src.length : close + 1;
  }
  return i + (src[i + 2] === '<' ? 4 : 3);
}

/** Why a pattern that {@link repeatsAmbiguousGroup} is refused. */
export const AMBIGUOUS_REPEAT = 'repeats a group that can match in more than one way (e.g. (a+)+ or (a|b)*): it can take forever on some values; write it without (e.g. a+ or [ab]*)';

export function repeatsAmbiguousGroup(src: string): boolean {
  const open: Group[] = [];
  const mark = () => {
    const top = open[open.length - 1];
    if (top) top.ambiguous = true;
  };
  /** the group that closed just before `i`, for a quantifier right after it */
  let closed: Group | null = null;
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    const q = quantifierAt(src, i);
    let justClosed: Group | null = null;
    if (q.length) {
      if (q.repeats && closed?.ambiguous) return true;
      mark();
      i += q.length;
    } else if (c === '(') {
      open.push({ ambiguous: false });
      i = afterGroupStart(src, i);
    } else if (c === ')') {
      justClosed = open.pop() ?? { ambiguous: false };
      if (justClosed.ambiguous) mark();
      i++;
    } else if (c === '|') {
      mark();
      i++;
    } else if (c === '[') i = afterClass(src, i);
    else i += c === '\\' ? 2 : 1;
    closed = justClosed;
  }
  return false;
}
