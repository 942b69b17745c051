/**
 * Links come back from a restore as the server had them (a real agent, real files): their targets
 * byte for byte, absolute ones and ones leading out of the server included. They were rewritten as
 * links made over SFTP are (`/home/container/data` came back `home/container/data`, `/etc` came back
 * `etc`) and one leading out (`../../..`) was left out without a word. A link leading out is still
 * never followed.
 */
import { spawn } from 'node:child_process';
import { lstatSync, readlinkSync, rmSync } from 'node:fs';
import path from 'node:path';
import { signRequest, type BackupReport, type RestoreReport } from '../../src/shared/node-protocol';
import { createServer, newId, specFor, startHarness, waitFor, type Harness } from './helpers';

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

async function restore(backupId: string, truncate: boolean): Promise<RestoreReport> {
  const r = await h.request('POST', `/api/servers/${id}/backups/${backupId}/restore`, { truncate });
  expect(r.status).toBe(200);
  return waitFor(() => events(backupId).find((e): e is RestoreReport => e.kind === 'restore'), `restore of ${backupId}`, 60_000);
}

/** Runs a shell command as the server's own process would: as its uid, in its directory. */
function asServer(cmd: string): Promise<number | null> {
  const { uid, gid } = lstatSync(dir);
  return new Promise((resolve) => spawn('bash', ['-c', cmd], { cwd: dir, uid, gid, stdio: 'ignore' }).on('exit', resolve));
}

const LINKS: Record<string, string> = {
  etc: '/etc',
  container: '/home/container/data',
  host: '', // the server's own folder by its path on the node (set below)
  up: '../../..',
  odd: 'data/../data/./f',
  inside: 'data/f',
};

test('a restore puts back every link with its target as it was; one leading out is still not followed', async () => {
  LINKS.host = path.join(dir, 'data');
  const links = Object.keys(LINKS);
  await asServer(`mkdir -p data && echo x > data/f && ${links.map((l) => `ln -s '${LINKS[l]}' ${l}`).join(' && ')}`);
  expect((await backup('links')).status).toBe('completed');
  for (const l of links) rmSync(path.join(dir, l));
  expect(await restore('links', false)).toMatchObject({ status: 'completed' });
  const target = (l: string) => (lstatSync(path.join(dir, l), { throwIfNoEntry: false }) ? readlinkSync(path.join(dir, l)) : null);
  expect(Object.fromEntries(links.map((l) => [l, target(l)]))).toEqual(LINKS);
  for (const l of links) expect([l, lstatSync(path.join(dir, l)).uid]).toEqual([l, lstatSync(dir).uid]);
  const get = async (sub: string, p: string) => {
    const url = `/api/servers/${id}/files${sub}?path=${encodeURIComponent(p)}`;
    return (await fetch(h.base + url, { headers: { authorization: signRequest(h.nodeId, h.nodeKey, 'GET', url) } })).status;
  };
  expect(await get('/contents', '/etc/passwd')).toBe(422);
  expect(await get('', '/up')).toBe(422);
  expect(await get('/contents', '/inside')).toBe(200);
});
