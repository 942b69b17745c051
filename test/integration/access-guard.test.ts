/**
 * guardedSubscription (src/services/access-guard.ts), the one hold every live feed has on its
 * rights: a change of rights announced while a check is running gets a check of its own once the
 * running one ends (that one may have read the rights from before the change), and a subscriber
 * who lost their rights is told once. Checks run against the real database's ORM context.
 */
import { guardedSubscription } from '../../src/services/access-guard.js';
import { AppError } from '../../src/errors.js';
import type { ConsoleEvent } from '../../src/console/types.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
}, 60_000);
afterAll(async () => {
  await p?.stop();
});

/** A check whose answers the test gives one at a time: each call waits for the next `answer`. */
function gatedCheck() {
  const pending: Array<{ ok: () => void; fail: (e: unknown) => void }> = [];
  return {
    calls: () => pending.length,
    check: () => new Promise<void>((ok, fail) => pending.push({ ok, fail })),
    answer(n: number, allowed: boolean) {
      const call = pending[n]!;
      if (allowed) call.ok();
      else call.fail(AppError.forbidden());
    },
  };
}

async function feed(check: () => Promise<unknown>) {
  let emit: (e: ConsoleEvent) => void = () => undefined;
  const got: ConsoleEvent[] = [];
  await guardedSubscription(p.orm, 'u1', check, async (l) => ((emit = l), () => undefined), (e) => got.push(e));
  return { got, emit: (e: ConsoleEvent) => emit(e) };
}

const access = (userId: string): ConsoleEvent => ({ type: 'access', data: { userId } }) as ConsoleEvent;

test('a revocation announced while the first check runs is checked again once it ends', async () => {
  const g = gatedCheck();
  const f = await feed(g.check);
  await until(() => g.calls() === 1 || null, 2_000, 'the check made on attaching');
  f.emit(access('u1')); // the rights change while that check reads them
  g.answer(0, true); // it read them from before the change
  await until(() => g.calls() === 2 || null, 2_000, 'a second check for the change');
  g.answer(1, false);
  await until(() => f.got.length > 0 || null, 2_000, 'the subscriber to be told');
  expect(f.got.map((e) => e.type)).toEqual(['revoked']);
});

test('many changes during one check make one more check, and a revoked feed checks no more', async () => {
  const g = gatedCheck();
  const f = await feed(g.check);
  await until(() => g.calls() === 1 || null, 2_000, 'the check made on attaching');
  for (let i = 0; i < 5; i++) f.emit(access('u1'));
  f.emit(access('someone else'));
  g.answer(0, true);
  await until(() => g.calls() === 2 || null, 2_000, 'a second check');
  await new Promise((r) => setTimeout(r, 100));
  expect(g.calls()).toBe(2);
  f.emit(access('u1')); // comes while the second one runs
  g.answer(1, false);
  await until(() => f.got.length > 0 || null, 2_000, 'the subscriber to be told');
  await new Promise((r) => setTimeout(r, 100));
  expect(g.calls()).toBe(2);
  f.emit(access('u1'));
  await new Promise((r) => setTimeout(r, 100));
  expect(g.calls()).toBe(2);
  expect(f.got.map((e) => e.type)).toEqual(['revoked']);
});
