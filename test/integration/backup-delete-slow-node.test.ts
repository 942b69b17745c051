/**
 * Deleting backups on a node that does not answer (paused) while the rest of the panel goes on: a
 * delete waits for its node without holding a database connection, and a backup being deleted is
 * gone for every request until the node answers (back as it was when the node cannot do it).
 */
import { hasAgentBuild } from '../agent/agent-process.js';
import { blueprintsByKey, expectError, waitForStatus } from '../support/fixtures.js';
import { platformWithNodeProcess } from '../support/remote-node.js';
import { sleep, until } from '../support/wait.js';

const maybe = hasAgentBuild ? test : test.skip;
/** more deletes at once than the panel's database pool has connections (10) */
const DELETES = 12;

const startPlatform = platformWithNodeProcess();

maybe('deletes waiting on a paused node leave the panel answering; the backups are gone meanwhile, and once the node answers', async () => {
  // each delete held a transaction (and one of the 10 pooled connections) for the node's answer, up
  // to 120 s: twelve of them stopped every request of every user until the node answered
  const { p: platform, token, nodeId, agent } = await startPlatform({ backupLimitDefault: DELETES + 1 }, 'slow');
  const bps = await blueprintsByKey(platform, token);
  const created = await platform.request('POST', '/api/v1/servers', { token, body: { name: 'slow', nodeId, blueprintId: bps['shell-command'].id, memory: 128, cpu: 50, disk: 256, variables: { COMMAND: 'exec sleep 600' } } });
  const id: string = created.body.data.id;
  await waitForStatus(platform, token, id, 'offline');
  const B = (sub = '') => `/api/v1/servers/${id}/backups${sub}`;
  const ids: string[] = [];
  for (let i = 0; i < DELETES + 1; i++) {
    const made = await platform.request('POST', B(), { token, body: { name: `b${i}` } });
    expect([made.status, made.body.error?.message]).toEqual([201, undefined]);
    ids.push(made.body.data.id);
    await until(async () => (await platform.request('GET', B(`/${made.body.data.id}`), { token })).body.data.status === 'completed', 30_000, `backup ${i}`);
  }
  const kept = ids.pop()!;

  agent.child.kill('SIGSTOP');
  let answered = 0;
  const deletes = ids.map((b) => platform.request('DELETE', B(`/${b}`), { token }).finally(() => answered++));
  // (the deletes have reached the node call, or the pool, by now)
  await sleep(1000);
  const server = await platform.request('GET', `/api/v1/servers/${id}`, { token });
  const list = await platform.request('GET', B(), { token });
  expect([answered, server.status, list.status]).toEqual([0, 200, 200]);
  expect(list.body.data.map((b: any) => b.id)).toEqual([kept]);
  expectError(await platform.request('POST', B(`/${ids[0]}/lock`), { token }), 404, 'NOT_FOUND');
  expectError(await platform.request('DELETE', B(`/${ids[0]}`), { token }), 404, 'NOT_FOUND');
  expect(answered).toBe(0);

  agent.child.kill('SIGCONT');
  expect((await Promise.all(deletes)).map((r) => r.status)).toEqual(ids.map(() => 204));
  expect((await platform.request('GET', B(), { token })).body.data.map((b: any) => b.id)).toEqual([kept]);
  const log = await platform.request('GET', `/api/v1/servers/${id}/activity?event=server:backup.delete&limit=100`, { token });
  expect(log.body.data.map((e: any) => e.properties.backupId).sort()).toEqual([...ids].sort());

  // a node that cannot be reached: the delete fails, and the backup is back as it was
  await agent.stop();
  expectError(await platform.request('DELETE', B(`/${kept}`), { token }), 422, 'NODE_UNAVAILABLE');
  expect((await platform.request('GET', B(`/${kept}`), { token })).body.data).toMatchObject({ id: kept, status: 'completed', locked: false });
  expect((await platform.request('POST', B(`/${kept}/lock`), { token })).status).toBe(200);
}, 300_000);
