/** A node agent of its own (not the panel's local one): registered through the API, then started. */
import { rmSync } from 'node:fs';
import { startAgent, type AgentOptions, type RunningAgent } from '../../src/agent/index.js';
import { Node } from '../../src/entities/Node.js';
import { startAgentProcess, type AgentProcess } from '../agent/agent-process.js';
import { killAllUnder } from '../agent/helpers.js';
import { startTestPlatform, type TestPlatform } from './harness.js';

export async function startRemoteNode(
  p: TestPlatform,
  adminToken: string,
  name: string,
  dataDir: string,
  extra: Partial<AgentOptions> = {},
): Promise<{ nodeId: string; agent: RunningAgent }> {
  const reg = await p.request('POST', '/api/v1/nodes', {
    token: adminToken,
    body: { name, fqdn: '127.0.0.1', port: 5000, memory: 4096, disk: 8192 },
  });
  if (reg.status !== 201) throw new Error(`node registration failed: ${reg.status} ${reg.text}`);
  const nodeId: string = reg.body.data.id;
  const agent = await startAgent({ panelUrl: p.url, nodeId, nodeToken: reg.body.data.token, port: 0, sftpPort: 0, host: '127.0.0.1', dataDir, stopGraceSeconds: 2, ...extra });
  // the agent picked a free port: record it so that the panel reaches it
  await p.orm.em.fork().nativeUpdate(Node, { id: nodeId }, { port: agent.port });
  return { nodeId, agent };
}

/**
 * A node whose agent is a process of its own (`node dist/src/agent/main.js` as `uid`): registered
 * through the API, started, and its port recorded. `stop` ends it and everything under its data dir.
 */
export async function startNodeProcess(
  p: TestPlatform,
  adminToken: string,
  name: string,
  uid = 0,
  env: Record<string, string> = {},
): Promise<{ nodeId: string; agent: AgentProcess; stop: () => Promise<void> }> {
  const reg = await p.request('POST', '/api/v1/nodes', { token: adminToken, body: { name, fqdn: '127.0.0.1', port: 5000, memory: 4096, disk: 8192 } });
  if (reg.status !== 201) throw new Error(`node registration failed: ${reg.status} ${reg.text}`);
  const nodeId: string = reg.body.data.id;
  const agent = await startAgentProcess(uid, env, { panelUrl: p.url, nodeId, nodeToken: reg.body.data.token });
  await p.orm.em.fork().nativeUpdate(Node, { id: nodeId }, { port: agent.port });
  const stop = async () => {
    agent.child.kill('SIGCONT'); // a test may have paused it
    await agent.stop();
    killAllUnder(agent.dataDir);
    rmSync(agent.dataDir, { recursive: true, force: true });
  };
  return { nodeId, agent, stop };
}

export interface PlatformWithNode {
  p: TestPlatform;
  /** an administrator's token */
  token: string;
  nodeId: string;
  agent: AgentProcess;
}

/**
 * For a test file whose test needs a platform and a node process of its own: returns the function
 * that starts them, and stops both after the file's tests.
 */
export function platformWithNodeProcess(): (
  opts: Parameters<typeof startTestPlatform>[0],
  name: string,
  uid?: number,
  env?: Record<string, string>,
) => Promise<PlatformWithNode> {
  let p: TestPlatform | null = null;
  let stopNode: (() => Promise<void>) | null = null;
  afterAll(async () => {
    await stopNode?.();
    await p?.stop();
  }, 60_000);
  return async (opts, name, uid = 0, env = {}) => {
    p = await startTestPlatform(opts);
    const token = (await p.admin()).token;
    const node = await startNodeProcess(p, token, name, uid, env);
    stopNode = node.stop;
    return { p, token, nodeId: node.nodeId, agent: node.agent };
  };
}
