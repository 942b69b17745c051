/**
 * What the panel and its node agents do when one of them (or the panel's database connection) goes
 * away in the middle of users' work.
 *
 * - A console command reported by the node (an activity report on its durable event queue) reaches
 *   the activity log even when the panel's database connection drops while it is written: the panel
 *   acknowledged the node's batch before writing the entry (it waited in the activity log's in-memory
 *   batch), so the node dropped the report from its queue and the entry was lost for good.
 * - A server being restarted (its stop under way) when its node agent is killed (SIGKILL) runs again
 *   once the agent is back: the agent's state.json said it was not to run (the restart's stop wrote
 *   `desiredRunning: false`, and the restart's start to come was never written), so the agent left it
 *   offline and a scheduled restart task failed at its bound.
 */
import { Client } from 'pg';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RunningAgent } from '../../src/agent/index.js';
import { Node } from '../../src/entities/Node.js';
import { AGENT_MAIN, hasAgentBuild, startAgentProcess, type AgentProcess } from '../agent/agent-process.js';
import { killAllUnder, tmpDir } from '../agent/helpers.js';
import { ConsoleClient } from '../support/console-client.js';
import { runningServer } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { startRemoteNode } from '../support/remote-node.js';
import { sleep, until } from '../support/wait.js';

let p: TestPlatform;
let agent: RunningAgent | null = null;
let socket: ConsoleClient | null = null;
let db: Client | null = null;
const agentDir = mkdtempSync(path.join(os.tmpdir(), 'hostpanel-restart-probe-'));

const processes: AgentProcess[] = [];
const processDirs: string[] = [];
const maybe = hasAgentBuild ? test : test.skip;
if (!hasAgentBuild) console.warn(`skipped: ${AGENT_MAIN} is missing; run the suite with \`npm test\` (it builds first)`);

afterAll(async () => {
  for (const a of processes) await a.stop().catch(() => undefined);
  for (const d of processDirs) {
    killAllUnder(d);
    rmSync(d, { recursive: true, force: true });
  }
  socket?.close();
  await db?.end().catch(() => undefined);
  await agent?.close();
  await p?.stop();
  rmSync(agentDir, { recursive: true, force: true });
}, 60_000);

test('a console command reported by the node is in the activity log once, although the database connection writing it dropped', async () => {
  p = await startTestPlatform();
  const admin = await p.admin();
  const remote = await startRemoteNode(p, admin.token, 'probe', agentDir);
  agent = remote.agent;
  const api = (method: string, sub: string, body?: unknown) => p.request(method, `/api/v1${sub}`, { token: admin.token, body });
  const demo = (await api('GET', '/blueprints')).body.data.find((b: any) => b.key === 'demo-game');
  const { id } = await runningServer(api, 'reported', remote.nodeId, demo.id);
  const ticket = (await api('GET', `/servers/${id}/console-token`)).body.data;
  socket = await ConsoleClient.connect(ticket.socket, ticket.token);
  await socket.waitFor((m) => m.type === 'auth_success');
  const commands = async () => ((await api('GET', `/servers/${id}/activity?event=server:console.command&limit=100`)).body.data as any[]).filter((e) => e.properties?.command === 'say kept');
  expect(await commands()).toEqual([]); // (a list writes what waits first: nothing of the activity log is left in memory)

  // the activity table is locked, so that what writes the entry waits: its connection is then cut
  const u = new URL(process.env.TEST_PG_ADMIN_URL!);
  u.pathname = '/' + p.dbName;
  db = new Client({ connectionString: u.toString() });
  await db.connect();
  await db.query('begin');
  await db.query('lock table activity in access exclusive mode');
  socket.send({ type: 'command', data: 'say kept' });
  const waiting = await until(async () => {
    // (a transaction sees one snapshot of pg_stat_activity: a fresh one each time)
    await db!.query('select pg_stat_clear_snapshot()');
    const r = await db!.query(
      `select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock' and query ilike '%activity%'`,
    );
    return r.rows.length ? r.rows.map((row) => row.pid as number) : null;
  }, 15_000, 'the activity entry to be written');
  for (const pid of waiting) await db.query('select pg_terminate_backend($1)', [pid]);
  await until(async () => (await db!.query('select pg_stat_clear_snapshot()')) && (await db!.query('select count(*)::int as n from pg_stat_activity where pid = any($1)', [waiting])).rows[0].n === 0, 10_000, 'the cut connection to be gone');
  await db.query('rollback');
  await db.end();
  db = null;

  // the node sends the report again until the panel has written it: the entry is there, once
  await until(async () => (await commands()).length > 0, 20_000, 'the command in the activity log');
  await sleep(1000);
  const entries = await commands();
  expect(entries).toHaveLength(1);
  expect(entries[0]).toMatchObject({ serverId: id, actor: { id: admin.user.id }, properties: { command: 'say kept', via: 'console' } });
  await api('POST', `/servers/${id}/kill`);
}, 120_000);

maybe('a server whose restart is stopping it when its agent is killed runs again once the agent is back', async () => {
  const admin = await p.admin();
  const api = (method: string, sub: string, body?: unknown) => p.request(method, `/api/v1${sub}`, { token: admin.token, body });
  const reg = await api('POST', '/nodes', { name: 'killed', fqdn: '127.0.0.1', port: 5000, memory: 4096, disk: 8192 });
  expect(reg.status).toBe(201);
  const node = { panelUrl: p.url, nodeId: reg.body.data.id, nodeToken: reg.body.data.token };
  const dataDir = tmpDir('hp-restart-probe-');
  processDirs.push(dataDir);
  // a grace long enough that the restart's stop is still under way when the agent dies
  const env = { DATA_DIR: dataDir, HEARTBEAT_SECONDS: '1', STOP_GRACE_SECONDS: '60' };
  const start = async (): Promise<AgentProcess> => {
    const a = await startAgentProcess(0, env, node);
    processes.push(a);
    processDirs.push(a.dataDir);
    await p.orm.em.fork().nativeUpdate(Node, { id: node.nodeId }, { port: a.port });
    return a;
  };
  let agentProcess = await start();
  // a program that does not stop on its stop command: its stop lasts the grace period
  const bp = await api('POST', '/admin/blueprints', { key: 'stubborn', name: 'Stubborn', startup: 'sleep 1000', stop: 'stop', ready: null, install: null });
  expect(bp.status).toBe(201);
  const { id, read } = await runningServer(api, 'restarted', node.nodeId, bp.body.data.id);
  const status = async () => (await read()).status as string;

  const restart = await api('POST', `/servers/${id}/restart`);
  expect(restart.status).toBe(200);
  await until(async () => (await status()) === 'stopping', 10_000, 'the restart to stop the server');
  const exited = new Promise((r) => agentProcess.child.once('exit', r));
  agentProcess.child.kill('SIGKILL');
  await exited;

  agentProcess = await start();
  // the agent kills what the previous run left and starts the server again, as the restart asked
  await until(async () => (await status()) === 'running', 30_000, 'the server to run again after the agent restart');
  expect((await api('GET', `/servers/${id}`)).body.data.lastStopReason).toBe('agent_restart');
  await api('POST', `/servers/${id}/kill`);
  await until(async () => (await status()) === 'offline', 30_000, 'the server to stop');
}, 120_000);
