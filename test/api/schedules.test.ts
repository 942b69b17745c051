/**
 * Schedules over REST against a real panel and its local node agent: CRUD and what the service
 * computes (`nextRunAt` in the schedule's zone), bad input (422 with the field, nothing created),
 * the keys of a subuser, running now (a `cat` server echoes the command), the history of runs,
 * `onlyWhenOnline`, failing tasks (node offline, backups, a deleted server) and the activity log.
 * The platform's own timer is off (`scheduleTickMs: 0`): runs start by hand or by ticking the runner.
 */
import { ScheduleRunner } from '../../src/schedules/runner.js';
import { taskPerformer } from '../../src/schedules/tasks.js';
import { blueprintsByKey, createNode, expectError, expectFieldError, localNodeId, startWithConsole, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { gql } from '../graphql/gql.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let admin: string;
let owner: { token: string; user: any; email: string };
let friend: { token: string; user: any; email: string };
let running: string; // a started `cat` server on the local node
let idle: string; // an installed, stopped server on the local node
let unreachable: string; // a server on a node nobody answers for
let lines: string[] = [];
let unsubscribe: (() => void) | undefined;

async function newServer(nodeId: string, blueprintId: string, variables?: Record<string, string>): Promise<string> {
  const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: `s ${Math.random()}`, nodeId, blueprintId, memory: 64, cpu: 10, disk: 128, ...(variables ? { variables } : {}) } });
  if (r.status !== 201) throw new Error(r.text);
  return r.body.data.id;
}

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, scheduleTickMs: 0, stopGraceSeconds: 2 });
  admin = (await p.admin()).token;
  owner = await p.newUser('owner');
  friend = await p.newUser('friend');
  const [local, bps, far] = await Promise.all([localNodeId(p, admin), blueprintsByKey(p, owner.token), createNode(p, admin)]);
  const shell = bps['shell-command'].id;
  running = await newServer(local, shell, { COMMAND: 'cat' });
  idle = await newServer(local, shell, { COMMAND: 'cat' });
  unreachable = await newServer(far.id, shell);
  await waitForStatus(p, owner.token, running, 'offline');
  await waitForStatus(p, owner.token, idle, 'offline');
  ({ lines, stop: unsubscribe } = await startWithConsole(p, owner.token, running));
}, 90_000);
afterAll(async () => {
  unsubscribe?.();
  await p?.stop();
}, 60_000);

const S = (server: string, sub = '') => `/api/v1/servers/${server}/schedules${sub}`;
const backupTask = { action: 'backup' };

async function create(server: string, body: Record<string, unknown>, token = owner.token): Promise<any> {
  const r = await p.request('POST', S(server), { token, body: { name: 'nightly', cron: '30 4 * * *', tasks: [backupTask], ...body } });
  if (r.status !== 201) throw new Error(r.text);
  return r.body.data;
}

/** Runs the schedule now, waits for the run to finish, and returns it as the history shows it. */
async function runNow(server: string, id: string): Promise<any> {
  const started = await p.request('POST', S(server, `/${id}/run`), { token: owner.token });
  expect(started.status).toBe(201);
  expect(started.body.data).toMatchObject({ trigger: 'manual', status: 'running', finishedAt: null });
  await p.services.scheduleRunner.idle();
  const runs = await p.request('GET', S(server, `/${id}/runs`), { token: owner.token });
  expect(runs.body.data[0].id).toBe(started.body.data.id);
  return runs.body.data[0];
}

const localTime = (iso: string, timeZone: string) => new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(iso));

