/**
 * A restore and a delete of the same backup, asked for together (a real agent, real files): one of
 * them is refused, and a restore that is accepted completes. The restore read the backup's manifest
 * before it claimed the server, and the delete looked for a restore only at its start: both were
 * accepted, the delete freed the stored files, and the restore failed partway ("The backup's copy
 * of /d/f1 is missing").
 */
import { spawn } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import path from 'node:path';
import type { BackupReport, RestoreReport } from '../../src/shared/node-protocol';
import { createServer, newId, specFor, startHarness, waitFor, waitStatus, type Harness } from './helpers';

jest.setTimeout(120_000);

let h: Harness;
const id = newId();
let dir: string;

beforeAll(async () => {
  h = await startHarness();
  await createServer(h, specFor('shell-command', id, { disk: 64 }, { COMMAND: 'exec sleep 1000' }));
  dir = path.join(h.dataDir, 'agent', 'servers', id);
  // a first backup prepares the server's files (its directory becomes its uid's)
  expect((await backup('warm')).status).toBe('completed');
}, 60_000);
afterAll(async () => {
  expect(await h?.close()).toEqual([]);
});

const events = (backupId: string) => (h.panel.events as unknown as (BackupReport | RestoreReport)[]).filter((e) => e.backupId === backupId);

async function backup(backupId: string): Promise<BackupReport> {
  const r = await h.request('POST', `/api/servers/${id}/backups`, { id: backupId, ignored: [] });
  expect(r.status).toBe(200);
  return waitFor(() => events(backupId).find((e): e is BackupReport => e.kind === 'backup' && e.status !== 'pending'), `backup ${backupId}`, 60_000);
}

/** Runs a shell command as the server's own process would: as its uid, in its directory. */
function asServer(cmd: string): Promise<number | null> {
  const { uid, gid } = lstatSync(dir);
  return new Promise((resolve) => spawn('bash', ['-c', cmd], { cwd: dir, uid, gid, stdio: 'ignore' }).on('exit', resolve));
}

/** 200 files of new random contents: no other backup holds them. */
const scramble = () => asServer('mkdir -p d && for i in $(seq 1 200); do head -c 20000 /dev/urandom > d/f$i; done');

test('a restore and a delete of one backup at once: never both accepted, and an accepted restore completes', async () => {
  await scramble();
  const outcomes: string[] = [];
  for (let k = 0; k < 6; k++) {
    const b = `rd${k}`;
    expect((await backup(b)).status).toBe('completed');
    await scramble();
    const [restore, remove] = await Promise.all([h.request('POST', `/api/servers/${id}/backups/${b}/restore`, { truncate: true }), h.request('DELETE', `/api/servers/${id}/backups/${b}`)]);
    const end = restore.status === 200 ? await waitFor(() => events(b).find((e): e is RestoreReport => e.kind === 'restore'), 'the restore', 60_000) : null;
    outcomes.push(`restore ${restore.status} ${end ? `${end.status} ${end.error ?? ''}` : restore.body?.error?.code} / delete ${remove.status}`);
    expect(existsSync(path.join(h.dataDir, 'agent', 'backups', id, 'manifests', `${b}.json`))).toBe(remove.status !== 204);
    await waitStatus(h, id, 'offline');
  }
  // one of the two is accepted, and a restore accepted completes
  const ok = (o: string) => /^restore 200 completed .*delete 422$|^restore (404|422) .*delete 204$/.test(o);
  expect(outcomes.filter((o) => !ok(o))).toEqual([]);
});
