/**
 * What one server's schedules may cost everyone else, against the real runner and database (the
 * runner's clock is the test's; tasks are a no-op): a server holds at most MAX_SCHEDULES schedules
 * (422 QUOTA_EXCEEDED, also when creates race); a tick claims every due run, so a thousand due
 * schedules (rows written with SQL, standing in for schedules made before the limit) do not make
 * another user's run missed; a schedule whose stored time zone no longer reads is disabled with a
 * failed run instead of blocking the others; and each schedule keeps its RUNS_KEPT newest runs.
 */
import { MISSED_AFTER_MS, RUNS_KEPT } from '../../src/schedules/claim.js';
import { ScheduleRunner } from '../../src/schedules/runner.js';
import { MAX_SCHEDULES } from '../../src/validation/schedules.js';
import { createNode, blueprintsByKey, expectError, expectFieldError } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform;
let owner: { token: string };
let other: { token: string };
let node: { id: string };
let demoGame: string;

beforeAll(async () => {
  p = await startTestPlatform({ scheduleTickMs: 0 });
  const admin = await p.admin();
  owner = await p.newUser('owner');
  other = await p.newUser('other');
  const [n, bps] = await Promise.all([createNode(p, admin.token), blueprintsByKey(p, owner.token)]);
  node = n;
  demoGame = bps['demo-game'].id;
}, 60_000);
afterAll(async () => {
  await p?.stop();
});

async function newServer(token: string): Promise<string> {
  const r = await p.request('POST', '/api/v1/servers', { token, body: { name: 'tenant', nodeId: node.id, blueprintId: demoGame, memory: 64, cpu: 10, disk: 128 } });
  if (r.status !== 201) throw new Error(r.text);
  return r.body.data.id;
}

const S = (server: string, sub = '') => `/api/v1/servers/${server}/schedules${sub}`;
const everyMinute = { name: 'minutely', cron: '* * * * *', tasks: [{ action: 'command', payload: { command: 'x' } }] };
const noop = async () => undefined;
const sql = (query: string, params: unknown[] = []): Promise<any> => p.orm.em.fork().getConnection().execute(query, params);

async function create(server: string, token: string, body: Record<string, unknown> = {}): Promise<any> {
  const r = await p.request('POST', S(server), { token, body: { ...everyMinute, ...body } });
  if (r.status !== 201) throw new Error(r.text);
  return r.body.data;
}

/** A runner whose clock the test sets; `at(ms)` ticks it at that instant. The schedules of earlier tests are disabled first. */
async function runnerAt(): Promise<{ runner: ScheduleRunner; at: (ms: number) => Promise<number> }> {
  await sql('update schedules set enabled = false, next_run_at = null');
  let now = new Date();
  const runner = new ScheduleRunner(p.orm, p.services.activity, noop, { now: () => now });
  return { runner, at: (ms) => ((now = new Date(ms)), runner.tick()) };
}

const runsOf = async (server: string, token: string, id: string): Promise<any> => (await p.request('GET', S(server, `/${id}/runs?limit=100`), { token })).body;

test(`a server holds at most ${MAX_SCHEDULES} schedules: one more is a 422 QUOTA_EXCEEDED saying what to do, even when creates race`, async () => {
  const server = await newServer(owner.token);
  for (let i = 0; i < MAX_SCHEDULES - 5; i += 15) await Promise.all(Array.from({ length: Math.min(15, MAX_SCHEDULES - 5 - i) }, () => create(server, owner.token)));
  const racing = await Promise.all(Array.from({ length: 10 }, () => p.request('POST', S(server), { token: owner.token, body: everyMinute })));
  expect(racing.map((r) => r.status).sort()).toEqual([...Array(5).fill(201), ...Array(5).fill(422)]);
  const refused = racing.find((r) => r.status === 422)!;
  expectError(refused, 422, 'QUOTA_EXCEEDED');
  expect(refused.body.error.message).toBe(`This server has ${MAX_SCHEDULES} schedules, the most it may have is ${MAX_SCHEDULES}: delete one, or add these tasks to an existing schedule (up to 10 tasks each).`);
  expect(refused.body.error.details).toEqual({ exceeded: ['schedules'], limits: { schedules: MAX_SCHEDULES }, used: { schedules: MAX_SCHEDULES }, requested: { schedules: 1 } });
  const list = await p.request('GET', S(server, '?limit=100'), { token: owner.token });
  expect(list.body.meta.total).toBe(MAX_SCHEDULES);
  // room again once one is deleted; another server has room of its own
  expect((await p.request('DELETE', S(server, `/${list.body.data[0].id}`), { token: owner.token })).status).toBe(204);
  await create(server, owner.token);
  await create(await newServer(owner.token), owner.token);
}, 120_000);

