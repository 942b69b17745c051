/**
 * What a node agent killed with SIGKILL in the middle of a server's power change does at its next
 * start (the agent runs as a process of its own, on the same data directory both times).
 *
 * - A server that crashed with auto-restart on is killed with its agent while the restart waits (the
 *   agent waits 1 s before it): the next start restarts it, as the crash policy said, and the panel
 *   keeps `crashed` as its last stop reason. It was left offline: the crash wrote
 *   `desiredRunning: false` to state.json and the restart to come was never written.
 * - A server the user stopped is killed with its agent while its stop is under way: the next start
 *   reports it offline with `lastStopReason` `stopped` (it was null: state.json did not say why its
 *   process was ending).
 * - A server stopped by its user while the restart after its crash waits stays offline when its agent
 *   is killed and started again.
 * - A server restarted that way that crashes again within the crash-loop window (60 s) of its first
 *   crash is a crash loop and stays offline: the agent's memory of the first crash is in state.json.
 * - A crash is counted once: each start of the agent reported every offline server's last stop again,
 *   and the panel counted a crash (crashCount, lastCrashAt) once more each time.
 *
 * The agent is frozen (SIGSTOP) once state.json shows the state to test, so that what the next start
 * reads is exactly that state, and killed then.
 */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Node } from '../../src/entities/Node.js';
import { AGENT_MAIN, hasAgentBuild, startAgentProcess, type AgentProcess } from '../agent/agent-process.js';
import { killAllUnder, tmpDir } from '../agent/helpers.js';
import { runningServer, type Api } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { sleep, until } from '../support/wait.js';

let p: TestPlatform;
const processes: AgentProcess[] = [];
const processDirs: string[] = [];
const maybe = hasAgentBuild ? test : test.skip;
if (!hasAgentBuild) console.warn(`skipped: ${AGENT_MAIN} is missing; run the suite with \`npm test\` (it builds first)`);

beforeAll(async () => {
  p = await startTestPlatform();
}, 60_000);

afterAll(async () => {
  for (const a of processes) await a.stop().catch(() => undefined);
  for (const d of processDirs) {
    killAllUnder(d);
    rmSync(d, { recursive: true, force: true });
  }
  await p?.stop();
}, 60_000);

interface KillableNode {
  api: Api;
  nodeId: string;
  agent: () => AgentProcess;
  /** Freezes the agent once `ready` holds for the server's entry in state.json, then kills it (SIGKILL). */
  killWhen: (serverId: string, ready: (entry: any) => boolean, what: string) => Promise<any>;
  /** Starts the agent again on the same data directory. */
  restart: () => Promise<void>;
}

/** A node registered on the panel, its agent a process of its own (`env` added to its environment). */
async function killableNode(name: string, env: Record<string, string> = {}): Promise<KillableNode> {
  const admin = await p.admin();
  const api: Api = (method, sub, body) => p.request(method, `/api/v1${sub}`, { token: admin.token, body });
  const reg = await api('POST', '/nodes', { name, fqdn: '127.0.0.1', port: 5000, memory: 4096, disk: 8192 });
  expect(reg.status).toBe(201);
  const node = { panelUrl: p.url, nodeId: reg.body.data.id, nodeToken: reg.body.data.token };
  const dataDir = tmpDir('hp-agent-kill-');
  processDirs.push(dataDir);
  const start = async (): Promise<AgentProcess> => {
    const a = await startAgentProcess(0, { DATA_DIR: dataDir, HEARTBEAT_SECONDS: '1', ...env }, node);
    processes.push(a);
    processDirs.push(a.dataDir);
    await p.orm.em.fork().nativeUpdate(Node, { id: node.nodeId }, { port: a.port });
    return a;
  };
  let agent = await start();
  const stateFile = path.join(dataDir, 'agent', 'state.json');
  const entry = (serverId: string): any => {
    try {
      return JSON.parse(readFileSync(stateFile, 'utf8')).servers[serverId] ?? null;
    } catch {
      return null; // not written yet
    }
  };
  return {
    api,
    nodeId: node.nodeId,
    agent: () => agent,
    async killWhen(serverId, ready, what) {
      await until(() => ready(entry(serverId)), 10_000, what, 5);
      agent.child.kill('SIGSTOP');
      // what the next start reads: state.json as the frozen agent left it
      const left = entry(serverId);
      const exited = new Promise((r) => agent.child.once('exit', r));
      agent.child.kill('SIGKILL');
      await exited;
      return left;
    },
    async restart() {
      agent = await start();
    },
  };
}

async function demoBlueprint(api: Api): Promise<string> {
  return (await api('GET', '/blueprints')).body.data.find((b: any) => b.key === 'demo-game').id;
}

const crashedWaiting = (e: any) => e?.status === 'offline' && e.reason === 'crashed';

/**
 * The panel records the server running after its crash. `running` alone is not enough: the agent is
 * killed as soon as state.json shows the crash, and the crash's event may reach the panel only from
 * the restarted agent's queue file, so the panel can still read the `running` of before the crash.
 */
const runsAgainAfterCrash = (read: () => Promise<any>) => async () => {
  const s = await read();
  return s.status === 'running' && s.crashCount >= 1;
};

