/**
 * A variable's rule is judged in bounded time (src/shared/bounded-regex.ts), and the bound is wall
 * time: a process the system leaves waiting for longer than the budget (a loaded CI machine) ran out
 * of it with a pattern that takes microseconds, and a valid egg default was reported as breaking its
 * rule. A judgement is tried again when it runs out; a pattern that is really slow still runs out.
 */
import { PATTERN_ATTEMPTS, PATTERN_BUDGET_MS, PatternTimeout, testWithin } from '../../src/shared/bounded-regex';

/** The time a wait outside the pattern takes from the budget: a busy loop on this thread, once. */
function stalledOnce(re: RegExp): RegExp {
  let stalled = false;
  const wrapped = new RegExp(re.source, re.flags);
  wrapped.test = (text: string) => {
    if (!stalled) {
      stalled = true;
      const until = Date.now() + PATTERN_BUDGET_MS * 2;
      while (Date.now() < until) {
        /* the machine keeps this thread from the pattern */
      }
    }
    return RegExp.prototype.test.call(wrapped, text);
  };
  return wrapped;
}

test('a judgement the machine held up past the budget once is made again, not refused', () => {
  expect(testWithin(stalledOnce(/^([a-zA-Z0-9.\-_]+)$/), '1.12.2-7.3.0')).toBe(true);
  expect(testWithin(stalledOnce(/^([a-zA-Z0-9.\-_]+)$/), 'not valid!')).toBe(false);
});

test('a pattern that backtracks for ever still runs out, after every attempt', () => {
  const started = Date.now();
  expect(() => testWithin(/^(a+)+$/, 'a'.repeat(40) + 'b')).toThrow(PatternTimeout);
  expect(Date.now() - started).toBeGreaterThanOrEqual(PATTERN_BUDGET_MS * PATTERN_ATTEMPTS - 5);
});
