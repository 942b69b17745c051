/**
 * Schedules across daylight-saving changes, with the runner's clock in the test's hands: the clock
 * walks through two days around each change in steps under a minute, ticking the real runner
 * against the real database, and every run must happen exactly once at the instant the contract
 * says (a local time that does not exist runs at the next valid instant, one that happens twice
 * runs once). croner's own answers are checked first, so that a change of croner shows here.
 */
import { nextRun } from '../../src/schedules/cron.js';
import { ScheduleRunner } from '../../src/schedules/runner.js';
import { taskPerformer } from '../../src/schedules/tasks.js';
import { createRecordsOnlyServer } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

interface Case {
  name: string;
  timezone: string;
  cron: string;
  /** the walk: from, to (UTC) */
  from: string;
  to: string;
  /** the runs expected in the walk (UTC) */
  runs: string[];
}

const CASES: Case[] = [
  // 2027-03-28 02:00 CET → 03:00 CEST: 02:30 does not exist, the run is at 03:00 CEST
  { name: 'Europe/Berlin spring forward', timezone: 'Europe/Berlin', cron: '30 2 * * *', from: '2027-03-27T12:00:00Z', to: '2027-03-29T12:00:00Z', runs: ['2027-03-28T01:00:00Z', '2027-03-29T00:30:00Z'] },
  // 2027-10-31 03:00 CEST → 02:00 CET: 02:30 happens twice (00:30Z and 01:30Z), the run is once
  { name: 'Europe/Berlin fall back', timezone: 'Europe/Berlin', cron: '30 2 * * *', from: '2027-10-30T12:00:00Z', to: '2027-11-01T12:00:00Z', runs: ['2027-10-31T00:30:00Z', '2027-11-01T01:30:00Z'] },
  // 2027-03-14 02:00 EST → 03:00 EDT
  { name: 'America/New_York spring forward', timezone: 'America/New_York', cron: '30 2 * * *', from: '2027-03-13T17:00:00Z', to: '2027-03-15T17:00:00Z', runs: ['2027-03-14T07:00:00Z', '2027-03-15T06:30:00Z'] },
  // 2027-11-07 02:00 EDT → 01:00 EST: 01:30 happens twice (05:30Z and 06:30Z)
  { name: 'America/New_York fall back', timezone: 'America/New_York', cron: '30 1 * * *', from: '2027-11-06T17:00:00Z', to: '2027-11-08T17:00:00Z', runs: ['2027-11-07T05:30:00Z', '2027-11-08T06:30:00Z'] },
  { name: 'America/New_York fall back at 02:30', timezone: 'America/New_York', cron: '30 2 * * *', from: '2027-11-06T17:00:00Z', to: '2027-11-08T17:00:00Z', runs: ['2027-11-07T07:30:00Z', '2027-11-08T07:30:00Z'] },
  // every 15 minutes through both changes in Berlin: the missing 02:00-02:45 run once at 03:00 CEST, the
  // repeated 02:00-02:45 CET not again
  { name: 'Europe/Berlin spring forward, every 15 minutes', timezone: 'Europe/Berlin', cron: '*/15 1-3 * * *', from: '2027-03-27T23:50:00Z', to: '2027-03-28T02:10:00Z', runs: ['2027-03-28T00:00:00Z', '2027-03-28T00:15:00Z', '2027-03-28T00:30:00Z', '2027-03-28T00:45:00Z', '2027-03-28T01:00:00Z', '2027-03-28T01:15:00Z', '2027-03-28T01:30:00Z', '2027-03-28T01:45:00Z'] },
  { name: 'Europe/Berlin fall back, every 15 minutes', timezone: 'Europe/Berlin', cron: '*/15 1-3 * * *', from: '2027-10-30T23:50:00Z', to: '2027-10-31T02:10:00Z', runs: ['2027-10-31T00:00:00Z', '2027-10-31T00:15:00Z', '2027-10-31T00:30:00Z', '2027-10-31T00:45:00Z', '2027-10-31T02:00:00Z'] },
  // 2027-03-27 23:00 -02 → 2027-03-28 00:00 -01: a gap that runs into midnight; 23:30 on the 27th runs at
  // the gap's end (croner skipped that day's run)
  { name: 'America/Nuuk spring forward at 23:00', timezone: 'America/Nuuk', cron: '30 23 * * *', from: '2027-03-26T12:00:00Z', to: '2027-03-29T12:00:00Z', runs: ['2027-03-27T01:30:00Z', '2027-03-28T01:00:00Z', '2027-03-29T00:30:00Z'] },
];

/** The clock's step: under the 60 s after which a run counts as missed. */
const STEP_MS = 45_000;

