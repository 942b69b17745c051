/**
 * Edges of schedules against a real panel and its local node agent: a cron expression that never
 * matches a date is a 422 on `cron` (REST create and update, GraphQL) while a rare one (29 February)
 * is accepted, and a run under way stops before its next task once its schedule is deleted, while a
 * schedule merely disabled or edited lets the run go on with the tasks it started with. A `cat`
 * server echoes each command to its console.
 */
import { blueprintsByKey, expectFieldError, localNodeId, startWithConsole, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { gql } from '../graphql/gql.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let owner: { token: string; user: any; email: string };
let running: string; // a started `cat` server on the local node
let lines: string[] = [];
let unsubscribe: (() => void) | undefined;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, scheduleTickMs: 0, rateLimits: { general: 100_000, auth: 100_000, admin: 100_000 } });
  const admin = (await p.admin()).token;
  owner = await p.newUser('owner');
  const [local, bps] = await Promise.all([localNodeId(p, admin), blueprintsByKey(p, owner.token)]);
  const body = { name: 'edges', nodeId: local, blueprintId: bps['shell-command'].id, memory: 64, cpu: 10, disk: 128, variables: { COMMAND: 'cat' } };
  const created = await p.request('POST', '/api/v1/servers', { token: owner.token, body });
  if (created.status !== 201) throw new Error(created.text);
  running = created.body.data.id;
  await waitForStatus(p, owner.token, running, 'offline');
  ({ lines, stop: unsubscribe } = await startWithConsole(p, owner.token, running));
}, 90_000);
afterAll(async () => {
  unsubscribe?.();
  await p?.stop();
}, 60_000);

const S = (sub = '') => `/api/v1/servers/${running}/schedules${sub}`;
const command = (text: string, offsetSeconds = 0) => ({ action: 'command', payload: { command: text }, offsetSeconds });

async function create(body: Record<string, unknown>): Promise<any> {
  const r = await p.request('POST', S(), { token: owner.token, body: { name: 'edge', cron: '30 4 * * *', tasks: [command('noop')], ...body } });
  if (r.status !== 201) throw new Error(r.text);
  return r.body.data;
}

/** Starts a run now; resolves with its id once the console has echoed `first` (its first task ran). */
async function startRun(scheduleId: string, first: string): Promise<string> {
  const started = await p.request('POST', S(`/${scheduleId}/run`), { token: owner.token });
  expect(started.status).toBe(201);
  await until(() => lines.includes(first), 10_000, `the echoed ${first}`);
  return started.body.data.id;
}

/** The server's activity entries about the schedule or made by its runs. */
async function scheduleEvents(scheduleId: string): Promise<any[]> {
  const r = await p.request('GET', `/api/v1/servers/${running}/activity?limit=100`, { token: owner.token });
  expect(r.status).toBe(200);
  return r.body.data.filter((e: any) => e.properties?.scheduleId === scheduleId);
}

test('a cron expression that never matches a date is a 422 on cron; 29 February is accepted', async () => {
  const never = ['0 0 30 2 *', '0 0 31 4 *', '* * 31 11 *', '0 12 30,31 2 *'];
  const total = async () => (await p.request('GET', S(), { token: owner.token })).body.meta.total;
  const before = await total();
  for (const cron of never) {
    for (const timezone of ['UTC', 'Pacific/Kiritimati']) {
      const r = await p.request('POST', S(), { token: owner.token, body: { name: 'never', cron, timezone, tasks: [command('x')] } });
      expectFieldError(r, 'cron');
      expect(r.body.error.details.fields.cron).toMatch(/never matches a date/);
    }
  }
  expectFieldError(await p.request('POST', S(), { token: owner.token, body: { name: 'never', cron: '0 0 30 2 *', enabled: false, tasks: [command('x')] } }), 'cron');
  expect(await total()).toBe(before);

  const s = await create({ timezone: 'Europe/Berlin' });
  expectFieldError(await p.request('PATCH', S(`/${s.id}`), { token: owner.token, body: { cron: '0 0 31 4 *' } }), 'cron');
  expect((await p.request('GET', S(`/${s.id}`), { token: owner.token })).body.data).toMatchObject({ cron: '30 4 * * *', nextRunAt: s.nextRunAt });
  const bad = await gql(p, 'mutation($id: ID!) { createSchedule(serverId: $id, input: { name: "gql", cron: "0 0 30 2 *", tasks: [{ action: "backup" }] }) { id } }', { id: running }, { token: owner.token });
  expect(bad.body.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: { cron: expect.stringMatching(/never matches a date/) } } });

  // rare but real: 29 February (up to eight years away), in a zone far from UTC, by create and update
  const leap = await create({ cron: '0 0 29 2 *', timezone: 'Pacific/Kiritimati' });
  expect(leap).toMatchObject({ enabled: true, nextRunAt: expect.any(String) });
  const day = (iso: string, timeZone: string) => new Intl.DateTimeFormat('en-GB', { timeZone, day: 'numeric', month: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(iso));
  expect(day(leap.nextRunAt, 'Pacific/Kiritimati')).toBe('29/02, 00:00');
  const patched = await p.request('PATCH', S(`/${s.id}`), { token: owner.token, body: { cron: '0 6 29 2 *' } });
  expect(patched.status).toBe(200);
  expect(day(patched.body.data.nextRunAt, 'Europe/Berlin')).toBe('29/02, 06:00');
});

