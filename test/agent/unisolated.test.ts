/**
 * An agent that is not root cannot give servers users of their own: it refuses to install and start
 * them unless ALLOW_UNISOLATED_SERVERS=true. Run for real: the agent is a process of user nobody.
 */
import { readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { AGENT_MAIN, hasAgentBuild, NOBODY, startAgentProcess, type AgentProcess } from './agent-process';
import { demoSpec, killAllUnder, newId, waitFor } from './helpers';

const maybe = hasAgentBuild ? test : test.skip;
if (!hasAgentBuild) console.warn(`skipped: ${AGENT_MAIN} is missing; run the suite with \`npm test\` (it builds first)`);

let agent: AgentProcess | null = null;

afterEach(async () => {
  if (!agent) return;
  await agent.stop();
  killAllUnder(agent.dataDir);
  rmSync(agent.dataDir, { recursive: true, force: true });
  agent = null;
});

async function statusOf(a: AgentProcess, id: string): Promise<string | undefined> {
  return (await a.request('GET', `/api/servers/${id}`)).body?.data?.status;
}

function cwdOf(pid: string): string {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return '';
  }
}

function uidOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('Uid:'))!;
  return Number(line.split(/\s+/)[1]);
}

maybe('an agent that is not root refuses to install and start a server, says why, and warns at boot', async () => {
  agent = await startAgentProcess(NOBODY);
  expect(agent.output()).toMatch(/"level":40[^\n]*servers cannot be isolated/);
  const id = newId();
  const put = await agent.request('PUT', `/api/servers/${id}`, demoSpec(id));
  expect(put.status).toBe(200);
  expect(put.body.data.status).toBe('offline');
  expect(put.body.data.reason).toBe('not_isolated');
  await waitFor(() => agent!.panel!.eventsFor(id).some((e) => e.status === 'offline' && e.reason === 'not_isolated'), 'the refusal reported to the panel');
  const start = await agent.request('POST', `/api/servers/${id}/power`, { action: 'start' });
  expect(start.status).toBe(422);
  expect(start.body.error.code).toBe('SERVER_NOT_ISOLATED');
  expect(start.body.error.message).toMatch(/as root/);
  expect(start.body.error.message).toMatch(/ALLOW_UNISOLATED_SERVERS=true/);
  expect(await statusOf(agent, id)).toBe('offline');
  const reinstall = await agent.request('POST', `/api/servers/${id}/reinstall`);
  expect(reinstall.status).toBe(422);
  expect(reinstall.body.error.code).toBe('SERVER_NOT_ISOLATED');
  // nothing of the server ran: the install script would have written server.properties
  const logs = (await agent.request('GET', `/api/servers/${id}/logs`)).body.data.lines.join('\n');
  expect(logs).toMatch(/Not installing: .*as root/);
  expect(logs).not.toMatch(/Installing the demo game server/);
});

maybe('with ALLOW_UNISOLATED_SERVERS=true the same agent installs and runs the server as its own user', async () => {
  agent = await startAgentProcess(NOBODY, { ALLOW_UNISOLATED_SERVERS: 'true' });
  expect(agent.output()).toMatch(/"level":40[^\n]*servers run UNISOLATED/);
  const id = newId();
  expect((await agent.request('PUT', `/api/servers/${id}`, demoSpec(id))).status).toBe(200);
  await waitFor(async () => (await statusOf(agent!, id)) === 'offline', 'install', 20_000, 50);
  // no private mount namespace without root: the install console says the egg paths are not mapped
  const installLog = (await agent.request('GET', `/api/servers/${id}/logs`)).body.data.lines.join('\n');
  expect(installLog).toMatch(/\[panel\] This node cannot map \/mnt\/server and \/home\/container/);
  const start = await agent.request('POST', `/api/servers/${id}/power`, { action: 'start' });
  expect(start.status).toBe(200);
  await waitFor(async () => (await statusOf(agent!, id)) === 'running', 'running', 20_000, 50);
  // the server's process (its cwd is its directory) runs as the agent's user
  const pids = readdirSync('/proc').filter((e) => /^\d+$/.test(e) && cwdOf(e).startsWith(`${agent!.dataDir}/agent/servers/${id}`));
  expect(pids.length).toBeGreaterThan(0);
  for (const pid of pids) expect(uidOf(Number(pid))).toBe(NOBODY);
});
