/**
 * What an account keeps after an administrator takes its administrator role away (or deletes
 * it), beyond what test/api/accounts-admin.test.ts covers. docs/accounts.md "Administrators and
 * accounts": taking `admin` away closes at once what the account watched on other users' servers.
 */
import { createLocalDemoServer, createLocalShellServer, endedScheduleRun, waitForStatus } from '../support/fixtures.js';
import { CONSOLE_LINES, subscribe, trackedClients } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { sleep, until } from '../support/wait.js';

jest.setTimeout(90_000);

type Account = Awaited<ReturnType<TestPlatform['newUser']>>;
let p: TestPlatform;
let admin: { token: string; user: any };
let owner: Account;
const clients = trackedClients();

const U = (id: string) => `/api/v1/admin/users/${id}`;
const patch = (id: string, body: unknown) => p.request('PATCH', U(id), { token: admin.token, body });

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, rateLimits: { general: 100_000, auth: 100_000, admin: 100_000 } });
  admin = await p.admin();
  owner = await p.newUser('Owner');
}, 90_000);

afterAll(async () => {
  await clients.disposeAll();
  await p?.stop();
}, 60_000);

test('a GraphQL socket opened as a user, then used as an administrator on another user\'s server, is closed when the role is taken away', async () => {
  const serverId = await createLocalDemoServer(p, admin.token, owner.token, 'watched');
  const deputy = await p.newUser('Deputy');
  // the socket is opened while the account is a user ...
  let connections = 0;
  const c = clients.open(p.url, deputy.token, { lazy: false, onNonLazyError: () => undefined, on: { connected: () => void connections++ } });
  await until(() => connections === 1, 10_000, 'the socket to open');
  const denied = subscribe(c, CONSOLE_LINES, { id: serverId });
  await until(() => denied.done, 10_000, 'the subscription of a stranger to be refused');
  // ... and, once promoted (the role counts from the next operation), watches the owner's console
  expect((await patch(deputy.user.id, { role: 'admin' })).status).toBe(200);
  const before = p.services.console.hub.subscriberCount(serverId);
  const sub = subscribe(c, CONSOLE_LINES, { id: serverId });
  await until(() => p.services.console.hub.subscriberCount(serverId) > before, 10_000, 'the administrator\'s subscription to start');
  expect(sub.done).toBe(false);
  expect(connections).toBe(1); // the same socket, opened as a user

  expect((await patch(deputy.user.id, { role: 'user' })).status).toBe(200);
  // at once (CONTRACT §9: within a second); the wait spans two periodic 4 s checks too, which do not close it either
  await until(() => sub.done, 9_000, 'the subscription to end').catch(() => undefined);
  expect({ done: sub.done, watching: p.services.console.hub.subscriberCount(serverId) > before }).toEqual({ done: true, watching: false });
});

/** A running `cat` server of the owner's, and a two-task schedule on it (`say one`, then `say two` 5 s later). */
async function twoStepSchedule(name: string): Promise<{ id: string; scheduleId: string }> {
  const id = await createLocalShellServer(p, admin.token, owner.token, name, 'echo ready; exec cat');
  await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token });
  await waitForStatus(p, owner.token, id, 'running');
  const s = await p.request('POST', `/api/v1/servers/${id}/schedules`, { token: owner.token, body: { name: 'two steps', cron: '0 0 1 1 *', enabled: false, tasks: [
    { action: 'command', payload: { command: 'say one' } },
    { action: 'command', payload: { command: 'say two' }, offsetSeconds: 5 },
  ] } });
  expect(s.status).toBe(201);
  return { id, scheduleId: s.body.data.id };
}

async function commandsOf(serverId: string, userId: string, since: number): Promise<unknown[]> {
  const act = await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:console.command&limit=100`, { token: owner.token });
  return act.body.data.filter((e: any) => e.actor?.id === userId && Date.parse(e.createdAt) > since).map((e: any) => e.properties.command);
}

/** An administrator (promoted for the test) runs the owner's schedule by hand; `takeAway` then removes their access mid-run. */
async function adminRunThen(name: string, takeAway: (deputy: Account) => Promise<void>): Promise<{ run: any; after: unknown[] }> {
  const { id, scheduleId } = await twoStepSchedule(name);
  const deputy = await p.newUser(name);
  expect((await patch(deputy.user.id, { role: 'admin' })).status).toBe(200);
  expect((await p.request('POST', `/api/v1/servers/${id}/schedules/${scheduleId}/run`, { token: deputy.token })).status).toBeLessThan(300);
  await sleep(1000);
  await takeAway(deputy);
  const since = Date.now();
  const run = await endedScheduleRun(p, owner.token, id, scheduleId);
  const after = await commandsOf(id, deputy.user.id, since);
  await p.request('DELETE', `/api/v1/servers/${id}`, { token: owner.token });
  return { run, after };
}

test('an administrator\'s manual run on another user\'s server stops acting in their name once the role is taken away', async () => {
  const { run, after } = await adminRunThen('sched-demoted', async (deputy) => {
    expect((await patch(deputy.user.id, { role: 'user' })).status).toBe(200);
  });
  expect(after).toEqual([]);
  expect(run.tasks[1]).toMatchObject({ status: 'failed', error: 'whoever started this run no longer has access to this server' });
});

test('a deleted administrator\'s manual run on another user\'s server stops acting in their name', async () => {
  const { run, after } = await adminRunThen('sched-deleted', async (deputy) => {
    expect((await p.request('DELETE', U(deputy.user.id), { token: admin.token })).status).toBe(204);
  });
  expect(after).toEqual([]);
  expect(run.tasks[1]).toMatchObject({ status: 'failed', error: 'whoever started this run no longer has access to this server' });
});
