/** Small helpers for the REST resource tests (real HTTP, real database). */
import { expectError, type Reply, type TestPlatform } from './harness.js';
import { until } from './wait.js';

export { expectError };

/** Field-level 422 with details.fields[field]. */
export const expectFieldError = (r: Reply, field: string) => {
  expectError(r, 422, 'VALIDATION_ERROR');
  expect(Object.keys(r.body.error.details.fields)).toContain(field);
};

let nodeCounter = 0;

/**
 * Registers a node through the API. Its agent address is 127.0.0.1 on a closed port, so calls to it
 * fail fast with NODE_UNAVAILABLE (syncs are best effort; deletes of its servers need `force`).
 */
export async function createNode(p: TestPlatform, adminToken: string, extra: Record<string, unknown> = {}) {
  const r = await p.request('POST', '/api/v1/nodes', {
    token: adminToken,
    body: { name: `node-${++nodeCounter}-${Date.now()}`, fqdn: '127.0.0.1', port: 1, memory: 8192, disk: 65536, cpuCores: 4, ...extra },
  });
  if (r.status !== 201) throw new Error(`node create failed: ${r.status} ${r.text}`);
  return r.body.data as { id: string; token: string; [k: string]: any };
}

export async function blueprintsByKey(p: TestPlatform, token: string): Promise<Record<string, any>> {
  const r = await p.request('GET', '/api/v1/blueprints?limit=100', { token });
  if (r.status !== 200) throw new Error(`blueprints failed: ${r.status} ${r.text}`);
  return Object.fromEntries(r.body.data.map((b: any) => [b.key, b]));
}

/** The id of the platform's local node (started with `localAgent: true`). */
export async function localNodeId(p: TestPlatform, adminToken: string): Promise<string> {
  const r = await p.request('GET', '/api/v1/nodes', { token: adminToken });
  const local = r.body.data?.find((n: any) => n.name === 'local');
  if (!local) throw new Error(`no local node: ${r.status} ${r.text}`);
  return local.id;
}

/** Waits until the server reports `status` over REST. */
export async function waitForStatus(p: TestPlatform, token: string, id: string, status: string, timeoutMs = 30_000): Promise<void> {
  await until(async () => (await p.request('GET', `/api/v1/servers/${id}`, { token })).body.data?.status === status, timeoutMs, `server ${id} to be ${status}`);
}

/** A demo-game server of `ownerToken`'s user on the local node, installed (offline); its id. */
export async function createLocalDemoServer(p: TestPlatform, adminToken: string, ownerToken: string, name: string): Promise<string> {
  const [nodeId, blueprints] = await Promise.all([localNodeId(p, adminToken), blueprintsByKey(p, ownerToken)]);
  const body = { name, nodeId, blueprintId: blueprints['demo-game'].id, memory: 256, cpu: 100, disk: 512 };
  const r = await p.request('POST', '/api/v1/servers', { token: ownerToken, body });
  if (r.status !== 201) throw new Error(`server create failed: ${r.status} ${r.text}`);
  await waitForStatus(p, ownerToken, r.body.data.id, 'offline');
  return r.body.data.id;
}

/** A shell-command server of `ownerToken`'s user on the local node running `command`, installed (offline); its id. */
export async function createLocalShellServer(p: TestPlatform, adminToken: string, ownerToken: string, name: string, command: string): Promise<string> {
  const [nodeId, blueprints] = await Promise.all([localNodeId(p, adminToken), blueprintsByKey(p, ownerToken)]);
  const body = { name, nodeId, blueprintId: blueprints['shell-command'].id, memory: 128, cpu: 50, disk: 256, variables: { COMMAND: command } };
  const r = await p.request('POST', '/api/v1/servers', { token: ownerToken, body });
  if (r.status !== 201) throw new Error(`server create failed: ${r.status} ${r.text}`);
  await waitForStatus(p, ownerToken, r.body.data.id, 'offline');
  return r.body.data.id;
}

