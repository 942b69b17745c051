/**
 * A node agent killed (SIGKILL) in the middle of a backup: at its next start the backup is reported
 * failed and nothing of it stays in the store (no marker, no half-written file, no stored file that
 * no backup names), while a completed backup made before is kept whole.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { deriveNodeKey, generateNodeToken, type BackupReport } from '../../src/shared/node-protocol';
import { AGENT_MAIN, hasAgentBuild, startAgentProcess, type AgentProcess } from './agent-process';
import { FakePanel, newId, specFor, tmpDir, waitFor } from './helpers';

const maybe = hasAgentBuild ? test : test.skip;
if (!hasAgentBuild) console.warn(`skipped: ${AGENT_MAIN} is missing; run the suite with \`npm test\` (it builds first)`);

let panel: FakePanel;
const running: AgentProcess[] = [];
afterAll(async () => {
  for (const a of running) await a.stop().catch(() => undefined);
  await panel?.close();
});

const reports = (id: string) => (panel.events as unknown as BackupReport[]).filter((e) => e.kind === 'backup' && e.backupId === id);
const list = (dir: string) => (existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String) : []);

maybe('an agent killed during a backup reports it failed at its next start and keeps nothing of it', async () => {
  const nodeToken = generateNodeToken();
  const nodeId = 'node-crash-' + newId().slice(0, 8);
  panel = new FakePanel(nodeId, deriveNodeKey(nodeToken));
  await panel.listen();
  const node = { panelUrl: panel.url, nodeId, nodeToken };
  const dataDir = tmpDir('hp-backup-crash-');
  const id = newId();
  // 300 files of 256 KiB of random bytes (75 MiB): a backup takes a moment
  const spec = specFor('shell-command', id, { disk: 512 }, { COMMAND: 'mkdir -p data && for i in $(seq 1 300); do head -c 262144 /dev/urandom > data/f$i; done; echo ready; exec sleep 1000' });
  panel.servers = [{ spec, status: 'offline' }];
  let agent = await startAgentProcess(0, { DATA_DIR: dataDir }, node);
  running.push(agent);
  expect((await agent.request('PUT', `/api/servers/${id}`, spec)).status).toBe(200);
  await waitFor(async () => (await agent.request('GET', `/api/servers/${id}`)).body?.data?.status === 'offline', 'the install', 20_000);
  expect((await agent.request('POST', `/api/servers/${id}/power`, { action: 'start' })).status).toBe(200);
  const files = path.join(dataDir, 'agent', 'servers', id, 'data');
  await waitFor(() => list(files).length >= 300, 'the files', 60_000);
  await agent.request('POST', `/api/servers/${id}/power`, { action: 'kill' });

  // a first backup completes: it must survive the crash of the second
  expect((await agent.request('POST', `/api/servers/${id}/backups`, { id: 'whole', ignored: ['data/f2*'] })).status).toBe(200);
  await waitFor(() => reports('whole').find((r) => r.status === 'completed'), 'the first backup', 30_000);

  const store = path.join(dataDir, 'agent', 'backups', id);
  const blobsBefore = list(path.join(store, 'blobs')).length;
  expect((await agent.request('POST', `/api/servers/${id}/backups`, { id: 'cut', ignored: [] })).status).toBe(200);
  // kill it once it has stored some of the files it did not have yet
  await waitFor(() => list(path.join(store, 'blobs')).length > blobsBefore + 5, 'the backup to be under way', 30_000);
  agent.child.kill('SIGKILL');
  await new Promise((r) => agent.child.once('exit', r));
  expect(existsSync(path.join(store, 'pending', 'cut'))).toBe(true);
  expect(reports('cut').some((r) => r.status !== 'pending')).toBe(false);

  agent = await startAgentProcess(0, { DATA_DIR: dataDir }, node);
  running.push(agent);
  const failed = await waitFor(() => reports('cut').find((r) => r.status === 'failed'), 'the failed report', 20_000);
  expect(failed.error).toMatch(/stopped during the backup/);
  expect(list(path.join(store, 'pending'))).toEqual([]);
  expect(list(path.join(store, 'tmp'))).toEqual([]);
  expect(list(path.join(store, 'manifests'))).toEqual(['whole.json']);
  // only the completed backup's files are left, and all of them
  const manifest = JSON.parse(readFileSync(path.join(store, 'manifests', 'whole.json'), 'utf8'));
  const named = new Set(manifest.entries.filter((e: any) => e.sha256).map((e: any) => e.sha256));
  const stored = list(path.join(store, 'blobs')).filter((p) => p.includes('/')).map((p) => path.basename(p));
  expect(new Set(stored)).toEqual(named);
}, 180_000);
