/**
 * A server force-deleted while its node could not be told (`DELETE /servers/:id?force=true`) does not
 * live on there: once the node's agent (a process of its own) learns the panel's list again, at boot
 * or when the node is back, it stops the server and removes it with its files.
 */
import http from 'node:http';
import { existsSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Node } from '../../src/entities/Node.js';
import { hasAgentBuild, startAgentProcess, type AgentProcess, type NodeIdentity } from '../agent/agent-process.js';
import { killAllUnder, tmpDir } from '../agent/helpers.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { freePort, until } from '../support/wait.js';

const maybe = hasAgentBuild ? test : test.skip;

let p: TestPlatform;
let admin: { token: string };
const agents: AgentProcess[] = [];
const dataDirs: string[] = [];

beforeAll(async () => {
  p = await startTestPlatform();
  admin = await p.admin();
}, 60_000);
afterAll(async () => {
  for (const a of agents) await a.stop().catch(() => undefined);
  for (const d of dataDirs) {
    killAllUnder(d);
    rmSync(d, { recursive: true, force: true });
  }
  await p?.stop();
}, 60_000);

/** An HTTP proxy to the panel that can be cut (every request through it fails while `cut`). */
async function panelProxy(): Promise<{ url: string; cut: boolean; close(): Promise<void> }> {
  const target = new URL(p.url);
  const state = { cut: false };
  const server = http.createServer((req, res) => {
    if (state.cut) return req.socket.destroy();
    const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  });
}

async function registerNode(name: string, panelUrl: string): Promise<NodeIdentity> {
  const reg = await p.request('POST', '/api/v1/nodes', { token: admin.token, body: { name, fqdn: '127.0.0.1', port: 5000, memory: 4096, disk: 8192 } });
  expect(reg.status).toBe(201);
  return { panelUrl, nodeId: reg.body.data.id, nodeToken: reg.body.data.token };
}

/** The node's agent process on `dataDir` (kept across restarts), its address given to the panel. */
async function startAgent(node: NodeIdentity, dataDir: string): Promise<AgentProcess> {
  const agent = await startAgentProcess(0, { DATA_DIR: dataDir, HEARTBEAT_SECONDS: '1' }, node);
  agents.push(agent);
  dataDirs.push(agent.dataDir); // made for it, unused: DATA_DIR is `dataDir`
  await setPort(node.nodeId, agent.port);
  return agent;
}

const setPort = (nodeId: string, port: number) => p.orm.em.fork().nativeUpdate(Node, { id: nodeId }, { port });
const statusOf = async (id: string) => (await p.request('GET', `/api/v1/servers/${id}`, { token: admin.token })).body.data?.status;

async function createServer(nodeId: string, name: string, running: boolean): Promise<string> {
  const bps = await p.request('GET', '/api/v1/blueprints?limit=100', { token: admin.token });
  const demo = bps.body.data.find((b: any) => b.key === 'demo-game');
  const created = await p.request('POST', '/api/v1/servers', { token: admin.token, body: { name, nodeId, blueprintId: demo.id, memory: 256, cpu: 100, disk: 512 } });
  expect(created.status).toBe(201);
  const id: string = created.body.data.id;
  await until(async () => (await statusOf(id)) === 'offline', 30_000, `${name} installed`);
  if (!running) return id;
  expect((await p.request('POST', `/api/v1/servers/${id}/start`, { token: admin.token })).status).toBe(200);
  await until(async () => (await statusOf(id)) === 'running', 30_000, `${name} running`);
  return id;
}

/** Processes whose working directory is the server's (or its directory being removed). */
function processesOf(id: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readlinkSync(`/proc/${e}/cwd`).includes(id)) out.push(Number(e));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** The server is gone from the node: unknown to its agent, no process, no files; the agent said so. */
async function expectRemovedFromNode(agent: AgentProcess, dataDir: string, id: string): Promise<void> {
  const dir = path.join(dataDir, 'agent', 'servers', id);
  await until(async () => (await agent.request('GET', `/api/servers/${id}`)).status === 404 && processesOf(id).length === 0 && !existsSync(dir), 60_000, 'the deleted server to be removed from the node');
  expect(agent.output()).toMatch(new RegExp(`"serverId":"${id}"[^\\n]*server unknown to the panel`));
}

maybe('a server force-deleted while its node was down is stopped and removed when the agent, booted with the panel unreachable, reaches it', async () => {
  const proxy = await panelProxy();
  try {
    const node = await registerNode('rebooted', proxy.url);
    const dataDir = tmpDir('hp-force-delete-');
    dataDirs.push(dataDir);
    let agent = await startAgent(node, dataDir);
    const keep = await createServer(node.nodeId, 'keep', true);
    const gone = await createServer(node.nodeId, 'gone', true);

    // the node goes down (its servers stop, to be started again at its next boot); the admin drops one
    await agent.stop();
    await setPort(node.nodeId, await freePort());
    expect((await p.request('DELETE', `/api/v1/servers/${gone}?force=true`, { token: admin.token })).status).toBe(204);

    // it boots while the panel cannot be reached: state.json brings both servers back
    proxy.cut = true;
    agent = await startAgent(node, dataDir);
    await until(async () => (await agent.request('GET', `/api/servers/${gone}`)).body?.data?.status === 'running', 30_000, 'the deleted server started from state.json');

    proxy.cut = false;
    await expectRemovedFromNode(agent, dataDir, gone);
    await until(async () => (await agent.request('GET', `/api/servers/${keep}`)).body?.data?.status === 'running', 30_000, 'the kept server running');
  } finally {
    await proxy.close();
  }
}, 180_000);

maybe('a server force-deleted while the panel could not reach its live node is stopped and removed when the node is back', async () => {
  const node = await registerNode('partitioned', p.url);
  const dataDir = tmpDir('hp-force-delete-');
  dataDirs.push(dataDir);
  const agent = await startAgent(node, dataDir);
  const keep = await createServer(node.nodeId, 'keep', false);
  const gone = await createServer(node.nodeId, 'gone', true);

  // the panel cannot reach the node (its agent goes on): the delete goes through by force
  await setPort(node.nodeId, await freePort());
  expect((await p.request('DELETE', `/api/v1/servers/${gone}?force=true`, { token: admin.token })).status).toBe(204);

  await setPort(node.nodeId, agent.port);
  await expectRemovedFromNode(agent, dataDir, gone);
  expect((await agent.request('GET', `/api/servers/${keep}`)).status).toBe(200);
  expect(await statusOf(keep)).toBe('offline');
}, 120_000);
