/**
 * A schedule's power tasks wait for the state their action leads to before the run moves on
 * (src/schedules/tasks.ts POWER_WAITS): `stop` until the server is offline, `restart` until it is
 * back up, `start` until it is starting or running (after waiting, when it finds the server
 * stopping, for it to be offline); each wait is bounded and a task whose bound passes fails saying
 * the state the server was in and what to do. Also: a scheduled backup is named on the schedule's
 * clock, naming the zone.
 *
 * Real panel, real node agents, real processes: a game (bash) that saves its world for 3 s when it
 * reads `stop` on its console, and echoes every other line as `got <line>`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RunningAgent } from '../../src/agent/index.js';
import { killAllUnder } from '../agent/helpers.js';
import { localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { startRemoteNode } from '../support/remote-node.js';
import { until } from '../support/wait.js';

/** The panel's STOP_GRACE_SECONDS (its local node's too): a stop task waits this plus 15 s at most. */
const GRACE_SECONDS = 6;
const GAME =
  'bash -c \'echo Ready; while read -r l; do if [ "$l" = stop ]; then echo saving world; sleep 3; echo saved > world.dat; echo bye; exit 0; fi; echo "got $l"; done\'';
/** Saves for far longer than the panel's grace when told to stop (on a node whose own grace is longer). */
const STUBBORN = 'bash -c \'echo Ready; while read -r l; do if [ "$l" = stop ]; then echo saving for a long time; sleep 100; exit 0; fi; done\'';

let p: TestPlatform;
let admin: string;
let local: string;
let game: string;
let stubborn: string;
let remote: { nodeId: string; agent: RunningAgent } | null = null;
let remoteDir: string | null = null;
let stubbornId: string | null = null;
const feeds: (() => void)[] = [];

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, scheduleTickMs: 0, stopGraceSeconds: GRACE_SECONDS });
  admin = (await p.admin()).token;
  local = await localNodeId(p, admin);
  const blueprint = async (key: string, startup: string) => {
    const r = await p.request('POST', '/api/v1/admin/blueprints', { token: admin, body: { key, name: key, startup, stop: 'stop', ready: 'Ready' } });
    if (r.status !== 201) throw new Error(r.text);
    return r.body.data.id as string;
  };
  game = await blueprint('saves-on-stop', GAME);
  stubborn = await blueprint('stubborn-save', STUBBORN);
}, 120_000);
afterAll(async () => {
  for (const stop of feeds) stop();
  // the stubborn server would otherwise keep its node's close waiting for its 300 s grace
  if (stubbornId) await p.request('POST', `/api/v1/servers/${stubbornId}/kill`, { token: admin }).catch(() => undefined);
  if (remoteDir) killAllUnder(remoteDir);
  await remote?.agent.close().catch(() => undefined);
  await p?.stop();
  if (remoteDir) rmSync(remoteDir, { recursive: true, force: true });
}, 60_000);

/** A new server of `blueprintId`, started and running; the lines of its console from then on. */
async function runningServer(name: string, blueprintId = game, nodeId = local): Promise<{ id: string; lines: string[] }> {
  const r = await p.request('POST', '/api/v1/servers', { token: admin, body: { name, nodeId, blueprintId, memory: 128, cpu: 50, disk: 128 } });
  if (r.status !== 201) throw new Error(r.text);
  const id: string = r.body.data.id;
  await waitForStatus(p, admin, id, 'offline');
  const lines: string[] = [];
  feeds.push(await p.services.console.hub.subscribe(id, (e) => void (e.type === 'console_output' && lines.push(String(e.data.line)))));
  const started = await p.request('POST', `/api/v1/servers/${id}/start`, { token: admin });
  if (started.status !== 200) throw new Error(started.text);
  await waitForStatus(p, admin, id, 'running');
  return { id, lines };
}

/** Creates a schedule of `tasks` (cron never due in the test), runs it now, and resolves with the ended run. */
async function runOnce(serverId: string, tasks: unknown[], extra: Record<string, unknown> = {}, timeoutMs = 45_000): Promise<any> {
  const S = (sub = '') => `/api/v1/servers/${serverId}/schedules${sub}`;
  const sc = await p.request('POST', S(), { token: admin, body: { name: 'power waits', cron: '0 4 * * *', tasks, ...extra } });
  if (sc.status !== 201) throw new Error(sc.text);
  const started = await p.request('POST', S(`/${sc.body.data.id}/run`), { token: admin });
  if (started.status !== 201) throw new Error(started.text);
  return until(async () => {
    const run = (await p.request('GET', S(`/${sc.body.data.id}/runs`), { token: admin })).body.data[0];
    return run.status !== 'running' ? run : null;
  }, timeoutMs, 'the run to end', 200);
}

const power = (action: string) => ({ action: 'power', payload: { action } });
const status = async (id: string) => (await p.request('GET', `/api/v1/servers/${id}`, { token: admin })).body.data.status;