maybe('a server whose restart after a crash waits when its agent is killed runs again once the agent is back, its crash kept', async () => {
  const node = await killableNode('crash-wait');
  const { id, read } = await runningServer(node.api, 'crashing', node.nodeId, await demoBlueprint(node.api), { autoRestart: true });

  expect((await node.agent().request('POST', `/api/servers/${id}/commands`, { command: 'crash 3' })).status).toBe(204);
  const left = await node.killWhen(id, crashedWaiting, 'the crash in state.json');
  expect(left).toMatchObject({ status: 'offline', reason: 'crashed', pid: null }); // the restart had not begun

  await node.restart();
  await until(runsAgainAfterCrash(read), 30_000, 'the server to run again after the agent restart');
  // the crash once, though the agent may send its unacknowledged batch again (the panel knows it by its time)
  expect(await read()).toMatchObject({ status: 'running', lastStopReason: 'crashed', crashCount: 1 });
  await node.api('POST', `/servers/${id}/kill`);
}, 120_000);

maybe('a server that crashes again soon after the agent restarted it is a crash loop, left offline', async () => {
  const node = await killableNode('crash-loop');
  const { id, read } = await runningServer(node.api, 'looping', node.nodeId, await demoBlueprint(node.api), { autoRestart: true });

  expect((await node.agent().request('POST', `/api/servers/${id}/commands`, { command: 'crash 3' })).status).toBe(204);
  await node.killWhen(id, crashedWaiting, 'the crash in state.json');
  await node.restart();
  await until(runsAgainAfterCrash(read), 30_000, 'the server to run again after the agent restart');

  // the second crash comes well within the 60 s crash-loop window of the first one
  expect((await node.agent().request('POST', `/api/servers/${id}/commands`, { command: 'crash 4' })).status).toBe(204);
  await until(async () => (await read()).lastExitCode === 4, 10_000, 'the second crash');
  await sleep(2000); // longer than the restart's wait after a crash
  expect(await read()).toMatchObject({ status: 'offline', lastStopReason: 'crashed', crashCount: 2 });
}, 120_000);

maybe('a server stopped by its user while the restart after its crash waits stays offline when its agent is killed', async () => {
  const node = await killableNode('crash-stopped');
  const { id, read } = await runningServer(node.api, 'crash-stopped', node.nodeId, await demoBlueprint(node.api), { autoRestart: true });

  expect((await node.agent().request('POST', `/api/servers/${id}/commands`, { command: 'crash 3' })).status).toBe(204);
  await until(async () => (await read()).lastStopReason === 'crashed', 10_000, 'the crash');
  expect((await node.api('POST', `/servers/${id}/stop`)).status).toBe(200);
  // the stop lands before the restart started or cancels it: nothing runs, and nothing is to
  await node.killWhen(id, (e) => e?.status === 'offline' && e.desiredRunning === false && e.pid === null, 'the stop in state.json');

  await node.restart();
  await until(async () => (await node.agent().request('GET', `/api/servers/${id}`)).status === 200, 30_000, 'the agent to know the server');
  await sleep(2000); // longer than the restart's wait after a crash
  expect((await node.agent().request('GET', `/api/servers/${id}`)).body.data.status).toBe('offline');
  expect((await read()).status).toBe('offline');
}, 120_000);

maybe("a server whose user's stop is under way when its agent is killed is offline, stopped, once the agent is back", async () => {
  // a grace long enough that the stop is still under way when the agent dies
  const node = await killableNode('stop-wait', { STOP_GRACE_SECONDS: '60' });
  // a program that does not stop on its stop command: its stop lasts the grace period
  const bp = await node.api('POST', '/admin/blueprints', { key: 'stubborn-stop', name: 'Stubborn stop', startup: 'sleep 1000', stop: 'stop', ready: null, install: null });
  expect(bp.status).toBe(201);
  const { id, read } = await runningServer(node.api, 'stopped', node.nodeId, bp.body.data.id);

  expect((await node.api('POST', `/servers/${id}/stop`)).status).toBe(200);
  const left = await node.killWhen(id, (e) => e?.status === 'stopping', 'the stop in state.json');
  expect(left.pid).not.toBeNull(); // the process had not ended

  await node.restart();
  await until(async () => (await read()).status === 'offline', 30_000, 'the server to be reported offline');
  expect((await read()).lastStopReason).toBe('stopped');
  await sleep(1500);
  expect(await read()).toMatchObject({ status: 'offline', lastStopReason: 'stopped', crashCount: 0 });
}, 120_000);

maybe('a crashed server is counted once when its agent is killed and started again', async () => {
  const node = await killableNode('crash-counted');
  const { id, read } = await runningServer(node.api, 'crash-counted', node.nodeId, await demoBlueprint(node.api));

  expect((await node.agent().request('POST', `/api/servers/${id}/commands`, { command: 'crash 3' })).status).toBe(204);
  await until(async () => (await read()).crashCount === 1, 10_000, 'the crash');
  await node.killWhen(id, crashedWaiting, 'the crash in state.json');

  await node.restart();
  await until(async () => (await node.agent().request('GET', `/api/servers/${id}`)).status === 200, 30_000, 'the agent to know the server');
  await sleep(2000); // the boot's report of every server is sent at once
  expect(await read()).toMatchObject({ status: 'offline', lastStopReason: 'crashed', lastExitCode: 3, crashCount: 1 });
}, 120_000);
