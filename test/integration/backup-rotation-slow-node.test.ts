/**
 * Schedules' backup tasks at the server's backup limit on a node that does not answer (paused): the
 * rotation marks the oldest backup and waits for the node without holding a database connection, so
 * the rest of the panel goes on; the room it makes is its own backup's.
 */
import { hasAgentBuild } from '../agent/agent-process.js';
import { blueprintsByKey, waitForStatus } from '../support/fixtures.js';
import { platformWithNodeProcess } from '../support/remote-node.js';
import { sleep, until } from '../support/wait.js';

const maybe = hasAgentBuild ? test : test.skip;
/** more backup tasks at once than the panel's database pool has connections (10) */
const TASKS = 12;

const startPlatform = platformWithNodeProcess();

maybe('backup tasks rotating on a paused node leave the panel answering; one rotates, the others are told to try again', async () => {
  // a rotation held its transaction (the server's row lock, a pooled connection) for the node's
  // delete, up to 120 s; the tasks behind it held one each waiting for the lock
  const { p: platform, token, nodeId, agent } = await startPlatform({ backupLimitDefault: 1 }, 'slow');
  const bps = await blueprintsByKey(platform, token);
  const created = await platform.request('POST', '/api/v1/servers', { token, body: { name: 'rotating', nodeId, blueprintId: bps['shell-command'].id, memory: 128, cpu: 50, disk: 256, variables: { COMMAND: 'exec sleep 600' } } });
  const id: string = created.body.data.id;
  await waitForStatus(platform, token, id, 'offline');
  const B = (sub = '') => `/api/v1/servers/${id}/backups${sub}`;
  const first = await platform.request('POST', B(), { token, body: { name: 'oldest' } });
  expect(first.status).toBe(201);
  await until(async () => (await platform.request('GET', B(`/${first.body.data.id}`), { token })).body.data.status === 'completed', 30_000, 'the first backup');
  const schedules: string[] = [];
  for (let i = 0; i < TASKS; i++) {
    const s = await platform.request('POST', `/api/v1/servers/${id}/schedules`, { token, body: { name: `nightly ${i}`, cron: '0 3 * * *', enabled: false, tasks: [{ action: 'backup', payload: {} }] } });
    expect([s.status, s.body.error?.message]).toEqual([201, undefined]);
    schedules.push(s.body.data.id);
  }

  agent.child.kill('SIGSTOP');
  const runs = await Promise.all(schedules.map((s) => platform.request('POST', `/api/v1/servers/${id}/schedules/${s}/run`, { token })));
  expect(runs.map((r) => r.status)).toEqual(schedules.map(() => 201));
  // (the tasks have reached the node call, or the pool, by now)
  await sleep(1500);
  const server = await platform.request('GET', `/api/v1/servers/${id}`, { token });
  const list = await platform.request('GET', B(), { token });
  expect([server.status, list.status]).toEqual([200, 200]);
  // the oldest is being deleted: gone from the list; the new one is pending
  expect(list.body.data.map((b: any) => [b.name === 'oldest', b.status])).toEqual([[false, 'pending']]);

  agent.child.kill('SIGCONT');
  const lastRuns = async () =>
    Promise.all(schedules.map(async (s) => (await platform.request('GET', `/api/v1/servers/${id}/schedules/${s}/runs`, { token })).body.data[0]));
  const done = await until(async () => {
    const r = await lastRuns();
    return r.every((x: any) => x.status !== 'running') ? r : null;
  }, 60_000, 'every run to end');
  const statuses = done.map((r: any) => r.status).sort();
  expect(statuses).toEqual(['completed', ...Array(TASKS - 1).fill('failed')]);
  for (const r of done.filter((x: any) => x.status === 'failed')) expect(r.tasks[0].error).toMatch(/^BACKUP_LIMIT: .*being deleted/);
  const after = (await platform.request('GET', B(), { token })).body.data;
  expect(after.map((b: any) => [b.name === 'oldest', b.status])).toEqual([[false, 'completed']]);
}, 300_000);