/**
 * A demo-game server of `ownerToken`'s user on a node registered with no agent behind it (a server
 * that exists as records only: schedules and their runs, tasks that never reach a node); its id.
 */
export async function createRecordsOnlyServer(p: TestPlatform, adminToken: string, ownerToken: string, name: string): Promise<string> {
  const [node, blueprints] = await Promise.all([createNode(p, adminToken), blueprintsByKey(p, ownerToken)]);
  const body = { name, nodeId: node.id, blueprintId: blueprints['demo-game'].id, memory: 64, cpu: 10, disk: 128 };
  const r = await p.request('POST', '/api/v1/servers', { token: ownerToken, body });
  if (r.status !== 201) throw new Error(`server create failed: ${r.status} ${r.text}`);
  return r.body.data.id;
}

/**
 * Creates a server (`body` of POST /servers) and waits until it is installed (offline); from its creation
 * on, the text of every console line the panel's hub hands out for it is kept in `lines` until `stop()`.
 */
export async function createRecordedServer(p: TestPlatform, token: string, body: Record<string, unknown>): Promise<{ id: string; lines: string[]; stop: () => void }> {
  const r = await p.request('POST', '/api/v1/servers', { token, body });
  if (r.status !== 201) throw new Error(`server create failed: ${r.status} ${r.text}`);
  const id: string = r.body.data.id;
  await waitForStatus(p, token, id, 'offline');
  const lines: string[] = [];
  const stop = await p.services.console.hub.subscribe(id, (e) => {
    if (e.type === 'console_output') lines.push(String(e.data.line));
  });
  return { id, lines, stop };
}

/** Starts the server (offline, installed) and keeps every line of its console output in `lines` until `stop()`. */
export async function startWithConsole(p: TestPlatform, token: string, id: string): Promise<{ lines: string[]; stop: () => void }> {
  const r = await p.request('POST', `/api/v1/servers/${id}/start`, { token });
  if (r.status !== 200) throw new Error(`server start failed: ${r.status} ${r.text}`);
  await waitForStatus(p, token, id, 'running');
  const lines: string[] = [];
  const stop = await p.services.console.hub.subscribe(id, (e) => {
    if (e.type === 'console_output') lines.push(String(e.data.line));
  });
  return { lines, stop };
}

/** Requests to `/api/v1` as one caller (an administrator in the restart tests). */
export type Api = (method: string, sub: string, body?: unknown) => Promise<Reply>;

/** A server of `blueprintId` on the node (with `extra` fields), installed and started; `read` gets it from the panel again. */
export async function runningServer(api: Api, name: string, nodeId: string, blueprintId: string, extra: Record<string, unknown> = {}): Promise<{ id: string; read: () => Promise<any> }> {
  const created = await api('POST', '/servers', { name, nodeId, blueprintId, memory: 256, cpu: 100, disk: 512, ...extra });
  if (created.status !== 201) throw new Error(`server create failed: ${created.status} ${created.text}`);
  const id: string = created.body.data.id;
  const read = async () => (await api('GET', `/servers/${id}`)).body.data;
  await until(async () => (await read()).status === 'offline', 30_000, 'the install');
  const started = await api('POST', `/servers/${id}/start`);
  if (started.status !== 200) throw new Error(`server start failed: ${started.status} ${started.text}`);
  await until(async () => (await read()).status === 'running', 30_000, 'the server to run');
  return { id, read };
}

/** A schedule's last run, once it has ended (read as `token`, who needs schedule.read). */
export async function endedScheduleRun(p: TestPlatform, token: string, serverId: string, scheduleId: string): Promise<any> {
  return until(async () => {
    const runs = await p.request('GET', `/api/v1/servers/${serverId}/schedules/${scheduleId}/runs`, { token });
    const last = runs.body.data[0];
    return last && last.status !== 'running' ? last : null;
  }, 30_000, 'the run to end');
}
