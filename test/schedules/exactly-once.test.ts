/**
 * Exactly once across panel instances: two platforms share one PostgreSQL database, and their
 * runners (each with the instances' own ORM and connection pool, and one shared controllable clock)
 * tick at the same moments, several times per moment. Every due run is claimed by one of them only:
 * per schedule and per minute one run, one `server:schedule.run` entry, and the missed first run is
 * recorded as skipped once.
 */
import { ScheduleRunner } from '../../src/schedules/runner.js';
import { taskPerformer } from '../../src/schedules/tasks.js';
import { createRecordsOnlyServer } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

const SCHEDULES = 12;
const MINUTES = 8;

let a: TestPlatform;
let b: TestPlatform;
let owner: { token: string };
let serverId: string;

beforeAll(async () => {
  a = await startTestPlatform({ scheduleTickMs: 0 });
  b = await startTestPlatform({ scheduleTickMs: 0 }, {}, { database: a.dbName });
  const admin = await a.admin();
  owner = await a.newUser('owner');
  serverId = await createRecordsOnlyServer(a, admin.token, owner.token, 'once');
}, 60_000);
afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

const runnerOf = (p: TestPlatform, now: () => Date) => new ScheduleRunner(p.orm, p.services.activity, taskPerformer(p.services.power, p.services.backups, p.services.access, () => p.orm.em, 30), { now });

test('two instances ticking together claim each due run once', async () => {
  const ids: string[] = [];
  for (let i = 0; i < SCHEDULES; i++) {
    const r = await a.request('POST', `/api/v1/servers/${serverId}/schedules`, { token: owner.token, body: { name: `every minute ${i}`, cron: '* * * * *', tasks: [{ action: 'backup' }] } });
    expect(r.status).toBe(201);
    ids.push(r.body.data.id);
  }
  // a clock one second past a whole minute, a year ahead: the first due runs are long missed
  let now = new Date('2027-11-25T00:00:01Z');
  const clock = () => now;
  const runners = [runnerOf(a, clock), runnerOf(b, clock), runnerOf(a, clock), runnerOf(b, clock)];
  const claimed = [0, 0, 0, 0];
  const tickAll = async () => (await Promise.all(runners.map((r) => r.tick()))).forEach((n, i) => (claimed[i] += n));
  for (let m = 0; m <= MINUTES; m++, now = new Date(now.getTime() + 60_000)) {
    await tickAll(); // at the first minute: the missed run (skipped), then the one due this minute
    await tickAll();
  }
  await Promise.all(runners.map((r) => r.idle()));

  const total = claimed.reduce((x, y) => x + y, 0);
  expect(total).toBe(SCHEDULES * (MINUTES + 2));
  for (const id of ids) {
    const runs = (await b.request('GET', `/api/v1/servers/${serverId}/schedules/${id}/runs?limit=100`, { token: owner.token })).body.data;
    // the skipped run and the first real one start at the same tick: compare without their order
    expect(runs.map((r: any) => r.status).sort()).toEqual([...Array.from({ length: MINUTES + 1 }, () => 'failed'), 'skipped']);
    const minutes = runs.filter((r: any) => r.status !== 'skipped').map((r: any) => r.startedAt.slice(0, 16));
    expect(new Set(minutes).size).toBe(MINUTES + 1); // one run per minute, none twice
  }
  await Promise.all([a.services.activity.flush(), b.services.activity.flush()]);
  const entries = await a.request('GET', `/api/v1/servers/${serverId}/activity?event=server:schedule.run&limit=1`, { token: owner.token });
  expect(entries.body.meta.total).toBe(total);
}, 120_000);