test('create, read, list, change and delete; nextRunAt is the next 04:30 in the zone', async () => {
  const before = Date.now();
  const s = await create(idle, { timezone: 'Europe/Berlin', tasks: [{ action: 'command', payload: { command: 'say hi' }, sequence: 7 }, { action: 'power', payload: { action: 'restart' }, offsetSeconds: 30, continueOnFailure: true }] });
  expect(s).toEqual({
    id: expect.any(String),
    serverId: idle,
    name: 'nightly',
    cron: '30 4 * * *',
    timezone: 'Europe/Berlin',
    enabled: true,
    onlyWhenOnline: false,
    tasks: [
      { sequence: 1, action: 'command', payload: { command: 'say hi' }, offsetSeconds: 0, continueOnFailure: false },
      { sequence: 2, action: 'power', payload: { action: 'restart' }, offsetSeconds: 30, continueOnFailure: true },
    ],
    lastRunAt: null,
    nextRunAt: expect.any(String),
    createdAt: expect.any(String),
    updatedAt: expect.any(String),
  });
  expect(localTime(s.nextRunAt, 'Europe/Berlin')).toBe('04:30');
  expect(Date.parse(s.nextRunAt) - before).toBeGreaterThan(0);
  expect(Date.parse(s.nextRunAt) - before).toBeLessThanOrEqual(86_400_000 + 3_600_000);

  expect((await p.request('GET', S(idle, `/${s.id}`), { token: owner.token })).body.data).toEqual(s);
  const list = await p.request('GET', S(idle), { token: owner.token });
  expect(list.body.meta).toMatchObject({ page: 1, limit: 20 });
  expect(list.body.data.map((x: any) => x.id)).toContain(s.id);

  const zoned = await p.request('PATCH', S(idle, `/${s.id}`), { token: owner.token, body: { timezone: 'America/New_York', name: 'renamed' } });
  expect(zoned.status).toBe(200);
  expect(zoned.body.data).toMatchObject({ name: 'renamed', timezone: 'America/New_York', cron: '30 4 * * *', tasks: s.tasks });
  expect(localTime(zoned.body.data.nextRunAt, 'America/New_York')).toBe('04:30');
  const off = await p.request('PATCH', S(idle, `/${s.id}`), { token: owner.token, body: { enabled: false } });
  expect(off.body.data).toMatchObject({ enabled: false, nextRunAt: null });
  const on = await p.request('PATCH', S(idle, `/${s.id}`), { token: owner.token, body: { enabled: true, cron: '0 6 * * MON-FRI', tasks: [backupTask] } });
  expect(localTime(on.body.data.nextRunAt, 'America/New_York')).toBe('06:00');
  expect(on.body.data.tasks).toEqual([{ sequence: 1, action: 'backup', payload: {}, offsetSeconds: 0, continueOnFailure: false }]);
  // nothing named: the schedule as it is, and no entry in the activity log (one with `changed: []` was written)
  const unchanged = await p.request('PATCH', S(idle, `/${s.id}`), { token: owner.token, body: {} });
  expect([unchanged.status, unchanged.body.data]).toEqual([200, on.body.data]);

  expect((await p.request('DELETE', S(idle, `/${s.id}`), { token: owner.token })).status).toBe(204);
  expectError(await p.request('GET', S(idle, `/${s.id}`), { token: owner.token }), 404, 'NOT_FOUND');
  expectError(await p.request('DELETE', S(idle, `/${s.id}`), { token: owner.token }), 404, 'NOT_FOUND');

  const events = await p.request('GET', `/api/v1/servers/${idle}/activity?event=server:schedule`, { token: owner.token });
  expect(events.body.data.map((e: any) => e.event)).toEqual(['server:schedule.delete', 'server:schedule.update', 'server:schedule.update', 'server:schedule.update', 'server:schedule.create']);
  expect(events.body.data[4]).toMatchObject({ actor: { id: owner.user.id }, properties: { scheduleId: s.id, name: 'nightly', cron: '30 4 * * *' } });
});

