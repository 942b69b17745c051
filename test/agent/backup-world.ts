/**
 * One agent (in this process) with one shell-command server for a backups test file: started before
 * its tests (a first backup makes the server's directory its uid's), closed after them, with the
 * requests and waits the tests share.
 */
import { spawn } from 'node:child_process';
import { lstatSync } from 'node:fs';
import path from 'node:path';
import type { BackupReport, RestoreReport } from '../../src/shared/node-protocol';
import { createServer, newId, specFor, startHarness, waitFor, type Harness } from './helpers';

export interface BackupWorld {
  h: Harness;
  id: string;
  /** the server's directory on the node */
  dir: string;
  /** the node's reports of one backup (its progress, its end, its restores) */
  events(backupId: string): (BackupReport | RestoreReport)[];
  /** Makes a backup and waits for its end. */
  backup(backupId: string, ignored?: string[]): Promise<BackupReport>;
  /** Restores a backup and waits for the report of its end. */
  restore(backupId: string, truncate: boolean): Promise<RestoreReport>;
  /** Runs a shell command as the server's own process would: as its uid, in its directory. */
  asServer(cmd: string): Promise<number | null>;
}

export function backupWorld(disk = 64): BackupWorld {
  const w = { id: newId() } as BackupWorld;
  w.events = (backupId) => (w.h.panel.events as unknown as (BackupReport | RestoreReport)[]).filter((e) => e.backupId === backupId);
  w.backup = async (backupId, ignored = []) => {
    const r = await w.h.request('POST', `/api/servers/${w.id}/backups`, { id: backupId, ignored });
    expect(r.status).toBe(200);
    return waitFor(() => w.events(backupId).find((e): e is BackupReport => e.kind === 'backup' && e.status !== 'pending'), `backup ${backupId}`, 100_000);
  };
  w.restore = async (backupId, truncate) => {
    const r = await w.h.request('POST', `/api/servers/${w.id}/backups/${backupId}/restore`, { truncate });
    expect(r.status).toBe(200);
    return waitFor(() => w.events(backupId).find((e): e is RestoreReport => e.kind === 'restore'), `restore of ${backupId}`, 60_000);
  };
  w.asServer = (cmd) => {
    const { uid, gid } = lstatSync(w.dir);
    return new Promise((resolve) => spawn('bash', ['-c', cmd], { cwd: w.dir, uid, gid, stdio: 'ignore' }).on('exit', resolve));
  };
  beforeAll(async () => {
    w.h = await startHarness();
    await createServer(w.h, specFor('shell-command', w.id, { disk }, { COMMAND: 'exec sleep 1000' }));
    w.dir = path.join(w.h.dataDir, 'agent', 'servers', w.id);
    expect((await w.backup('warm')).status).toBe('completed');
  }, 60_000);
  afterAll(async () => {
    expect(await w.h?.close()).toEqual([]);
  });
  return w;
}