test('a run goes on with its tasks when its schedule is disabled or edited, and stops when it is deleted', async () => {
  const tag = `edge-${Date.now()}`;
  const edited = await create({ enabled: false, tasks: [command(`${tag}-a1`), command(`${tag}-a2`, 3)] });
  await startRun(edited.id, `${tag}-a1`);
  const patch = await p.request('PATCH', S(`/${edited.id}`), { token: owner.token, body: { enabled: false, name: 'changed', tasks: [command(`${tag}-new`)] } });
  expect(patch.status).toBe(200);
  await p.services.scheduleRunner.idle();
  const [editedRun] = (await p.request('GET', S(`/${edited.id}/runs`), { token: owner.token })).body.data;
  expect(editedRun).toMatchObject({ status: 'completed', tasks: [{ sequence: 1, status: 'completed' }, { sequence: 2, status: 'completed' }] });
  await until(() => lines.includes(`${tag}-a2`), 10_000, 'the second command of the edited schedule');
  expect(lines).not.toContain(`${tag}-new`);

  const doomed = await create({ enabled: false, tasks: [command(`${tag}-d1`), command(`${tag}-d2`, 3), { action: 'power', payload: { action: 'restart' } }] });
  const runId = await startRun(doomed.id, `${tag}-d1`);
  expect((await p.request('DELETE', S(`/${doomed.id}`), { token: owner.token })).status).toBe(204);
  await p.services.scheduleRunner.idle();
  expect(lines).not.toContain(`${tag}-d2`);
  // the schedule, its run, the first command and the delete: no second command and no restart
  const events = await scheduleEvents(doomed.id);
  const described = events.map((e: any) => `${e.event} ${e.properties.command ?? ''}`.trim()).sort();
  expect(described).toEqual([`server:console.command ${tag}-d1`, 'server:schedule.create', 'server:schedule.delete', 'server:schedule.run']);
  expect(events.find((e: any) => e.event === 'server:schedule.run').properties.runId).toBe(runId);
  expect((await p.request('GET', `/api/v1/servers/${running}`, { token: owner.token })).body.data.status).toBe('running');
  expect((await p.request('GET', S(`/${doomed.id}/runs`), { token: owner.token })).status).toBe(404); // its history went with it
});

test('cron syntax is the contract\u2019s (lists, ranges, steps, names), and an error names the value as written', async () => {
  for (const cron of ['0 0 L * *', '0 0 15W * *', '0 0 * * 1#2', '0 0 ? * *', '0 0 * * 5L', '0 0 LW * *']) {
    expectFieldError(await p.request('POST', S(), { token: owner.token, body: { name: 'extension', cron, tasks: [command('x')] } }), 'cron');
  }
  const messages: Record<string, string> = {};
  for (const cron of ['0 0 0 * *', '0 0 * 13 *', '0 0 * 0 *', '0 0 * FOO *']) {
    const r = await p.request('POST', S(), { token: owner.token, body: { name: 'range', cron, tasks: [command('x')] } });
    expectFieldError(r, 'cron');
    messages[cron] = r.body.error.details.fields.cron;
  }
  expect(messages).toEqual({
    '0 0 0 * *': expect.stringContaining('day of month: 0 is out of range (1-31)'),
    '0 0 * 13 *': expect.stringContaining('month: 13 is out of range (1-12)'),
    '0 0 * 0 *': expect.stringContaining('month: 0 is out of range (1-12)'),
    '0 0 * FOO *': expect.stringContaining('month: "FOO" is not a number or a name'),
  });
  // names, lists, ranges and steps still pass, in any case
  for (const cron of ['0 6 * * mon-FRI', '0 0 1-31/2 jan,Dec *', '*/5 0-23/2 * * 0,7']) expect((await create({ cron })).cron).toBe(cron);
});

test('a zone is stored under the name given, in the zone database\u2019s spelling', async () => {
  const stored: Record<string, string> = {};
  for (const timezone of ['Europe/Kyiv', 'Asia/Kolkata', 'America/Nuuk', 'US/Pacific', 'europe/berlin', 'utc']) stored[timezone] = (await create({ timezone })).timezone;
  expect(stored).toEqual({ 'Europe/Kyiv': 'Europe/Kyiv', 'Asia/Kolkata': 'Asia/Kolkata', 'America/Nuuk': 'America/Nuuk', 'US/Pacific': 'US/Pacific', 'europe/berlin': 'Europe/Berlin', utc: 'UTC' });
});

test('a form sent back whole (the same cron, zone and switch) keeps a run that is due and not yet claimed', async () => {
  const s = await create({ cron: '* * * * *', timezone: 'Europe/Berlin' });
  const due = new Date(Date.now() - 2_000);
  await p.orm.em.fork().getConnection().execute('update schedules set next_run_at = ? where id = ?', [due, s.id]);
  const same = await p.request('PATCH', S(`/${s.id}`), { token: owner.token, body: { name: 'renamed', cron: '* * * * *', timezone: 'Europe/Berlin', enabled: true } });
  expect(same.status).toBe(200);
  expect(same.body.data.nextRunAt).toBe(due.toISOString());
  // a real change moves it
  const moved = await p.request('PATCH', S(`/${s.id}`), { token: owner.token, body: { cron: '30 4 * * *' } });
  expect(new Date(moved.body.data.nextRunAt).getTime()).toBeGreaterThan(Date.now());
  await p.request('DELETE', S(`/${s.id}`), { token: owner.token });
});