test('bad input is a 422 naming the field, and nothing is created', async () => {
  const bad: [Record<string, unknown>, string][] = [
    [{ cron: '* * * * * *' }, 'cron'], // six fields (seconds)
    [{ cron: '0 0 * * * 2027' }, 'cron'],
    [{ cron: '30 4 * *' }, 'cron'],
    [{ cron: '61 4 * * *' }, 'cron'],
    [{ cron: 'every day' }, 'cron'],
    [{ cron: '@daily' }, 'cron'],
    [{ cron: 5 }, 'cron'],
    [{ timezone: 'Mars/Olympus' }, 'timezone'],
    [{ timezone: '+01:00' }, 'timezone'],
    [{ timezone: '' }, 'timezone'],
    [{ name: '' }, 'name'],
    [{ tasks: [] }, 'tasks'],
    [{ tasks: Array.from({ length: 11 }, () => backupTask) }, 'tasks'],
    [{ tasks: [{ action: 'explode' }] }, 'tasks.0.action'],
    [{ tasks: [{ action: 'command', payload: { command: 'a\nb' } }] }, 'tasks.0.payload.command'],
    [{ tasks: [{ action: 'command' }] }, 'tasks.0.payload'],
    [{ tasks: [{ action: 'power', payload: { action: 'explode' } }] }, 'tasks.0.payload.action'],
    [{ tasks: [{ action: 'backup', offsetSeconds: 901 }] }, 'tasks.0.offsetSeconds'],
    [{ tasks: [{ action: 'backup', offsetSeconds: -1 }] }, 'tasks.0.offsetSeconds'],
    [{ tasks: [{ action: 'backup', offsetSeconds: 1.5 }] }, 'tasks.0.offsetSeconds'],
    [{ tasks: [backupTask, { action: 'backup', continueOnFailure: 'yes' }] }, 'tasks.1.continueOnFailure'],
    [{ enabled: 'no' }, 'enabled'],
  ];
  const total = async () => (await p.request('GET', S(idle), { token: owner.token })).body.meta.total;
  const before = await total();
  for (const [body, field] of bad) {
    const r = await p.request('POST', S(idle), { token: owner.token, body: { name: 'bad', cron: '30 4 * * *', tasks: [backupTask], ...body } });
    try {
      expectFieldError(r, field);
    } catch (err) {
      throw new Error(`${JSON.stringify(body)}: ${r.status} ${r.text}\n${(err as Error).message}`);
    }
  }
  expect(await total()).toBe(before);
  // an offset out of range names the range, below it as above it, over REST and GraphQL alike
  for (const offsetSeconds of [-1, 901]) {
    const input = { name: 'bad', cron: '30 4 * * *', tasks: [{ action: 'backup', offsetSeconds }] };
    const r = await p.request('POST', S(idle), { token: owner.token, body: input });
    const g = await gql(p, 'mutation($id: ID!, $i: CreateScheduleInput!) { createSchedule(serverId: $id, input: $i) { id } }', { id: idle, i: input }, { token: owner.token });
    expect([r.body.error.details.fields['tasks.0.offsetSeconds'], g.body.errors?.[0]?.extensions.details.fields['tasks.0.offsetSeconds']]).toEqual(['must be from 0 to 900', 'must be from 0 to 900']);
  }
  const s = await create(idle, {});
  expectFieldError(await p.request('PATCH', S(idle, `/${s.id}`), { token: owner.token, body: { cron: '*/5 * * * * *' } }), 'cron');
  expectFieldError(await p.request('PATCH', S(idle, `/${s.id}`), { token: owner.token, body: { timezone: 'Europe/Atlantis' } }), 'timezone');
  expect((await p.request('GET', S(idle, `/${s.id}`), { token: owner.token })).body.data).toMatchObject({ cron: '30 4 * * *', timezone: 'UTC' });
  // ids: not a UUID, or a schedule of another server, is a 404
  expectError(await p.request('GET', S(idle, '/nope'), { token: owner.token }), 404, 'NOT_FOUND');
  expectError(await p.request('GET', S(running, `/${s.id}`), { token: owner.token }), 404, 'NOT_FOUND');
  expectFieldError(await p.request('GET', S(idle, '?limit=101'), { token: owner.token }), 'limit');
});

test('a cron is stored with single spaces, a time zone under its canonical name', async () => {
  const s = await create(idle, { cron: ' 0\t4  *\n* * ', timezone: 'europe/berlin' });
  expect(s).toMatchObject({ cron: '0 4 * * *', timezone: 'Europe/Berlin' });
  expect(localTime(s.nextRunAt, 'Europe/Berlin')).toBe('04:00');
  const patched = await p.request('PATCH', S(idle, `/${s.id}`), { token: owner.token, body: { cron: '15\u00a04 * *\t\tMON', timezone: 'utc' } });
  expect(patched.body.data).toMatchObject({ cron: '15 4 * * MON', timezone: 'UTC' });
  expect((await p.request('GET', S(idle, `/${s.id}`), { token: owner.token })).body.data).toMatchObject({ cron: '15 4 * * MON', timezone: 'UTC' });
  expect((await p.request('DELETE', S(idle, `/${s.id}`), { token: owner.token })).status).toBe(204);
});

