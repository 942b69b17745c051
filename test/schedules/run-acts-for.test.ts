/**
 * A schedule run started by hand acts for whoever started it, task by task: a subuser removed or
 * narrowed during the run stops acting at the next task (docs/schedules.md), and nothing more is sent
 * in their name.
 */
import { createLocalShellServer, endedScheduleRun, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { sleep } from '../support/wait.js';

jest.setTimeout(90_000);

let p: TestPlatform;
let admin: { token: string };
let owner: { token: string; user: any; email: string; password: string };

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0 });
  admin = await p.admin();
  owner = await p.newUser('owner');
}, 90_000);
afterAll(async () => {
  await p?.stop();
}, 60_000);

/**
 * A running server, a subuser holding the schedule keys and control.console, and a two-task schedule
 * of theirs (`say one`, then `say two` 5 s later) that they have just run by hand.
 */
async function runStartedBySubuser(name: string): Promise<{ id: string; sub: Awaited<ReturnType<TestPlatform['newUser']>>; scheduleId: string }> {
  const id = await createLocalShellServer(p, admin.token, owner.token, name, 'echo ready; exec cat');
  await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token });
  await waitForStatus(p, owner.token, id, 'running');
  const sub = await p.newUser(name);
  expect((await p.request('POST', `/api/v1/servers/${id}/subusers`, { token: owner.token, body: { email: sub.email, permissions: ['schedule.create', 'schedule.read', 'schedule.update', 'control.console'] } })).status).toBe(201);
  const s = await p.request('POST', `/api/v1/servers/${id}/schedules`, { token: sub.token, body: { name: 'two steps', cron: '0 0 1 1 *', enabled: false, tasks: [
    { action: 'command', payload: { command: 'say one' } },
    { action: 'command', payload: { command: 'say two' }, offsetSeconds: 5 },
  ] } });
  expect(s.status).toBe(201);
  expect((await p.request('POST', `/api/v1/servers/${id}/schedules/${s.body.data.id}/run`, { token: sub.token })).status).toBeLessThan(300);
  await sleep(1000);
  return { id, sub, scheduleId: s.body.data.id };
}

/** The console commands recorded as `userId`'s after `since`. */
async function commandsOf(serverId: string, userId: string, since: number): Promise<unknown[]> {
  const act = await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:console.command&limit=100`, { token: owner.token });
  return act.body.data.filter((e: any) => e.actor?.id === userId && Date.parse(e.createdAt) > since).map((e: any) => e.properties.command);
}

test('a removed subuser\u2019s manual schedule run does not go on acting in their name after the removal', async () => {
  const { id, sub, scheduleId } = await runStartedBySubuser('sched-sub');
  expect((await p.request('DELETE', `/api/v1/servers/${id}/subusers/${sub.user.id}`, { token: owner.token })).status).toBe(204);
  const removedAt = Date.now();
  const run = await endedScheduleRun(p, owner.token, id, scheduleId);
  const afterRemoval = await commandsOf(id, sub.user.id, removedAt);
  await p.request('DELETE', `/api/v1/servers/${id}`, { token: owner.token });
  expect(run.tasks.map((t: any) => [t.status, t.error])).toEqual([
    ['completed', null],
    ['failed', 'whoever started this run no longer has access to this server'],
  ]);
  expect(run.status).toBe('failed');
  expect(afterRemoval).toEqual([]);
});

test('a subuser whose control.console key is taken away mid-run: the run\u2019s later command task is not sent in their name', async () => {
  const { id, sub, scheduleId } = await runStartedBySubuser('sched-narrow');
  expect((await p.request('PATCH', `/api/v1/servers/${id}/subusers/${sub.user.id}`, { token: owner.token, body: { permissions: ['schedule.read'] } })).status).toBe(200);
  const changedAt = Date.now();
  const run = await endedScheduleRun(p, owner.token, id, scheduleId);
  const afterChange = await commandsOf(id, sub.user.id, changedAt);
  await p.request('DELETE', `/api/v1/servers/${id}`, { token: owner.token });
  expect(run.tasks[1]).toMatchObject({ status: 'failed', error: 'whoever started this run no longer holds the "control.console" permission this task needs' });
  expect(afterChange).toEqual([]);
});
