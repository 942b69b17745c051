/**
 * What a node agent reports survives its death: a real panel and an agent in a process of its own
 * (`dist/src/agent/main.js`), stopped (SIGTERM) or killed (SIGKILL) and started again on the same data
 * directory, with the panel stopped and started on the same database.
 *
 * - A backup that completes while the panel is down, the agent then restarted before the panel is
 *   back: its "completed" report is kept on the node's disk (`agent/panel-queue.jsonl`) and reaches
 *   the panel once both are back (it stayed `pending` for ever: the report lived in memory only).
 * - A restore cut off by the agent's death: at its next start the agent finds the restore's marker
 *   and reports it failed, so the activity log has `server:backup.restore-fail` saying so, and the
 *   server is offline and can start (the log had no outcome at all).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Node } from '../../src/entities/Node.js';
import { AGENT_MAIN, hasAgentBuild, startAgentProcess, type AgentProcess } from '../agent/agent-process.js';
import { killAllUnder, tmpDir } from '../agent/helpers.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { freePort, until } from '../support/wait.js';

const maybe = hasAgentBuild ? test : test.skip;
if (!hasAgentBuild) console.warn(`skipped: ${AGENT_MAIN} is missing; run the suite with \`npm test\` (it builds first)`);

let p: TestPlatform | null = null;
let agent: AgentProcess | null = null;
let port = 0;
let dbName = '';
const env = { MASTER_KEY: randomBytes(32).toString('base64') };
const dataDir = tmpDir('hp-agent-reports-');
let nodeId = '';
let nodeToken = '';
let token = '';
const stale: TestPlatform[] = [];
const agentDirs: string[] = [];

afterAll(async () => {
  if (agent) await agent.stop().catch(() => undefined);
  killAllUnder(dataDir);
  await p?.stop();
  for (const s of stale) await s.stop().catch(() => undefined);
  rmSync(dataDir, { recursive: true, force: true });
  // startAgentProcess makes a data dir of its own each time, unused here (DATA_DIR is ours)
  for (const d of agentDirs) rmSync(d, { recursive: true, force: true });
}, 60_000);

async function startPanel(): Promise<void> {
  p = await startTestPlatform({ port, stopGraceSeconds: 2 }, env, dbName ? { database: dbName } : {});
  if (!dbName) dbName = p.dbName;
  token = (await p.admin()).token;
}

async function stopPanel(): Promise<void> {
  await p!.close();
  stale.push(p!);
  p = null;
}

async function startNode(): Promise<void> {
  agent = await startAgentProcess(0, { DATA_DIR: dataDir, HEARTBEAT_SECONDS: '1' }, { panelUrl: p!.url, nodeId, nodeToken });
  agentDirs.push(agent.dataDir);
  await p!.orm.em.fork().nativeUpdate(Node, { id: nodeId }, { port: agent.port });
}

async function stopNode(signal: NodeJS.Signals): Promise<void> {
  const a = agent!;
  const exited = new Promise((r) => a.child.once('exit', r));
  a.child.kill(signal);
  await exited;
  agent = null;
}

const api = (method: string, sub: string, body?: unknown) => p!.request(method, `/api/v1${sub}`, { token, body });
const server = async (id: string) => (await api('GET', `/servers/${id}`)).body.data;
const status = async (id: string) => (await server(id))?.status;
const backupOf = async (id: string, bid: string) => (await api('GET', `/servers/${id}/backups/${bid}`)).body.data;

let n = 0;
async function newServer(files: number, backupLimit: number): Promise<string> {
  const install = `mkdir -p data && for i in $(seq 1 ${files}); do head -c 262144 /dev/urandom > data/f$i; done`;
  const bp = await api('POST', '/admin/blueprints', { key: `reports-${++n}-${randomBytes(2).toString('hex')}`, name: `Reports ${n}`, startup: 'sleep 1000', stop: 'SIGTERM', ready: null, install, installShell: 'sh' });
  expect(bp.status).toBe(201);
  const r = await api('POST', '/servers', { name: `reports ${n}`, nodeId, blueprintId: bp.body.data.id, memory: 256, cpu: 100, disk: 1024, backupLimit });
  expect(r.status).toBe(201);
  const id = r.body.data.id;
  await until(async () => (await status(id)) === 'offline', 60_000, 'the install');
  return id;
}

const storeOf = (id: string) => path.join(dataDir, 'agent', 'backups', id);
const list = (dir: string) => (existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String) : []);

maybe('setup: a panel and a node agent process', async () => {
  port = await freePort();
  await startPanel();
  const reg = await api('POST', '/nodes', { name: 'reports', fqdn: '127.0.0.1', port: 5000, memory: 8192, disk: 16384 });
  expect(reg.status).toBe(201);
  nodeId = reg.body.data.id;
  nodeToken = reg.body.data.token;
  await startNode();
  await until(async () => (await api('GET', `/nodes/${nodeId}`)).body.data.status === 'online', 30_000, 'node online');
}, 60_000);

for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
  maybe(`a backup completed while the panel is down, then the agent ${signal === 'SIGTERM' ? 'stopped' : 'killed'} (${signal}) before the panel is back: it becomes completed`, async () => {
    const id = await newServer(40, 1);
    const r = await api('POST', `/servers/${id}/backups`, { name: `late report ${signal}` });
    expect(r.status).toBe(201);
    const bid = r.body.data.id;
    await stopPanel();
    // the node finishes the backup while the panel is down: its manifest is written, its marker gone
    await until(() => existsSync(path.join(storeOf(id), 'manifests', `${bid}.json`)) && !existsSync(path.join(storeOf(id), 'pending', bid)), 60_000, 'the node to finish the backup');
    await stopNode(signal);
    await startPanel();
    await startNode();
    const b = await until(async () => {
      const d = await backupOf(id, bid);
      return d.status !== 'pending' ? d : null;
    }, 60_000, 'the backup to be no longer pending');
    expect(b).toMatchObject({ status: 'completed', files: 40, error: null });
    expect(b.sha256).toMatch(/^[0-9a-f]{64}$/);
    // the limit of 1 holds it: it is the server's one backup, and it can be restored
    expect((await api('POST', `/servers/${id}/backups`, { name: 'next' })).body.error?.code).toBe('BACKUP_LIMIT');
    expect((await api('POST', `/servers/${id}/backups/${bid}/restore`, {})).status).toBe(200);
    await until(async () => (await status(id)) === 'offline', 60_000, 'the restore to end');
  }, 180_000);
}

maybe('a restore cut off by the agent being killed is reported failed at its next start; the server is offline and starts', async () => {
  const id = await newServer(300, 5);
  const r = await api('POST', `/servers/${id}/backups`, { name: 'whole' });
  expect(r.status).toBe(201);
  const bid = r.body.data.id;
  await until(async () => (await backupOf(id, bid)).status === 'completed', 60_000, 'the backup');
  const data = path.join(dataDir, 'agent', 'servers', id, 'data');
  rmSync(data, { recursive: true, force: true });
  expect((await api('POST', `/servers/${id}/backups/${bid}/restore`, {})).status).toBe(200);
  await until(() => list(data).length > 10, 60_000, 'the restore to be under way');
  await stopNode('SIGKILL');
  const back = list(data).length;
  expect(back).toBeLessThan(300);
  await startNode();
  const fail = await until(async () => {
    const act = (await api('GET', `/servers/${id}/activity?limit=50`)).body.data as { event: string; properties: Record<string, unknown> }[];
    return act.find((a) => a.event === 'server:backup.restore-fail' || a.event === 'server:backup.restore-complete');
  }, 60_000, 'the outcome of the restore in the activity log');
  expect(fail.event).toBe('server:backup.restore-fail');
  expect(fail.properties).toMatchObject({ backupId: bid, error: expect.stringMatching(/^The node agent stopped during the restore; at least \d+ of 300 files were put back: run it again\.$/) });
  const shown = Number(/at least (\d+) of/.exec(String(fail.properties.error))![1]);
  expect(shown).toBeLessThanOrEqual(back);
  expect(await status(id)).toBe('offline');
  expect((await api('POST', `/servers/${id}/start`)).status).toBe(200);
  await until(async () => (await status(id)) === 'running', 30_000, 'the server to run');
  await api('POST', `/servers/${id}/kill`);
  await until(async () => (await status(id)) === 'offline', 30_000, 'the server to stop');
}, 240_000);