test('stop, backup, start: the backup holds what the game saved as it stopped, and the server runs again', async () => {
  const { id, lines } = await runningServer('nightly');
  const run = await runOnce(id, [power('stop'), { action: 'backup', payload: {} }, power('start')]);
  const backups = (await p.request('GET', `/api/v1/servers/${id}/backups`, { token: admin })).body.data;
  expect({ run: run.status, errors: run.tasks.map((t: any) => t.error), backups: backups.map((b: any) => [b.status, b.files]), status: await status(id) }).toEqual({
    run: 'completed',
    errors: [null, null, null],
    backups: [['completed', 1]], // world.dat, written by the game as it stopped
    status: expect.stringMatching(/^(starting|running)$/),
  });
  await until(() => lines.filter((l) => l === 'Ready').length === 2, 10_000, 'the game ready again');
  expect(lines).toContain('bye');
});

test('a start task that finds the server stopping waits until it is offline, then starts it', async () => {
  const { id, lines } = await runningServer('stopping');
  expect((await p.request('POST', `/api/v1/servers/${id}/stop`, { token: admin })).status).toBe(200);
  expect(await status(id)).toBe('stopping');
  const run = await runOnce(id, [power('start')]);
  expect({ run: run.status, errors: run.tasks.map((t: any) => t.error), status: await status(id) }).toEqual({
    run: 'completed',
    errors: [null],
    status: expect.stringMatching(/^(starting|running)$/),
  });
  expect(lines).toContain('bye'); // the old process ended before the new one started
  await until(() => lines.filter((l) => l === 'Ready').length === 2, 10_000, 'the game ready again');
});

test('restart: the task after it reaches the game started again, not the one saving and stopping', async () => {
  const { id, lines } = await runningServer('restarted');
  const run = await runOnce(id, [power('restart'), { action: 'command', payload: { command: 'hello' } }]);
  expect({ run: run.status, errors: run.tasks.map((t: any) => t.error) }).toEqual({ run: 'completed', errors: [null, null] });
  await until(() => lines.includes('got hello'), 10_000, 'the new process to echo the command');
  const again = lines.indexOf('Ready', lines.indexOf('Ready') + 1);
  expect(lines.indexOf('bye')).toBeGreaterThan(-1);
  expect(again).toBeGreaterThan(lines.indexOf('bye'));
  expect(lines.indexOf('got hello')).toBeGreaterThan(again);
  expect(await status(id)).toBe('running');
});

test('a stop whose server is still stopping when the bound passes fails, saying its state and what to do; the tasks after it are skipped', async () => {
  remoteDir = mkdtempSync(path.join(os.tmpdir(), 'hostpanel-power-waits-'));
  // a node whose own grace is far longer than the panel's: its server is still stopping at the bound
  remote = await startRemoteNode(p, admin, 'long-grace', remoteDir, { stopGraceSeconds: 300 });
  const { id, lines } = await runningServer('stubborn', stubborn, remote.nodeId);
  stubbornId = id;
  const began = Date.now();
  const run = await runOnce(id, [power('stop'), power('start')], {}, 60_000);
  const took = Date.now() - began;
  expect(lines).toContain('saving for a long time');
  expect(run.status).toBe('failed');
  expect(run.tasks.map((t: any) => [t.status, t.error])).toEqual([
    ['failed', expect.stringMatching(new RegExp(`^the server was still stopping ${GRACE_SECONDS + 15} s after the stop \\(the task waits until it is offline\\): .*kill it`))],
    ['skipped', 'an earlier task failed'],
  ]);
  expect(took).toBeGreaterThanOrEqual((GRACE_SECONDS + 15) * 1000);
  expect(await status(id)).toBe('stopping');
  expect((await p.request('POST', `/api/v1/servers/${id}/kill`, { token: admin })).status).toBe(200);
  await waitForStatus(p, admin, id, 'offline');
}, 90_000);

test("a scheduled backup is named on the schedule's clock and names its zone", async () => {
  const { id } = await runningServer('named');
  for (const timezone of ['Europe/Berlin', 'America/New_York', 'UTC']) {
    const before = new Set((await p.request('GET', `/api/v1/servers/${id}/backups`, { token: admin })).body.data.map((b: any) => b.id));
    const run = await runOnce(id, [{ action: 'backup', payload: {} }], { timezone });
    expect(run.status).toBe('completed');
    const made = (await p.request('GET', `/api/v1/servers/${id}/backups`, { token: admin })).body.data.find((b: any) => !before.has(b.id));
    const local = (at: number) =>
      new Intl.DateTimeFormat('sv-SE', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' }).format(new Date(at));
    const created = Date.parse(made.createdAt);
    // named just before the backup's record was made: its minute, or the one before at a minute's turn
    expect([local(created), local(created - 5000)].map((t) => `Scheduled ${t} ${timezone}`)).toContain(made.name);
  }
}, 90_000);
