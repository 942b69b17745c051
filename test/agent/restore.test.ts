import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startAgent } from '../../src/agent';
import { pidAlive } from '../../src/agent/environment/proc';
import { createServer, demoSpec, getState, logs, newId, power, startHarness, startRunning, waitFor, waitStatus, type Harness } from './helpers';
import { sleep } from '../support/wait.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  expect(await h?.close()).toEqual([]);
});

const stateFile = (): any => JSON.parse(readFileSync(path.join(h.dataDir, 'agent', 'state.json'), 'utf8'));

describe('agent restart finds the true state', () => {
  test('close without stopping → new agent kills the leftover process and starts the server again', async () => {
    const running = newId();
    const offline = newId();
    const installing = newId();
    await createServer(h, demoSpec(running));
    await createServer(h, demoSpec(offline));
    await startRunning(h, running);
    const slowInstall = { ...demoSpec(installing), install: 'echo begin; sleep 30; echo end' };
    const r = await h.request('PUT', `/api/servers/${installing}`, slowInstall);
    expect(r.body.data.status).toBe('installing');
    await waitFor(() => stateFile().servers[running]?.pid, 'pid in state.json');
    const oldPid: number = stateFile().servers[running].pid;
    expect(pidAlive(oldPid)).toBe(true);

    await h.agent.close({ stopServers: false });
    // the server process outlived the agent
    expect(pidAlive(oldPid)).toBe(true);
    const saved = stateFile().servers;
    expect(saved[running]).toMatchObject({ desiredRunning: true, status: 'running', pid: oldPid });
    expect(saved[installing].installed).toBe(false);

    h.panel.events = [];
    h.panel.servers = [running, offline, installing].map((id) => ({ spec: demoSpec(id), status: 'offline' as const }));
    h.panel.servers[0]!.status = 'running';
    h.panel.servers[2]!.spec = slowInstall;
    await h.restartAgent();
    await waitFor(() => !pidAlive(oldPid) || readFileSync(`/proc/${oldPid}/stat`, 'utf8').split(' ')[2] === 'Z', 'old pid gone');

    const st = await waitStatus(h, running, 'running');
    expect(stateFile().servers[running].pid).not.toBe(oldPid);
    expect(st.startedAt).toEqual(expect.any(String));
    expect((await getState(h, offline)).status).toBe('offline');
    expect((await getState(h, installing)).status).toBe('installing'); // interrupted install is re-run
    await waitFor(() => h.panel.eventsFor(running).some((e) => e.status === 'running'), 'running event');
    expect(h.panel.eventsFor(running)[0]).toMatchObject({ status: 'offline', reason: 'agent_restart' });
    expect(h.panel.statusesFor(offline)).toEqual(['offline']);
    expect(h.panel.statusesFor(installing)[0]).toBe('installing');
    await h.request('DELETE', `/api/servers/${installing}`);
  });

  test('graceful close stops servers (agent_restart) and the next boot starts them again', async () => {
    const id = newId();
    await createServer(h, demoSpec(id));
    await startRunning(h, id);
    h.panel.servers = [{ spec: demoSpec(id), status: 'running' }];
    await h.agent.close(); // stopServers defaults to true
    expect(h.panel.eventsFor(id).slice(-1)[0]).toMatchObject({ status: 'offline', reason: 'agent_restart', exitCode: 0 });
    expect(stateFile().servers[id]).toMatchObject({ desiredRunning: true, status: 'offline', pid: null });
    h.agent = await startAgent(h.opts);
    h.base = `http://127.0.0.1:${h.agent.port}`;
    await waitStatus(h, id, 'running');
    // a user stop is remembered: not started at the next boot
    await h.request('POST', `/api/servers/${id}/power`, { action: 'stop' });
    await waitStatus(h, id, 'offline');
    await h.restartAgent();
    await sleep(300);
    expect((await getState(h, id)).status).toBe('offline');
  });

  test('panel down at boot: state.json is used, events are delivered in order once it is back', async () => {
    const id = newId();
    await createServer(h, demoSpec(id));
    await startRunning(h, id);
    h.panel.servers = [{ spec: demoSpec(id), status: 'running' }];
    h.panel.down = true;
    await h.restartAgent();
    await waitStatus(h, id, 'running');
    await h.request('POST', `/api/servers/${id}/power`, { action: 'kill' });
    h.panel.events = [];
    h.panel.down = false;
    await waitFor(() => h.panel.eventsFor(id).some((e) => e.reason === 'killed'), 'events after panel is back', 10000);
    const statuses = h.panel.statusesFor(id);
    expect(statuses).toEqual(['offline', 'starting', 'running', 'offline']);
    expect(h.panel.eventsFor(id)[0]!.reason).toBe('agent_restart');
    // the agent adopts servers the panel knows about once it can reach it (spec updates included)
    expect((await logs(h, id)).length).toBeGreaterThan(0);
  });
});

describe("the panel's list of the node's servers at boot", () => {
  const serverDir = (id: string) => path.join(h.dataDir, 'agent', 'servers', id);
  const backupDir = (id: string) => path.join(h.dataDir, 'agent', 'backups', id);
  /** Restarts the agent (its servers left running) with `list` as the panel's list at its boot. */
  const bootWith = async (list: typeof h.panel.servers) => {
    await h.agent.close({ stopServers: false });
    h.panel.servers = list;
    h.agent = await startAgent(h.opts);
    h.base = `http://127.0.0.1:${h.agent.port}`;
  };

  test('a server the panel does not list is removed with its files and backups; the listed one stays', async () => {
    const kept = { spec: demoSpec(newId()), status: 'offline' as const };
    const gone = { spec: demoSpec(newId()), status: 'offline' as const };
    h.panel.servers = [kept, gone];
    await createServer(h, kept.spec);
    await createServer(h, gone.spec);
    // a heartbeat the panel missed in an earlier test (its panel was down) has the agent fetch the
    // panel's list again, which lists these two: it may install one again right after its PUT
    await waitFor(async () => ((await power(h, gone.spec.id, 'start')).status === 200 ? true : (await waitStatus(h, gone.spec.id, 'offline', 20000), null)), 'the server to start once installed', 30000, 50);
    await waitStatus(h, gone.spec.id, 'running', 15000);
    mkdirSync(path.join(backupDir(gone.spec.id), 'manifests'), { recursive: true });
    await bootWith([kept]);
    expect((await h.request('GET', `/api/servers/${gone.spec.id}`)).status).toBe(404);
    expect(existsSync(serverDir(gone.spec.id))).toBe(false);
    expect(existsSync(backupDir(gone.spec.id))).toBe(false);
    expect(stateFile().servers[gone.spec.id]).toBeUndefined();
    expect((await getState(h, kept.spec.id)).status).toBe('offline');
    expect(existsSync(serverDir(kept.spec.id))).toBe(true);
  });

  test('a list with an entry that is not a server is not acted on: the servers come from state.json', async () => {
    const entry = { spec: demoSpec(newId()), status: 'offline' as const };
    h.panel.servers = [entry];
    await createServer(h, entry.spec);
    await bootWith([{ status: 'offline' } as never]);
    expect((await getState(h, entry.spec.id)).status).toBe('offline');
    expect(existsSync(serverDir(entry.spec.id))).toBe(true);
    h.panel.servers = [entry];
  });
});
