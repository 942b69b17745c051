/**
 * The agent's reports survive its restart (src/agent/panel-client.ts keeps its event queue in
 * `DATA_DIR/agent/panel-queue.jsonl`), and what a marker says was under way is reported at the next
 * start (src/agent/backups):
 * - a backup's end reported while the panel is down reaches it after the agent restarted;
 * - a backup's marker is on disk when the request for it is answered;
 * - a backup whose manifest was written but whose end was never queued is reported completed;
 * - a restore's marker left by a dead agent is reported as a failed restore, with the counts;
 * - a queue file that is damaged does not stop the agent (its events are kept, the rest dropped);
 * - the queue file is bounded.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startAgent } from '../../src/agent/index';
import { PanelClient } from '../../src/agent/panel-client';
import { BackupStore } from '../../src/agent/backups/store';
import type { BackupReport, RestoreReport, ServerStateEvent } from '../../src/shared/node-protocol';
import { backupWorld } from './backup-world';
import { specFor, tmpDir, waitFor } from './helpers';

const w = backupWorld();
const store = () => path.join(w.h.dataDir, 'agent', 'backups', w.id);
const queueFile = () => path.join(w.h.dataDir, 'agent', 'panel-queue.jsonl');
const ends = (backupId: string) => w.events(backupId).filter((e): e is BackupReport => e.kind === 'backup' && e.status !== 'pending');

/** The panel lists the server (an agent removes a server its panel does not list). */
function listServer(): void {
  w.h.panel.servers = [{ spec: specFor('shell-command', w.id, { disk: 64 }, { COMMAND: 'exec sleep 1000' }), status: 'offline' }];
}

async function restart(): Promise<void> {
  listServer();
  await w.h.restartAgent();
}

/** Starts the agent again (after a close of the test's). */
async function startAgain(): Promise<void> {
  listServer();
  w.h.agent = await startAgent(w.h.opts);
  w.h.base = `http://127.0.0.1:${w.h.agent.port}`;
}

afterEach(() => {
  w.h.panel.down = false;
  jest.restoreAllMocks();
});