let p: TestPlatform;
let owner: { token: string };
let serverId: string;

beforeAll(async () => {
  p = await startTestPlatform({ scheduleTickMs: 0 });
  const admin = await p.admin();
  owner = await p.newUser('owner');
  serverId = await createRecordsOnlyServer(p, admin.token, owner.token, 'dst');
}, 60_000);
afterAll(async () => {
  await p?.stop();
});

describe('croner, as src/schedules/cron.ts uses it', () => {
  test.each(CASES)('$name: the runs after $from', (c) => {
    const got: string[] = [];
    let at = new Date(c.from);
    for (;;) {
      at = nextRun(c.cron, c.timezone, at)!;
      if (at.getTime() > Date.parse(c.to)) break;
      got.push(at.toISOString().replace('.000', ''));
    }
    expect(got).toEqual(c.runs);
  });

  test('a pattern with a wildcard or step in its hours names wall-clock times too: the repeated ones run once, the missing ones at the gap\u2019s end', () => {
    const walk = (cron: string, timezone: string, from: string, n: number) => {
      const out: string[] = [];
      let at = new Date(from);
      for (let i = 0; i < n; i++) out.push((at = nextRun(cron, timezone, at)!).toISOString().slice(0, 16));
      return out;
    };
    // fall back: 02:30 CEST (00:30Z) runs, 02:30 CET (01:30Z) is the same local time again; next 03:30 CET
    expect(walk('30 * * * *', 'Europe/Berlin', '2027-10-30T23:00:00Z', 3)).toEqual(['2027-10-30T23:30', '2027-10-31T00:30', '2027-10-31T02:30']);
    // spring forward: 01:30 CET (00:30Z), then 02:30 (which does not exist) at 03:00 CEST (01:00Z), then 03:30 CEST
    expect(walk('30 * * * *', 'Europe/Berlin', '2027-03-28T00:00:00Z', 3)).toEqual(['2027-03-28T00:30', '2027-03-28T01:00', '2027-03-28T01:30']);
    // every 30 minutes of the missing hour: one run, at its end; the next day as usual
    expect(walk('*/30 2 * * *', 'Europe/Berlin', '2027-03-27T12:00:00Z', 3)).toEqual(['2027-03-28T01:00', '2027-03-29T00:00', '2027-03-29T00:30']);
    // every 2 hours: 02:00 does not exist and runs at 03:00 CEST
    expect(walk('0 */2 * * *', 'Europe/Berlin', '2027-03-27T22:00:00Z', 3)).toEqual(['2027-03-27T23:00', '2027-03-28T01:00', '2027-03-28T02:00']);
    // a fall back of two hours (Antarctica/Troll, +02 to +00): 01:00 and 02:00 come again and run once
    expect(walk('0 * * * *', 'Antarctica/Troll', '2027-10-30T22:00:00Z', 3)).toEqual(['2027-10-30T23:00', '2027-10-31T00:00', '2027-10-31T03:00']);
  });
});

describe('the runner with a controllable clock', () => {
  test.each(CASES)('$name: each run once, none missed', async (c) => {
    const created = await p.request('POST', `/api/v1/servers/${serverId}/schedules`, { token: owner.token, body: { name: c.name, cron: c.cron, timezone: c.timezone, tasks: [{ action: 'backup' }] } });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    let now = new Date(c.from);
    const runner = new ScheduleRunner(p.orm, p.services.activity, taskPerformer(p.services.power, p.services.backups, p.services.access, () => p.orm.em, 30), { now: () => now });
    // the schedule's first due run (computed from the real clock) is long past on this clock: recorded as skipped
    expect(await runner.tick()).toBe(1);
    for (; now.getTime() <= Date.parse(c.to); now = new Date(now.getTime() + STEP_MS)) await runner.tick();
    await runner.idle();
    const runs = (await p.request('GET', `/api/v1/servers/${serverId}/schedules/${id}/runs?limit=100`, { token: owner.token })).body.data.reverse();
    expect(runs[0]).toMatchObject({ trigger: 'cron', status: 'skipped', startedAt: new Date(c.from).toISOString() });
    const ran = runs.slice(1);
    expect(ran.map((r: any) => r.status)).toEqual(c.runs.map(() => 'failed')); // the backup task fails: backups do not exist yet
    // each run started at the first tick at or after its instant (less than one step late)
    for (const [i, r] of ran.entries()) {
      const late = Date.parse(r.startedAt) - Date.parse(c.runs[i]!);
      expect([c.runs[i], late >= 0 && late < STEP_MS]).toEqual([c.runs[i], true]);
    }
    await p.request('DELETE', `/api/v1/servers/${serverId}/schedules/${id}`, { token: owner.token });
  }, 120_000);
});