test('a thousand due runs of one server: the ticks at their due time claim them all, and another user\'s run is not missed', async () => {
  const { runner, at } = await runnerAt();
  const crowded = await newServer(owner.token);
  const theirs = await newServer(other.token);
  const first = await create(crowded, owner.token);
  const victim = await create(theirs, other.token);
  const due = Date.parse(victim.nextRunAt);
  // a thousand every-minute schedules due a second before the other user's
  await sql(
    `insert into schedules (id, server_id, name, cron, timezone, enabled, only_when_online, tasks, next_run_at, created_at, updated_at)
     select gen_random_uuid(), server_id, name, cron, timezone, enabled, only_when_online, tasks, ?, created_at, updated_at from schedules, generate_series(1, 999) where id = ?`,
    [new Date(due - 1000), first.id],
  );
  await sql('update schedules set next_run_at = ? where id = ?', [new Date(due - 1000), first.id]);
  try {
    // the due runs are claimed at `due`: a tick stops after TICK_MAX_MS of real time, and on a loaded
    // machine claiming a thousand runs can take more than one; the next tick then comes at the same
    // instant (a later one would find the rest more than MISSED_AFTER_MS late, and skip them as missed)
    while ((await at(due)) > 0);
    for (let s = 5; s <= 90; s += 5) await at(due + s * 1000);
    await runner.idle();
    const runs = (await runsOf(theirs, other.token, victim.id)).data.reverse();
    expect(runs[0]).toMatchObject({ trigger: 'cron', status: 'completed' });
    expect(Date.parse(runs[0].startedAt) - due).toBeLessThan(MISSED_AFTER_MS);
    const statuses: { status: string }[] = await sql('select distinct r.status from schedule_runs r join schedules s on s.id = r.schedule_id where s.server_id in (?, ?)', [crowded, theirs]);
    expect(statuses.map((r) => r.status)).toEqual(['completed']);
  } finally {
    await sql('delete from schedules where server_id = ?', [crowded]);
    await p.request('DELETE', S(theirs, `/${victim.id}`), { token: other.token });
  }
}, 300_000);

test('a run due more than 60 s before the runner could run it is skipped as missed, without blaming a stopped panel', async () => {
  const { runner, at } = await runnerAt();
  const server = await newServer(other.token);
  const s = await create(server, other.token);
  const claimed = await at(Date.parse(s.nextRunAt) + 120_000);
  await runner.idle();
  const runs = (await runsOf(server, other.token, s.id)).data;
  const [missed] = runs.filter((r: any) => r.status === 'skipped');
  expect(missed.tasks).toEqual([{ sequence: 1, status: 'skipped', error: `missed: due at ${s.nextRunAt}, more than 60 s before the panel could run it` }]);
  // and the run due within the last minute runs in the same tick
  expect([claimed, runs.map((r: any) => r.status).sort()]).toEqual([2, ['completed', 'skipped']]);
});

test('schedules whose stored time zone no longer reads are disabled with a failed run; the others run', async () => {
  const { runner, at } = await runnerAt();
  const poisoned = await newServer(owner.token);
  const server = await newServer(owner.token);
  const bad: string[] = [];
  for (let i = 0; i < MAX_SCHEDULES; i += 10) bad.push(...(await Promise.all(Array.from({ length: 10 }, () => create(poisoned, owner.token)))).map((s) => s.id));
  const good = await create(server, owner.token, { name: 'good' });
  // what an upgrade of tzdata could leave behind: a zone the runtime no longer knows, due before the good one
  await sql(`update schedules set timezone = 'Gone/Zone', next_run_at = next_run_at - interval '1 second' where server_id = ?`, [poisoned]);
  for (let s = 0; s <= 180; s += 5) await at(Date.parse(good.nextRunAt) + s * 1000);
  await runner.idle();
  expect((await runsOf(server, owner.token, good.id)).meta.total).toBe(4); // at 0, 60, 120 and 180 s

  const reason = /^the schedule's time zone no longer reads \(.+\); the schedule is disabled until its cron and time zone are set again$/;
  for (const id of bad) {
    const s = (await p.request('GET', S(poisoned, `/${id}`), { token: owner.token })).body.data;
    expect(s).toMatchObject({ enabled: false, nextRunAt: null });
    const runs = (await runsOf(poisoned, owner.token, id)).data;
    expect(runs).toEqual([expect.objectContaining({ trigger: 'cron', status: 'failed', tasks: [{ sequence: 1, status: 'skipped', error: expect.stringMatching(reason) }] })]);
  }
  // enabling it again needs a zone that reads
  expectFieldError(await p.request('PATCH', S(poisoned, `/${bad[0]}`), { token: owner.token, body: { enabled: true } }), 'timezone');
  const fixed = await p.request('PATCH', S(poisoned, `/${bad[0]}`), { token: owner.token, body: { enabled: true, timezone: 'UTC' } });
  expect(fixed.body.data).toMatchObject({ enabled: true, timezone: 'UTC', nextRunAt: expect.any(String) });
  await sql('update schedules set enabled = false where server_id in (?, ?)', [poisoned, server]);
}, 120_000);

test(`each schedule keeps its ${RUNS_KEPT} newest runs`, async () => {
  const { runner, at } = await runnerAt();
  const server = await newServer(other.token);
  const s = await create(server, other.token);
  const start = Date.parse(s.nextRunAt);
  const minutes = RUNS_KEPT + 5;
  for (let m = 0; m < minutes; m++) await at(start + m * 60_000 + 1000);
  await runner.idle();
  const runs = await runsOf(server, other.token, s.id);
  expect(runs.meta.total).toBe(RUNS_KEPT);
  expect(runs.data[0].startedAt).toBe(new Date(start + (minutes - 1) * 60_000 + 1000).toISOString());
  expect(runs.data.at(-1).startedAt).toBe(new Date(start + (minutes - RUNS_KEPT) * 60_000 + 1000).toISOString());
  // a run by hand makes room too
  const manual = await p.request('POST', S(server, `/${s.id}/run`), { token: other.token });
  expect(manual.status).toBe(201);
  await p.services.scheduleRunner.idle();
  const after = await runsOf(server, other.token, s.id);
  expect(after.meta.total).toBe(RUNS_KEPT);
  expect(after.data.map((r: any) => r.id)).toContain(manual.body.data.id);
}, 120_000);