test('a backup that ends while the panel is down is reported once the panel is back, the agent restarted meanwhile', async () => {
  await w.asServer('echo one > one.txt');
  w.h.panel.down = true;
  expect((await w.h.request('POST', `/api/servers/${w.id}/backups`, { id: 'while-down', ignored: [] })).status).toBe(200);
  await waitFor(() => existsSync(path.join(store(), 'manifests', 'while-down.json')) && !existsSync(path.join(store(), 'pending', 'while-down')), 'the backup to be made', 30_000);
  // its end waits on the node's disk, not only in memory
  expect(readFileSync(queueFile(), 'utf8')).toContain('"backupId":"while-down","status":"completed"');
  await restart(); // its close cannot deliver it (the panel is down)
  expect(ends('while-down')).toEqual([]);
  w.h.panel.down = false;
  const end = await waitFor(() => ends('while-down')[0], 'the report of the end', 30_000);
  expect(end).toMatchObject({ status: 'completed', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
  // delivered: the file holds it no more
  await waitFor(() => !existsSync(queueFile()) || !readFileSync(queueFile(), 'utf8').includes('while-down'), 'the queue file to let it go');
}, 90_000);

test('a backup\u2019s marker is on disk when the request for it is answered (before the backup begins)', async () => {
  expect((await w.backup('to-delete')).status).toBe('completed');
  // the server's next collection (after a delete) is held: a new backup waits for it before it begins
  let release = () => {};
  const held = new Promise<void>((r) => (release = r));
  const collect = BackupStore.prototype.collect;
  jest.spyOn(BackupStore.prototype, 'collect').mockImplementation(async function (this: BackupStore, ...args: Parameters<BackupStore['collect']>) {
    await held;
    return collect.apply(this, args);
  });
  const deleting = w.h.request('DELETE', `/api/servers/${w.id}/backups/to-delete`);
  await waitFor(() => !existsSync(path.join(store(), 'manifests', 'to-delete.json')), 'the delete to be under way');
  const r = await w.h.request('POST', `/api/servers/${w.id}/backups`, { id: 'marked', ignored: [] });
  expect(r.status).toBe(200);
  const marked = existsSync(path.join(store(), 'pending', 'marked'));
  release();
  expect((await deleting).status).toBe(204);
  expect(marked).toBe(true);
  expect(await waitFor(() => ends('marked')[0], 'the backup')).toMatchObject({ status: 'completed' });
  expect(existsSync(path.join(store(), 'pending', 'marked'))).toBe(false);
}, 60_000);

test('a backup whose manifest was written but whose end was never queued is reported completed at the next start', async () => {
  const made = await w.backup('made');
  expect(made.status).toBe('completed');
  // what an agent killed between the manifest and the report leaves: the manifest and the marker
  writeFileSync(path.join(store(), 'pending', 'made'), 'x');
  await restart();
  await waitFor(() => ends('made').length === 2, 'the end reported again');
  expect(ends('made')[1]).toMatchObject({ status: 'completed', sha256: made.sha256, files: made.files, bytes: made.bytes });
  expect(existsSync(path.join(store(), 'pending', 'made'))).toBe(false);
  expect(existsSync(path.join(store(), 'manifests', 'made.json'))).toBe(true);
}, 60_000);

test('a restore a dead agent left under way is reported failed at the next start, with how many files were back', async () => {
  writeFileSync(path.join(store(), 'restoring.json'), JSON.stringify({ backupId: 'made', truncate: false, files: 7, done: 3, startedAt: new Date().toISOString() }));
  await restart();
  const failed = await waitFor(() => w.events('made').find((e): e is RestoreReport => e.kind === 'restore'), 'the failed restore');
  expect(failed).toMatchObject({ status: 'failed', error: 'The node agent stopped during the restore; at least 3 of 7 files were put back: run it again.' });
  expect(existsSync(path.join(store(), 'restoring.json'))).toBe(false);
  // and the server can start
  const started = await w.h.request('POST', `/api/servers/${w.id}/power`, { action: 'start' });
  expect(started.status).toBe(200);
  expect((await w.h.request('POST', `/api/servers/${w.id}/power`, { action: 'kill' })).status).toBe(200);
}, 60_000);

test('a restore that ends leaves no marker; one under way has one', async () => {
  await w.asServer('mkdir -p many && for i in $(seq 1 200); do head -c 20000 /dev/urandom > many/f$i; done');
  expect((await w.backup('many')).status).toBe('completed');
  rmSync(path.join(w.dir, 'many'), { recursive: true, force: true });
  const r = await w.h.request('POST', `/api/servers/${w.id}/backups/many/restore`, { truncate: false });
  expect(r.status).toBe(200);
  // written before the answer
  const marker = JSON.parse(readFileSync(path.join(store(), 'restoring.json'), 'utf8'));
  expect(marker).toMatchObject({ backupId: 'many', truncate: false, files: expect.any(Number) });
  const end = await waitFor(() => w.events('many').find((e): e is RestoreReport => e.kind === 'restore'), 'the restore', 60_000);
  expect(end.status).toBe('completed');
  expect(existsSync(path.join(store(), 'restoring.json'))).toBe(false);
}, 90_000);

test('a damaged queue file does not stop the agent: its events are sent, the rest is logged and dropped', async () => {
  await w.h.agent.close({ stopServers: true });
  const kept: BackupReport = { kind: 'backup', serverId: w.id, backupId: 'from-the-file', status: 'failed', files: 0, bytes: 0, error: 'x', at: new Date().toISOString() };
  writeFileSync(queueFile(), ['not json at all', '{"an":"object that is no event"}', '[1,2]', JSON.stringify(kept), '\u0000\u0001\u00ff', '{"kind":"backup","serverId":"torn'].join('\n'));
  await startAgain();
  await waitFor(() => w.events('from-the-file').length === 1, 'the event of the file');
  expect((await w.h.request('GET', '/api/system')).status).toBe(200);
  await waitFor(() => !existsSync(queueFile()), 'the queue file to be emptied');
  // a queue file that cannot be read at all (a folder) is dropped too
  await w.h.agent.close({ stopServers: true });
  mkdirSync(path.join(queueFile(), 'x'), { recursive: true });
  await startAgain();
  expect((await w.h.request('GET', '/api/system')).status).toBe(200);
  expect(existsSync(queueFile())).toBe(false);
}, 60_000);

test('the queue file is bounded: beyond the limit the oldest events go', async () => {
  const dir = tmpDir('hp-queue-');
  try {
    const file = path.join(dir, 'agent', 'panel-queue.jsonl');
    // a panel that does not answer: nothing is delivered
    const opts = { panelUrl: 'http://127.0.0.1:1', nodeId: 'n', nodeKey: Buffer.alloc(32), maxQueue: 5, queueFile: file, sendAtOnce: false };
    const client = new PanelClient(opts);
    const event = (i: number): ServerStateEvent => ({ serverId: `s${i}`, status: 'offline', at: new Date().toISOString() });
    for (let i = 0; i < 23; i++) client.enqueue(event(i));
    expect(client.pending).toBe(5);
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines.length).toBeLessThanOrEqual(10);
    expect(JSON.parse(lines.at(-1)!).serverId).toBe('s22');
    client.close();
    const again = new PanelClient(opts);
    expect(again.pending).toBe(5);
    expect(readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l).serverId)).toEqual(['s18', 's19', 's20', 's21', 's22']);
    again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
