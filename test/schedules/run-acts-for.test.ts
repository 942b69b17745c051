/**
 * A schedule run started by hand acts for whoever started it, task by task: a subuser removed or
 * narrowed during the run stops acting at the next task (docs/schedules.md), and nothing more is sent
 * in their name.
 */
import { createLocalShellServer, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { sleep, until } from '../support/wait.js';

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

/** The schedule's last run, once it has ended. */
async function endedRun(serverId: string, scheduleId: string): Promise<any> {
  return until(async () => {
    const runs = await p.request('GET', `/api/v1/servers/${serverId}/schedules/${scheduleId}/runs`, { token: owner.token });
    const last = runs.body.data[0];
    return last && last.status !== 'running' ? last : null;
  }, 30_000, 'the run to end');
}

const makeServer = (name: string, command = 'echo ready; exec sleep 600'): Promise<string> => createLocalShellServer(p, admin.token, owner.token, name, command);

test('a removed subuser\u2019s manual schedule run does not go on acting in their name after the removal', async () => {
  const id = await makeServer('sched-sub', 'echo ready; exec cat');
  await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token });
  await waitForStatus(p, owner.token, id, 'running');
  const sub = await p.newUser('sched-sub');
  expect((await p.request('POST', `/api/v1/servers/${id}/subusers`, { token: owner.token, body: { email: sub.email, permissions: ['schedule.create', 'schedule.read', 'schedule.update', 'control.console'] } })).status).toBe(201);
  const s = await p.request('POST', `/api/v1/servers/${id}/schedules`, { token: sub.token, body: { name: 'two steps', cron: '0 0 1 1 *', enabled: false, tasks: [
    { action: 'command', payload: { command: 'say one' } },
    { action: 'command', payload: { command: 'say two' }, offsetSeconds: 5 },
  ] } });
  expect(s.status).toBe(201);
  expect((await p.request('POST', `/api/v1/servers/${id}/schedules/${s.body.data.id}/run`, { token: sub.token })).status).toBeLessThan(300);
  await sleep(1000);
  expect((await p.request('DELETE', `/api/v1/servers/${id}/subusers/${sub.user.id}`, { token: owner.token })).status).toBe(204);
  const removedAt = Date.now();
  const run = await endedRun(id, s.body.data.id);
  const act = await p.request('GET', `/api/v1/servers/${id}/activity?event=server:console.command&limit=100`, { token: owner.token });
  const afterRemoval = act.body.data.filter((e: any) => e.actor?.id === sub.user.id && Date.parse(e.createdAt) > removedAt);
  await p.request('DELETE', `/api/v1/servers/${id}`, { token: owner.token });
  expect(run.tasks.map((t: any) => [t.status, t.error])).toEqual([
    ['completed', null],
    ['failed', 'whoever started this run no longer has access to this server'],
  ]);
  expect(run.status).toBe('failed');
  expect(afterRemoval.map((e: any) => e.properties)).toEqual([]);
});

test('a subuser whose control.console key is taken away mid-run: the run\u2019s later command task is not sent in their name', async () => {
  const id = await makeServer('sched-narrow', 'echo ready; exec cat');
  await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token });
  await waitForStatus(p, owner.token, id, 'running');
  const sub = await p.newUser('sched-narrow');
  expect((await p.request('POST', `/api/v1/servers/${id}/subusers`, { token: owner.token, body: { email: sub.email, permissions: ['schedule.create', 'schedule.read', 'schedule.update', 'control.console'] } })).status).toBe(201);
  const s = await p.request('POST', `/api/v1/servers/${id}/schedules`, { token: sub.token, body: { name: 'two steps', cron: '0 0 1 1 *', enabled: false, tasks: [
    { action: 'command', payload: { command: 'say one' } },
    { action: 'command', payload: { command: 'say two' }, offsetSeconds: 5 },
  ] } });
  expect(s.status).toBe(201);
  expect((await p.request('POST', `/api/v1/servers/${id}/schedules/${s.body.data.id}/run`, { token: sub.token })).status).toBeLessThan(300);
  await sleep(1000);
  expect((await p.request('PATCH', `/api/v1/servers/${id}/subusers/${sub.user.id}`, { token: owner.token, body: { permissions: ['schedule.read'] } })).status).toBe(200);
  const changedAt = Date.now();
  const run = await endedRun(id, s.body.data.id);
  const act = await p.request('GET', `/api/v1/servers/${id}/activity?event=server:console.command&limit=100`, { token: owner.token });
  const afterChange = act.body.data.filter((e: any) => e.actor?.id === sub.user.id && Date.parse(e.createdAt) > changedAt);
  await p.request('DELETE', `/api/v1/servers/${id}`, { token: owner.token });
  expect(run.tasks[1]).toMatchObject({ status: 'failed', error: 'whoever started this run no longer holds the "control.console" permission this task needs' });
  expect(afterChange.map((e: any) => e.properties.command)).toEqual([]);
});
