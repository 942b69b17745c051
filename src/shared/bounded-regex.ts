/**
 * Runs a pattern one person wrote against text another controls (a blueprint's variable rules
 * against a user's value, its ready pattern against what a server prints) for a bounded time. A
 * JavaScript regular expression can backtrack for minutes on a crafted text, and it runs on the
 * event loop that serves everyone else; inside a `vm` script with a timeout, V8 stops it there.
 * Each call starts a watchdog thread (about 0.1 ms), so callers pass many texts at once.
 */
import vm from 'node:vm';

/** The time one call may take. */
export const PATTERN_BUDGET_MS = 50;

const context = vm.createContext({ re: null, texts: [] });
const firstMatch = new vm.Script('texts.findIndex((t) => { re.lastIndex = 0; return re.test(t); })');

/** The pattern took longer than its budget on the text. */
export class PatternTimeout extends Error {
  constructor(ms: number) {
    super(`the pattern took longer than ${ms} ms`);
  }
}

/** The index of the first text `re` matches (-1: none); throws PatternTimeout past `ms`. */
export function firstMatchWithin(re: RegExp, texts: readonly string[], ms = PATTERN_BUDGET_MS): number {
  Object.assign(context, { re, texts });
  try {
    return firstMatch.runInContext(context, { timeout: ms }) as number;
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw new PatternTimeout(ms);
    throw err;
  } finally {
    Object.assign(context, { re: null, texts: [] });
  }
}

/** Whether `re` matches `text`; throws PatternTimeout past `ms`. */
export function testWithin(re: RegExp, text: string, ms = PATTERN_BUDGET_MS): boolean {
  return firstMatchWithin(re, [text], ms) === 0;
}