test('a subuser needs the schedule key of each operation; a stranger sees nothing', async () => {
  const s = await create(idle, {});
  expect((await p.request('POST', `/api/v1/servers/${idle}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['schedule.read'] } })).status).toBe(201);
  expect((await p.request('GET', S(idle), { token: friend.token })).status).toBe(200);
  expect((await p.request('GET', S(idle, `/${s.id}/runs`), { token: friend.token })).status).toBe(200);
  expectError(await p.request('POST', S(idle), { token: friend.token, body: { name: 'x', cron: '* * * * *', tasks: [backupTask] } }), 403, 'FORBIDDEN');
  expectError(await p.request('PATCH', S(idle, `/${s.id}`), { token: friend.token, body: { enabled: false } }), 403, 'FORBIDDEN');
  expectError(await p.request('POST', S(idle, `/${s.id}/run`), { token: friend.token }), 403, 'FORBIDDEN');
  expectError(await p.request('DELETE', S(idle, `/${s.id}`), { token: friend.token }), 403, 'FORBIDDEN');
  expect((await p.request('PATCH', `/api/v1/servers/${idle}/subusers/${friend.user.id}`, { token: owner.token, body: { permissions: ['schedule.update'] } })).status).toBe(200);
  expectError(await p.request('GET', S(idle), { token: friend.token }), 403, 'FORBIDDEN');
  // running a schedule does what its tasks do: a backup task needs the backup keys too
  expectError(await p.request('POST', S(idle, `/${s.id}/run`), { token: friend.token }), 403, 'FORBIDDEN');
  expect((await p.request('PATCH', `/api/v1/servers/${idle}/subusers/${friend.user.id}`, { token: owner.token, body: { permissions: ['schedule.update', 'backup.create', 'backup.delete'] } })).status).toBe(200);
  expect((await p.request('POST', S(idle, `/${s.id}/run`), { token: friend.token })).status).toBe(201);
  await p.services.scheduleRunner.idle();
  const stranger = await p.newUser('stranger');
  expectError(await p.request('GET', S(idle), { token: stranger.token }), 404, 'NOT_FOUND');
  expectError(await p.request('GET', S(idle, `/${s.id}`), { token: stranger.token }), 404, 'NOT_FOUND');
});

test('a schedule acts for whoever makes, changes or runs it: each task needs the key its action needs', async () => {
  // a subuser with the schedule keys alone started the server, typed commands and made backups through a schedule
  const helper = await p.newUser('schedule keys only');
  const keys = ['schedule.read', 'schedule.create', 'schedule.update'];
  expect((await p.request('POST', `/api/v1/servers/${idle}/subusers`, { token: owner.token, body: { email: helper.email, permissions: keys } })).status).toBe(201);
  const tasks = { power: { action: 'power', payload: { action: 'start' } }, command: { action: 'command', payload: { command: 'say hi' } }, backup: backupTask };
  const needs: [keyof typeof tasks, string][] = [['power', 'control.start'], ['command', 'control.console'], ['backup', 'backup.create']];
  for (const [task, key] of needs) {
    const r = await p.request('POST', S(idle), { token: helper.token, body: { name: 'sneaky', cron: '* * * * *', tasks: [tasks[task]] } });
    expectError(r, 403, 'FORBIDDEN');
    expect(r.body.error.message).toBe(`A ${task} task needs the "${key}" permission on this server; ask its owner.`);
  }
  // nor by changing a schedule's tasks, nor by running the owner's
  const mine = await p.request('POST', S(idle), { token: owner.token, body: { name: 'owner start', cron: '0 4 * * *', tasks: [tasks.power] } });
  expectError(await p.request('PATCH', S(idle, `/${mine.body.data.id}`), { token: helper.token, body: { tasks: [tasks.command] } }), 403, 'FORBIDDEN');
  expectError(await p.request('POST', S(idle, `/${mine.body.data.id}/run`), { token: helper.token }), 403, 'FORBIDDEN');
  expect((await p.request('GET', S(idle, `/${mine.body.data.id}/runs`), { token: owner.token })).body.meta.total).toBe(0);
  // nor by enabling the owner's disabled power schedule, or making it run every minute
  const off = await p.request('POST', S(idle), { token: owner.token, body: { name: 'owner start, off', cron: '0 4 * * *', enabled: false, tasks: [tasks.power] } });
  for (const change of [{ enabled: true }, { cron: '* * * * *' }, { name: 'renamed', timezone: 'Europe/Paris' }]) {
    const r = await p.request('PATCH', S(idle, `/${off.body.data.id}`), { token: helper.token, body: change });
    expectError(r, 403, 'FORBIDDEN');
    expect(r.body.error.message).toBe('A power task needs the "control.start" permission on this server; ask its owner.');
  }
  expect((await p.request('GET', S(idle, `/${off.body.data.id}`), { token: owner.token })).body.data).toMatchObject({ name: 'owner start, off', cron: '0 4 * * *', enabled: false });
  // with the task's key it goes through
  expect((await p.request('PATCH', `/api/v1/servers/${idle}/subusers/${helper.user.id}`, { token: owner.token, body: { permissions: [...keys, 'control.console'] } })).status).toBe(200);
  expect((await p.request('POST', S(idle), { token: helper.token, body: { name: 'chat', cron: '0 4 * * *', tasks: [tasks.command] } })).status).toBe(201);
  for (const id of [mine.body.data.id, off.body.data.id]) expect((await p.request('DELETE', S(idle, `/${id}`), { token: owner.token })).status).toBe(204);
});

test('run now: the command reaches the server console, the history and the activity log record it', async () => {
  const marker = `hello-from-schedule-${Date.now()}`;
  const s = await create(running, { enabled: false, tasks: [{ action: 'command', payload: { command: marker } }, { action: 'command', payload: { command: `${marker}-2` }, offsetSeconds: 1 }] });
  const run = await runNow(running, s.id);
  expect(run).toEqual({
    id: expect.any(String),
    trigger: 'manual',
    status: 'completed',
    startedAt: expect.any(String),
    finishedAt: expect.any(String),
    tasks: [
      { sequence: 1, status: 'completed', error: null },
      { sequence: 2, status: 'completed', error: null },
    ],
  });
  expect(Date.parse(run.finishedAt) - Date.parse(run.startedAt)).toBeGreaterThanOrEqual(1000); // the offset was waited
  await until(() => lines.includes(marker) && lines.includes(`${marker}-2`), 10_000, 'the echoed commands');
  const after = (await p.request('GET', S(running, `/${s.id}`), { token: owner.token })).body.data;
  expect(after.lastRunAt).toBe(run.startedAt);
  expect(after.nextRunAt).toBeNull(); // disabled, and running it by hand does not change that
  const events = (await p.request('GET', `/api/v1/servers/${running}/activity`, { token: owner.token })).body.data;
  const runEntry = events.find((e: any) => e.event === 'server:schedule.run' && e.properties.scheduleId === s.id);
  expect(runEntry).toMatchObject({ actor: { id: owner.user.id }, properties: { runId: run.id, trigger: 'manual' } });
  const commands = events.filter((e: any) => e.event === 'server:console.command' && e.properties.scheduleId === s.id);
  expect(commands.map((e: any) => e.properties.command).sort()).toEqual([marker, `${marker}-2`]);
});

test('runs are paginated, newest first', async () => {
  const s = await create(idle, {});
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await runNow(idle, s.id)).id);
  const first = await p.request('GET', S(idle, `/${s.id}/runs?limit=2`), { token: owner.token });
  expect(first.body.meta).toEqual({ total: 3, page: 1, limit: 2 });
  const second = await p.request('GET', S(idle, `/${s.id}/runs?limit=2&page=2`), { token: owner.token });
  expect([...first.body.data, ...second.body.data].map((r: any) => r.id)).toEqual(ids.reverse());
  expectFieldError(await p.request('GET', S(idle, `/${s.id}/runs?page=0`), { token: owner.token }), 'page');
});

test('onlyWhenOnline: a run of a stopped server is skipped and recorded', async () => {
  const s = await create(idle, { onlyWhenOnline: true, tasks: [{ action: 'power', payload: { action: 'start' } }] });
  const run = await runNow(idle, s.id);
  expect(run.status).toBe('skipped');
  expect(run.tasks).toEqual([{ sequence: 1, status: 'skipped', error: expect.stringContaining('not running') }]);
  expect((await p.request('GET', `/api/v1/servers/${idle}`, { token: owner.token })).body.data.status).toBe('offline');
  // on a running server the same schedule runs
  const live = await create(running, { onlyWhenOnline: true, tasks: [{ action: 'command', payload: { command: 'online-only' } }] });
  expect((await runNow(running, live.id)).status).toBe('completed');
});

test('failing tasks: node offline, backups; continueOnFailure decides whether the next tasks run', async () => {
  const stop = await create(unreachable, { tasks: [{ action: 'command', payload: { command: 'x' } }, backupTask] });
  const r1 = await runNow(unreachable, stop.id);
  expect(r1.status).toBe('failed');
  expect(r1.tasks).toEqual([
    { sequence: 1, status: 'failed', error: expect.stringMatching(/^NODE_UNAVAILABLE: /) },
    { sequence: 2, status: 'skipped', error: 'an earlier task failed' },
  ]);
  const go = await create(unreachable, { tasks: [{ action: 'power', payload: { action: 'restart' }, continueOnFailure: true }, { ...backupTask, continueOnFailure: true }, backupTask] });
  const r2 = await runNow(unreachable, go.id);
  expect(r2.tasks).toEqual([
    { sequence: 1, status: 'failed', error: expect.stringMatching(/^(NODE_UNAVAILABLE|INVALID_STATE): /) },
    { sequence: 2, status: 'failed', error: expect.stringMatching(/^NODE_UNAVAILABLE: /) },
    { sequence: 3, status: 'failed', error: expect.stringMatching(/^NODE_UNAVAILABLE: /) },
  ]);
});

test('a schedule whose server is deleted during a run: the runner goes on with the others', async () => {
  const [local, bps] = await Promise.all([localNodeId(p, admin), blueprintsByKey(p, owner.token)]);
  const doomed = await newServer(local, bps['shell-command'].id, { COMMAND: 'cat' });
  await waitForStatus(p, owner.token, doomed, 'offline');
  const gone = await create(doomed, { cron: '* * * * *', tasks: [{ ...backupTask, continueOnFailure: true }, { action: 'power', payload: { action: 'start' }, offsetSeconds: 2 }] });
  const other = await create(running, { cron: '* * * * *', tasks: [{ action: 'command', payload: { command: 'still-here' } }] });
  // a runner with its own clock: both schedules are due at the same instant
  const due = new Date(Math.max(Date.parse(gone.nextRunAt), Date.parse(other.nextRunAt)));
  const runner = new ScheduleRunner(p.orm, p.services.activity, taskPerformer(p.services.power, p.services.backups, p.services.access, () => p.orm.em, 30), { now: () => due });
  expect(await runner.tick()).toBeGreaterThanOrEqual(2);
  expect((await p.request('DELETE', `/api/v1/servers/${doomed}`, { token: owner.token })).status).toBe(204);
  await runner.idle();
  expectError(await p.request('GET', S(doomed, `/${gone.id}/runs`), { token: owner.token }), 404, 'NOT_FOUND'); // its history went with it
  const runs = (await p.request('GET', S(running, `/${other.id}/runs`), { token: owner.token })).body.data;
  expect(runs).toEqual([expect.objectContaining({ trigger: 'cron', status: 'completed' })]);
  await until(() => lines.includes('still-here'), 10_000, 'the other schedule\'s command');
  // and it goes on ticking: the next minute runs the other schedule again
  const later = new Date(due.getTime() + 60_000);
  const next = new ScheduleRunner(p.orm, p.services.activity, taskPerformer(p.services.power, p.services.backups, p.services.access, () => p.orm.em, 30), { now: () => later });
  await next.tick();
  await next.idle();
  expect((await p.request('GET', S(running, `/${other.id}/runs`), { token: owner.token })).body.meta.total).toBe(2);
});

test('stopping the runner cuts a backup task\'s wait short: it and the tasks after it are skipped, the backup goes on', async () => {
  // the task polled its backup with a timer of its own: stopping the panel waited for the backup (hours
  // for a big one), and a task after it with no offset still ran
  const backupIds = async (): Promise<string[]> => (await p.request('GET', `/api/v1/servers/${idle}/backups?limit=100`, { token: owner.token })).body.data.map((b: any) => b.id);
  for (let attempt = 1; ; attempt++) {
    const s = await create(idle, { cron: '* * * * *', tasks: [backupTask, { action: 'command', payload: { command: 'after' } }] });
    const before = await backupIds();
    let waiting!: () => void;
    const backupPending = new Promise<'waiting'>((r) => (waiting = () => r('waiting')));
    const due = new Date(Date.parse(s.nextRunAt));
    const runner = new ScheduleRunner(p.orm, p.services.activity, taskPerformer(p.services.power, p.services.backups, p.services.access, () => p.orm.em, 30), {
      now: () => due,
      sleep: () => {
        waiting();
        return new Promise<void>(() => undefined); // the backup is never seen done: only the stop ends the wait
      },
    });
    const stop = runner.start(3_600_000);
    expect(await runner.tick()).toBe(1);
    // a small backup may be done before the task first looks: then the run ends on its own, and again
    const first = await Promise.race([backupPending, runner.idle().then(() => 'done' as const)]);
    await stop();
    const made = (await backupIds()).filter((id) => !before.includes(id));
    expect(made).toHaveLength(1);
    await until(async () => (await p.request('GET', `/api/v1/servers/${idle}/backups/${made[0]}`, { token: owner.token })).body.data.status === 'completed' || null, 30_000, 'the backup');
    const runs = (await p.request('GET', S(idle, `/${s.id}/runs`), { token: owner.token })).body.data;
    await p.request('DELETE', `/api/v1/servers/${idle}/backups/${made[0]}`, { token: owner.token });
    await p.request('DELETE', S(idle, `/${s.id}`), { token: owner.token });
    if (first === 'done' && attempt < 5) continue;
    expect(first).toBe('waiting');
    expect(runs[0]).toMatchObject({
      status: 'completed',
      tasks: [
        { sequence: 1, status: 'skipped', error: 'the panel stopped while this task waited for what it started (which goes on)' },
        { sequence: 2, status: 'skipped', error: 'the panel stopped before this task ran' },
      ],
    });
    break;
  }
}, 120_000);

test('GraphQL: the same operations, the same validation', async () => {
  const created = await gql(p, 'mutation($id: ID!) { createSchedule(serverId: $id, input: { name: "gql", cron: "0 3 * * SUN", timezone: "America/New_York", tasks: [{ action: "command", payload: { command: "hi" }, offsetSeconds: 5 }] }) { id cron timezone nextRunAt tasks { sequence action payload offsetSeconds continueOnFailure } } }', { id: idle }, { token: owner.token });
  expect(created.body.errors).toBeUndefined();
  const s = created.body.data.createSchedule;
  expect(s.tasks).toEqual([{ sequence: 1, action: 'command', payload: { command: 'hi' }, offsetSeconds: 5, continueOnFailure: false }]);
  expect(localTime(s.nextRunAt, 'America/New_York')).toBe('03:00');
  const bad = await gql(p, 'mutation($id: ID!) { createSchedule(serverId: $id, input: { name: "gql", cron: "* * * * * *", tasks: [{ action: "backup" }] }) { id } }', { id: idle }, { token: owner.token });
  expect(bad.body.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: { cron: expect.any(String) } } });
  const run = await gql(p, 'mutation($id: ID!, $s: ID!) { runSchedule(serverId: $id, scheduleId: $s) { id trigger status } }', { id: idle, s: s.id }, { token: owner.token });
  expect(run.body.data.runSchedule).toMatchObject({ trigger: 'manual', status: 'running' });
  await p.services.scheduleRunner.idle();
  const runs = await gql(p, 'query($id: ID!, $s: ID!) { scheduleRuns(serverId: $id, scheduleId: $s) { total items { status tasks { sequence status error } } } }', { id: idle, s: s.id }, { token: owner.token });
  expect(runs.body.data.scheduleRuns).toEqual({ total: 1, items: [{ status: 'failed', tasks: [{ sequence: 1, status: 'failed', error: expect.stringMatching(/^INVALID_STATE: /) }] }] });
  const updated = await gql(p, 'mutation($id: ID!, $s: ID!) { updateSchedule(serverId: $id, scheduleId: $s, input: { enabled: false }) { enabled nextRunAt } }', { id: idle, s: s.id }, { token: owner.token });
  expect(updated.body.data.updateSchedule).toEqual({ enabled: false, nextRunAt: null });
  expect((await gql(p, 'mutation($id: ID!, $s: ID!) { deleteSchedule(serverId: $id, scheduleId: $s) }', { id: idle, s: s.id }, { token: owner.token })).body.data.deleteSchedule).toBe(true);
  expect((await gql(p, 'query($id: ID!) { schedules(serverId: $id, limit: 100) { items { id } } }', { id: idle }, { token: owner.token })).body.data.schedules.items.map((x: any) => x.id)).not.toContain(s.id);
});
