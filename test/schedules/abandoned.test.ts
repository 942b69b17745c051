/**
 * A run whose panel died is ended: runners with clocks of the test's own stand in for instances. A
 * runs a run and marks it alive; C runs one and is never heard of again (as if killed); B looks for
 * abandoned runs. Only a run nothing marked for ABANDONED_AFTER_MS is ended, once, as failed with
 * each task saying why; the result is read over REST. An ended run is final: its instance, back after
 * the end, performs nothing more of it and does not rewrite it. (Real database; the tasks' waits never
 * end, but where the test ends one.)
 */
import { Schedule } from '../../src/entities/Schedule.js';
import { ABANDONED, ABANDONED_AFTER_MS } from '../../src/schedules/abandoned.js';
import { ScheduleRunner } from '../../src/schedules/runner.js';
import { createRecordsOnlyServer } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform;
let owner: { token: string };
let serverId: string;

beforeAll(async () => {
  p = await startTestPlatform({ scheduleTickMs: 0 });
  const admin = await p.admin();
  owner = await p.newUser('owner');
  serverId = await createRecordsOnlyServer(p, admin.token, owner.token, 'abandoned');
}, 60_000);
afterAll(async () => {
  await p?.stop();
});

const MIN = 60_000;
const noop = async () => undefined;
const never = () => new Promise<void>(() => undefined);

/** A runner standing in for one instance, at the instant `clock.at`. */
function instance(clock: { at: number }): ScheduleRunner {
  return new ScheduleRunner(p.orm, p.services.activity, noop, { now: () => new Date(clock.at), sleep: never });
}

/** A run of two tasks as the look at `ms` ended it: failed, both tasks skipped as abandoned. */
const endedAsAbandoned = (ms: number) => ({
  status: 'failed',
  finishedAt: new Date(ms).toISOString(),
  tasks: [
    { sequence: 1, status: 'skipped', error: ABANDONED },
    { sequence: 2, status: 'skipped', error: ABANDONED },
  ],
});

async function runOf(scheduleId: string, runId: string): Promise<any> {
  const r = await p.request('GET', `/api/v1/servers/${serverId}/schedules/${scheduleId}/runs?limit=100`, { token: owner.token });
  expect(r.status).toBe(200);
  return r.body.data.find((x: any) => x.id === runId);
}

/**
 * A schedule of two commands, the first after `offsetSeconds`; the owner as an actor, and how a
 * runner picks the schedule for a run started by hand.
 */
async function slowSchedule(name: string, offsetSeconds: number) {
  const created = await p.request('POST', `/api/v1/servers/${serverId}/schedules`, {
    token: owner.token,
    body: { name, cron: '0 4 * * *', tasks: [{ action: 'command', payload: { command: 'save-all' }, offsetSeconds }, { action: 'command', payload: { command: 'say done' } }] },
  });
  expect(created.status).toBe(201);
  const scheduleId: string = created.body.data.id;
  const actor = (await p.services.auth.authenticate(owner.token))!;
  const pick = (em: Parameters<Parameters<ScheduleRunner['runNow']>[1]>[0]) => em.findOneOrFail(Schedule, { id: scheduleId });
  return { scheduleId, actor, pick };
}

test('a run nothing has marked alive for 5 minutes is ended as failed, once; a run its instance marks goes on', async () => {
  const { scheduleId, actor, pick } = await slowSchedule('slow', 900);

  const t0 = Date.now();
  const clockA = { at: t0 };
  const clockB = { at: t0 };
  const a = instance(clockA);
  const c = instance({ at: t0 });
  const b = instance(clockB);
  const alive = await a.runNow(actor, pick);
  const killed = await c.runNow(actor, pick);

  clockA.at = t0 + 4 * MIN;
  expect(await a.heartbeat()).toBe(0);

  // 6 minutes in: C's run (never marked, started at t0) is abandoned; A's (marked at 4 minutes) is not
  clockB.at = t0 + 6 * MIN;
  expect(await b.heartbeat()).toBe(1);
  const ended = await runOf(scheduleId, killed.id);
  expect(ended).toMatchObject(endedAsAbandoned(t0 + 6 * MIN));
  expect(await runOf(scheduleId, alive.id)).toMatchObject({ status: 'running', finishedAt: null });

  // A falls silent after its mark at 4 minutes: its run is ended once 5 minutes have passed since
  clockB.at = t0 + 4 * MIN + ABANDONED_AFTER_MS - 1000;
  expect(await b.heartbeat()).toBe(0);
  clockB.at = t0 + 4 * MIN + ABANDONED_AFTER_MS + 1000;
  expect(await b.heartbeat()).toBe(1);
  expect(await runOf(scheduleId, alive.id)).toMatchObject({ status: 'failed', tasks: [{ status: 'skipped', error: ABANDONED }, { status: 'skipped', error: ABANDONED }] });
  expect(await b.heartbeat()).toBe(0);
  expect(await runOf(scheduleId, killed.id)).toEqual(ended);
});

test('a run ended as abandoned is final: its instance, back after its silence, performs no further task and does not rewrite the run', async () => {
  const { scheduleId, actor, pick } = await slowSchedule('silent', 600);

  const t0 = Date.now();
  // A runs the run; its first task's wait ends when the test says so (A could not reach the database meanwhile)
  const performed: string[] = [];
  let endWait!: () => void;
  const waitOver = new Promise<void>((resolve) => (endWait = resolve));
  const a = new ScheduleRunner(p.orm, p.services.activity, async (_server, task) => void performed.push(String(task.payload.command)), { now: () => new Date(t0), sleep: () => waitOver });
  const b = instance({ at: t0 + 6 * MIN });

  const run = await a.runNow(actor, pick);
  expect(await b.heartbeat()).toBe(1);
  const ended = await runOf(scheduleId, run.id);
  expect(ended).toMatchObject(endedAsAbandoned(t0 + 6 * MIN));

  // A is back: its wait ends; the run stops before its next task, and nothing more is written
  endWait();
  await a.idle();
  expect(performed).toEqual([]);
  expect(await runOf(scheduleId, run.id)).toEqual(ended);
  // the run was ended once: a later look finds nothing to end
  expect(await b.heartbeat()).toBe(0);
  expect(await runOf(scheduleId, run.id)).toEqual(ended);
});
