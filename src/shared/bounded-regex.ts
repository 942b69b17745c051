/**
 * Runs a pattern one person wrote against text another controls (a blueprint's variable rules
 * against a user's value, its ready pattern against what a server prints, a backup's ignore patterns
 * against a server's file names) for a bounded time. A JavaScript regular expression can backtrack
 * for minutes on a crafted text, and it runs on the event loop that serves everyone else; called
 * from a `vm` script with a timeout, V8 stops it there. Each call starts a watchdog thread (about
 * 0.1 ms), so callers pass many texts at once.
 */
import vm from 'node:vm';

/** The time one call may take. */
export const PATTERN_BUDGET_MS = 50;
/**
 * Tries a call gets: the budget is wall time, and a process the system leaves waiting (a loaded
 * machine, a busy neighbour) runs out of it with work that takes microseconds. Work that is really
 * slow runs out every time, and costs this many budgets.
 */
export const PATTERN_ATTEMPTS = 3;

const context = vm.createContext({ work: null });
const call = new vm.Script('work()');

/** The work took longer than its budget. */
export class PatternTimeout extends Error {
  constructor(ms: number) {
    super(`the pattern took longer than ${ms} ms`);
  }
}

/**
 * What `work` returns; throws PatternTimeout when it runs longer than `ms` (V8 stops it) in each of
 * PATTERN_ATTEMPTS tries: its answer refuses a value or a backup, so a hiccup of the machine must not
 * decide it. `work` must be safe to run again (it only reads).
 */
export function withinTime<T>(work: () => T, ms = PATTERN_BUDGET_MS): T {
  for (let attempt = 1; ; attempt++) {
    try {
      return runOnce(work, ms);
    } catch (err) {
      if (!(err instanceof PatternTimeout) || attempt >= PATTERN_ATTEMPTS) throw err;
    }
  }
}

function runOnce<T>(work: () => T, ms: number): T {
  context.work = work;
  try {
    return call.runInContext(context, { timeout: ms }) as T;
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw new PatternTimeout(ms);
    throw err;
  } finally {
    context.work = null;
  }
}

/** The index of the first text `re` matches (-1: none); throws PatternTimeout past `ms`. */
export function firstMatchWithin(re: RegExp, texts: readonly string[], ms = PATTERN_BUDGET_MS): number {
  return withinTime(
    () =>
      texts.findIndex((t) => {
        re.lastIndex = 0;
        return re.test(t);
      }),
    ms,
  );
}

/** Whether `re` matches `text`; throws PatternTimeout past `ms` (see withinTime). */
export function testWithin(re: RegExp, text: string, ms = PATTERN_BUDGET_MS): boolean {
  return firstMatchWithin(re, [text], ms) === 0;
}
