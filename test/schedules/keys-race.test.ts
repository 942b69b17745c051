/**
 * The keys a schedule's tasks need are checked on the tasks stored, not on an earlier read: a subuser
 * holding control.console (not control.start) runs or changes the owner's command schedule while
 * the owner switches its tasks to a power start. The owner's switch is made to land exactly between
 * the subuser's read and its write, by wrapping the runner's runNow and the activity recorder
 * (each is called between the two): the run then is refused, and the change is stored before
 * the owner's (the owner's change waits for it). The server is on a node nobody answers for.
 */
import { expectError, createRecordsOnlyServer } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { sleep } from '../support/wait.js';

let p: TestPlatform;
let owner: { token: string };
let sub: { token: string; email: string; user: any };
let serverId: string;

beforeAll(async () => {
  p = await startTestPlatform({ scheduleTickMs: 0 });
  const admin = await p.admin();
  owner = await p.newUser('owner');
  sub = await p.newUser('sub');
  serverId = await createRecordsOnlyServer(p, admin.token, owner.token, 'race');
  const added = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: sub.email, permissions: ['schedule.read', 'schedule.update', 'control.console'] } });
  expect(added.status).toBe(201);
}, 60_000);
afterAll(async () => {
  await p?.stop();
});

const S = (sub = '') => `/api/v1/servers/${serverId}/schedules${sub}`;
const command = [{ action: 'command', payload: { command: 'say hi' } }];
const power = [{ action: 'power', payload: { action: 'start' } }];
const POWER_REFUSED = 'A power task needs the "control.start" permission on this server; ask its owner.';

async function ownersCommandSchedule(): Promise<any> {
  const r = await p.request('POST', S(), { token: owner.token, body: { name: 'chat', cron: '0 4 * * *', enabled: false, tasks: command } });
  expect(r.status).toBe(201);
  return r.body.data;
}

test('run now: the tasks run are the tasks checked, even when they change meanwhile', async () => {
  const s = await ownersCommandSchedule();
  const runner = p.services.scheduleRunner;
  const runNow = runner.runNow;
  // the owner's switch to a power task commits after the service's first read and before the run is made
  runner.runNow = async (...args: Parameters<typeof runNow>) => {
    const switched = await p.request('PATCH', S(`/${s.id}`), { token: owner.token, body: { tasks: power } });
    expect(switched.status).toBe(200);
    return runNow.apply(runner, args);
  };
  let r;
  try {
    r = await p.request('POST', S(`/${s.id}/run`), { token: sub.token });
  } finally {
    runner.runNow = runNow;
  }
  await runner.idle();
  expectError(r, 403, 'FORBIDDEN');
  expect(r.body.error.message).toBe(POWER_REFUSED);
  expect((await p.request('GET', S(`/${s.id}/runs`), { token: owner.token })).body.meta.total).toBe(0);
});

test('a change is checked on the tasks it is stored with: a concurrent switch of the tasks waits for it', async () => {
  const s = await ownersCommandSchedule();
  const activity = p.services.activity;
  const record = activity.record;
  let ownerSwitch: Promise<any> | undefined;
  // once the subuser's change has been checked (it is being recorded), the owner switches the tasks to a
  // power start; the change goes on once the switch is done or has waited 1.5 s (for the subuser's row lock)
  activity.record = async (...args: Parameters<typeof record>) => {
    const [entry] = args;
    if (entry.event === 'server:schedule.update' && entry.actor?.user.id === sub.user.id && !ownerSwitch) {
      ownerSwitch = p.request('PATCH', S(`/${s.id}`), { token: owner.token, body: { tasks: power } });
      await Promise.race([ownerSwitch, sleep(1500)]);
    }
    return record.apply(activity, args);
  };
  let changed;
  try {
    changed = await p.request('PATCH', S(`/${s.id}`), { token: sub.token, body: { enabled: true } });
  } finally {
    activity.record = record;
  }
  const switched = await ownerSwitch!;
  // the subuser enabled the command schedule; the owner's switch came after, on top of it
  expect([changed.status, changed.body.data?.tasks?.[0]?.action]).toEqual([200, 'command']);
  expect([switched.status, switched.body.data.enabled, switched.body.data.tasks[0].action]).toEqual([200, true, 'power']);
  // the subuser cannot enable it again now that it starts the server
  await p.request('PATCH', S(`/${s.id}`), { token: owner.token, body: { enabled: false } });
  const again = await p.request('PATCH', S(`/${s.id}`), { token: sub.token, body: { enabled: true } });
  expectError(again, 403, 'FORBIDDEN');
  expect(again.body.error.message).toBe(POWER_REFUSED);
});
