/**
 * Backups on the node agent with real files (against a fake panel that records the agent's events):
 * backup → change, add and delete files → restore gives back a byte-identical tree (empty folders,
 * modes and links included); a second backup of an unchanged server stores almost nothing; a damaged
 * stored file fails the restore and names the file; ignore patterns; the `.tar.gz` download (the same
 * archive every time); entries that vanish under a backup are left out; a restore is judged on its
 * result against the disk limit; deleting frees only what no other backup holds; a backup cut off by
 * the agent stopping is failed and leaves nothing at the next start; the server cannot start while a
 * restore runs.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, lchownSync, lstatSync, lutimesSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { list as tarList } from 'tar';
import { READ_AHEAD } from '../../src/agent/backups/backup';
import { signRequest, type BackupReport, type RestoreReport } from '../../src/shared/node-protocol';
import { createServer, newId, power, specFor, startHarness, startRunning, waitFor, waitStatus, type Harness } from './helpers';

jest.setTimeout(60_000);

let h: Harness;
const id = newId();
let dir: string;
let store: string;

const TREE = [
  'mkdir -p world/region world/empty config',
  'echo "level one" > world/level.dat',
  'head -c 300000 /dev/urandom > world/region/r.0.0.mca',
  'echo "motd=hello" > config/server.properties',
  'chmod 600 config/server.properties',
  'chmod 750 world/region',
  'ln -s world/level.dat level-link',
  'mkdir -p cache && echo junk > cache/tmp.bin && echo log > latest.log',
].join(' && ');
// the tree is made once; later starts just run
const COMMAND = `if [ ! -e level-link ]; then ${TREE}; fi; echo ready; exec sleep 1000`;

beforeAll(async () => {
  h = await startHarness();
  await createServer(h, specFor('shell-command', id, { disk: 64 }, { COMMAND }));
  dir = path.join(h.dataDir, 'agent', 'servers', id);
  store = path.join(h.dataDir, 'agent', 'backups', id);
  await startRunning(h, id);
  await waitFor(() => existsSync(path.join(dir, 'level-link')), 'the tree');
  await power(h, id, 'kill');
  await waitStatus(h, id, 'offline');
}, 60_000);
afterAll(async () => {
  expect(await h?.close()).toEqual([]);
});

/** Every entry under the server's directory: type, mode, and a file's hash or a link's target. */
function snapshot(root = dir): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (rel: string) => {
    for (const name of readdirSync(path.join(root, rel)).sort()) {
      const p = path.join(rel, name);
      const st = lstatSync(path.join(root, p));
      const mode = (st.mode & 0o777).toString(8);
      if (st.isSymbolicLink()) out[p] = `link ${readlinkSync(path.join(root, p))}`;
      else if (st.isDirectory()) {
        out[p] = `dir ${mode}`;
        visit(p);
      } else out[p] = `file ${mode} ${createHash('sha256').update(readFileSync(path.join(root, p))).digest('hex')}`;
    }
  };
  visit('');
  return out;
}

const backupEvents = (backupId: string) => (h.panel.events as unknown as (BackupReport | RestoreReport)[]).filter((e) => e.backupId === backupId);
const backupEnd = (backupId: string) => waitFor(() => backupEvents(backupId).find((e): e is BackupReport => e.kind === 'backup' && e.status !== 'pending'), `backup ${backupId}`, 30_000);
async function backup(backupId: string, ignored: string[] = [], server = id): Promise<BackupReport> {
  const r = await h.request('POST', `/api/servers/${server}/backups`, { id: backupId, ignored });
  expect(r.status).toBe(200);
  return backupEnd(backupId);
}
const restores = (backupId: string) => backupEvents(backupId).filter((e): e is RestoreReport => e.kind === 'restore');
async function restore(backupId: string, truncate: boolean, server = id): Promise<RestoreReport> {
  const seen = restores(backupId).length;
  const r = await h.request('POST', `/api/servers/${server}/backups/${backupId}/restore`, { truncate });
  expect(r.status).toBe(200);
  return waitFor(() => restores(backupId)[seen], `restore of ${backupId}`, 30_000);
}
function storedBytes(): number {
  let total = 0;
  const blobs = path.join(store, 'blobs');
  for (const p of readdirSync(blobs)) for (const f of readdirSync(path.join(blobs, p))) total += lstatSync(path.join(blobs, p, f)).size;
  return total;
}

test('backup, change everything, restore: the same tree, byte for byte, modes and links included', async () => {
  const before = snapshot();
  const done = await backup('b1', ['cache/', '*.log']);
  expect(done).toMatchObject({ status: 'completed', files: 3 });
  expect(done.sha256).toMatch(/^[0-9a-f]{64}$/);
  // change, add, delete, and put a file where a folder was
  writeFileSync(path.join(dir, 'world', 'level.dat'), 'griefed');
  writeFileSync(path.join(dir, 'added.txt'), 'new');
  chownSync(path.join(dir, 'added.txt'), lstatSync(dir).uid, lstatSync(dir).gid);
  rmSync(path.join(dir, 'world', 'region'), { recursive: true });
  writeFileSync(path.join(dir, 'world', 'region'), 'a file now');
  rmSync(path.join(dir, 'world', 'empty'), { recursive: true });
  rmSync(path.join(dir, 'level-link'));
  expect(snapshot()).not.toEqual(before);
  expect(await restore('b1', true)).toMatchObject({ status: 'completed' });
  const after = snapshot();
  // the ignored files were not in the backup, so `truncate` removed them
  const expected = Object.fromEntries(Object.entries(before).filter(([p]) => !p.startsWith('cache') && !p.endsWith('.log')));
  expect(after).toEqual(expected);
  await waitStatus(h, id, 'offline');
});

test('a second backup of an unchanged server stores less than 1% more', async () => {
  const first = storedBytes();
  expect(first).toBeGreaterThan(300_000);
  await sleepPast();
  expect(await backup('b2')).toMatchObject({ status: 'completed' });
  await sleepPast();
  expect(await backup('b3')).toMatchObject({ status: 'completed' });
  expect(storedBytes() - first).toBeLessThan(first / 100);
});

/** Lets the files' modification times fall behind the last backup (changes just before one are read again). */
const sleepPast = () => new Promise((r) => setTimeout(r, 2_100));

async function download(backupId: string): Promise<Buffer> {
  const url = `/api/servers/${id}/backups/${backupId}/download`;
  const r = await fetch(h.base + url, { headers: { authorization: signRequest(h.nodeId, h.nodeKey, 'GET', url, '') } });
  expect(r.status).toBe(200);
  return Buffer.from(await r.arrayBuffer());
}
/** The entries of a `.tar.gz`: `type path` → modification time (ms). */
async function tarEntries(bytes: Buffer): Promise<Record<string, number>> {
  const entries: Record<string, number> = {};
  await new Promise<void>((resolve, reject) => {
    const parser = tarList({ onReadEntry: (e) => void (entries[`${e.type} ${e.path}`] = e.mtime?.getTime() ?? NaN) });
    parser.on('end', resolve).on('error', reject);
    Readable.from([bytes]).pipe(parser as unknown as NodeJS.WritableStream);
  });
  return entries;
}

test('the download is a .tar.gz of the backup, made on the fly', async () => {
  const names = Object.keys(await tarEntries(await download('b1')));
  expect(names).toEqual(expect.arrayContaining(['File world/level.dat', 'Directory world/empty/', 'SymbolicLink level-link', 'File world/region/r.0.0.mca']));
  expect(names.some((n) => n.includes('cache'))).toBe(false);
});

test('every entry of a download has its backed-up modification time: two downloads hold the same tar', async () => {
  // a link was dated at the time of the download
  const long = new Date('2001-02-03T04:05:06Z');
  lutimesSync(path.join(dir, 'level-link'), long, long);
  expect(await backup('b-dates', ['cache/', '*.log'])).toMatchObject({ status: 'completed' });
  try {
    const [first, second] = [await download('b-dates'), await download('b-dates')];
    expect(gunzipSync(first).equals(gunzipSync(second))).toBe(true);
    const manifest = JSON.parse(readFileSync(path.join(store, 'manifests', 'b-dates.json'), 'utf8'));
    const kinds: Record<string, string> = { file: 'File', directory: 'Directory', symlink: 'SymbolicLink' };
    const backedUp = Object.fromEntries(manifest.entries.map((e: any) => [`${kinds[e.type]} ${e.path.slice(1)}${e.type === 'directory' ? '/' : ''}`, Math.floor(e.mtimeMs / 1000) * 1000]));
    expect(backedUp['SymbolicLink level-link']).toBe(long.getTime());
    expect(await tarEntries(first)).toEqual(backedUp);
  } finally {
    await h.request('DELETE', `/api/servers/${id}/backups/b-dates`);
  }
});

test('a damaged stored file fails the restore, names the file, and leaves it as it was', async () => {
  const manifest = JSON.parse(readFileSync(path.join(store, 'manifests', 'b1.json'), 'utf8'));
  const entry = manifest.entries.find((e: any) => e.path === '/config/server.properties');
  const blob = path.join(store, 'blobs', entry.sha256.slice(0, 2), entry.sha256);
  const good = readFileSync(blob);
  writeFileSync(path.join(dir, 'config', 'server.properties'), 'current');
  writeFileSync(blob, 'motd=tampered\n');
  try {
    const r = await restore('b1', false);
    expect(r.status).toBe('failed');
    expect(r.error).toMatch(/config\/server\.properties.*damaged/);
    expect(readFileSync(path.join(dir, 'config', 'server.properties'), 'utf8')).toBe('current');
  } finally {
    writeFileSync(blob, good);
  }
});

test('a folder the server made read-only is restored into, and read-only again afterwards', async () => {
  // the restore's writes into it were refused ("its permissions forbid it"), as its owner could not write there
  const locked = path.join(dir, 'locked');
  const own = (p: string) => chownSync(p, lstatSync(dir).uid, lstatSync(dir).gid);
  mkdirSync(locked);
  own(locked);
  writeFileSync(path.join(locked, 'f.txt'), 'as backed up');
  own(path.join(locked, 'f.txt'));
  chmodSync(locked, 0o555);
  try {
    expect(await backup('b-ro')).toMatchObject({ status: 'completed' });
    writeFileSync(path.join(locked, 'f.txt'), 'changed since'); // (root writes through the mode)
    expect(await restore('b-ro', false)).toMatchObject({ status: 'completed' });
    expect(readFileSync(path.join(locked, 'f.txt'), 'utf8')).toBe('as backed up');
    expect(lstatSync(locked).mode & 0o777).toBe(0o555);
  } finally {
    chmodSync(locked, 0o755);
    rmSync(locked, { recursive: true });
    await h.request('DELETE', `/api/servers/${id}/backups/b-ro`);
  }
});

test('a restore with truncate removes folders the backup lacks even when the server made them read-only', async () => {
  // deleting what a read-only folder held was refused (EACCES), and the restore failed on the very junk it is to remove
  const own = (p: string) => chownSync(p, lstatSync(dir).uid, lstatSync(dir).gid);
  expect(await backup('b-junk')).toMatchObject({ status: 'completed' });
  const junk = path.join(dir, 'junk');
  mkdirSync(path.join(junk, 'sub'), { recursive: true });
  writeFileSync(path.join(junk, 'sub', 'f'), 'x');
  for (const p of [junk, path.join(junk, 'sub'), path.join(junk, 'sub', 'f')]) own(p);
  chmodSync(path.join(junk, 'sub'), 0o500);
  chmodSync(junk, 0o500);
  try {
    expect(await restore('b-junk', true)).toMatchObject({ status: 'completed' });
    expect(existsSync(junk)).toBe(false);
  } finally {
    if (existsSync(junk)) {
      chmodSync(junk, 0o755);
      chmodSync(path.join(junk, 'sub'), 0o755);
      rmSync(junk, { recursive: true });
    }
    await h.request('DELETE', `/api/servers/${id}/backups/b-junk`);
  }
});

test('a name that holds U+FFFD as text (valid UTF-8) is backed up and restored like any other', async () => {
  // the file manager refused every path holding U+FFFD, so the backup listed the file and then failed
  // on it without naming it ("A path must be valid UTF-8 text.")
  const name = path.join(dir, 'odd\uFFFDname.txt');
  writeFileSync(name, 'kept');
  chownSync(name, lstatSync(dir).uid, lstatSync(dir).gid);
  try {
    expect(await backup('b-fffd')).toMatchObject({ status: 'completed' });
    rmSync(name);
    expect(await restore('b-fffd', false)).toMatchObject({ status: 'completed' });
    expect(readFileSync(name, 'utf8')).toBe('kept');
  } finally {
    rmSync(name, { force: true });
    await h.request('DELETE', `/api/servers/${id}/backups/b-fffd`);
  }
});

test('a name that is not UTF-8, or a folder the server cannot read, fails the backup naming it', async () => {
  // the name was left out without a word (a "completed" backup without that file or folder), and an
  // unreadable folder failed it with "Reading the server's files was cut off"
  const odd = Buffer.concat([Buffer.from(`${dir}/w`), Buffer.from([0xe9]), Buffer.from('lt')]);
  mkdirSync(odd);
  try {
    const r = await backup('b-odd');
    expect([r.status, r.error]).toEqual(['failed', '/w\uFFFDlt has a name that is not UTF-8 text: rename it (over SFTP or from the server\'s console) and try again.']);
  } finally {
    rmSync(odd, { recursive: true });
  }
  const closed = path.join(dir, 'closed');
  mkdirSync(closed, { mode: 0o000 });
  chownSync(closed, lstatSync(dir).uid, lstatSync(dir).gid);
  try {
    const r = await backup('b-closed');
    expect([r.status, r.error]).toEqual(['failed', expect.stringMatching(/^\/closed is not accessible to the server/)]);
  } finally {
    rmSync(closed, { recursive: true });
  }
});

/** Blocks this process (and so the agent in it) for up to `ms` until `ready()`; throws past that. */
function blockUntil(ready: () => boolean, what: string, ms = 10_000): void {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  for (const end = Date.now() + ms; !ready(); Atomics.wait(cell, 0, 0, 5)) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}

test('an entry deleted, or replaced by a folder or a link, after the backup listed it is left out: the backup completes', async () => {
  // a running server deletes and renames files under its backup: the backup failed ("/live/b.dat does not exist.")
  const live = path.join(dir, 'live');
  const at = (name: string) => path.join(live, name);
  const own = (p: string) => lchownSync(p, lstatSync(dir).uid, lstatSync(dir).gid);
  mkdirSync(at('c'), { recursive: true });
  own(live);
  own(at('c'));
  // larger than what the agent reads at once: it is still storing a.big when it is seen storing it.
  // The agent reads READ_AHEAD files at once and starts the next when the first of them is stored:
  // the small a files fill the rest of that window, so no b file is opened before a.big is stored.
  writeFileSync(at('a.big'), randomBytes(16 * 1024 * 1024));
  const fillers = Array.from({ length: READ_AHEAD - 1 }, (_, i) => `a${i + 1}`);
  for (const name of ['a.big', ...fillers, 'b.dat', 'b2.dat', 'b3.dat']) {
    if (name !== 'a.big') writeFileSync(at(name), name);
    own(at(name));
  }
  // the walk reads folder c after it has listed the b files: c's access time, set in the past, tells when
  utimesSync(at('c'), new Date(0), new Date());
  const tmp = path.join(store, 'tmp');
  // (a collection of unused blobs may delete the folder between two looks)
  const storing = () => {
    try {
      return readdirSync(tmp).length > 0;
    } catch {
      return false;
    }
  };
  expect(storing()).toBe(false);
  try {
    expect((await h.request('POST', `/api/servers/${id}/backups`, { id: 'b-live', ignored: ['/*', '!/live/'] })).status).toBe(200);
    // seen storing a.big (its first file), the agent waits while the walk goes on and the b files change
    await new Promise<void>((resolve, reject) => {
      const look = (): void => {
        if (!storing()) return void setImmediate(look);
        try {
          blockUntil(() => statSync(at('c')).atimeMs > 0, 'the walk to reach /live/c');
          rmSync(at('b.dat'));
          rmSync(at('b2.dat'));
          mkdirSync(at('b2.dat'));
          rmSync(at('b3.dat'));
          symlinkSync('a.big', at('b3.dat'));
          lchownSync(at('b3.dat'), lstatSync(dir).uid, lstatSync(dir).gid);
          resolve();
        } catch (err) {
          reject(err);
        }
      };
      look();
    });
    const done = await backupEnd('b-live');
    expect([done.status, done.error]).toEqual(['completed', undefined]);
    const manifest = JSON.parse(readFileSync(path.join(store, 'manifests', 'b-live.json'), 'utf8'));
    expect(manifest.entries.map((e: any) => `${e.type} ${e.path}`)).toEqual(['directory /live', 'file /live/a.big', ...fillers.map((f) => `file /live/${f}`), 'directory /live/c']);
  } finally {
    rmSync(live, { recursive: true });
    await h.request('DELETE', `/api/servers/${id}/backups/b-live`);
  }
});

test('a restore is judged on its result against the disk limit; a file that holds the backup\'s contents is not written again', async () => {
  // restoring a 5 MiB file over itself on an 8 MiB server was refused (DISK_LIMIT): the new file was
  // charged while the old one still counted
  const small = newId();
  await createServer(h, specFor('shell-command', small, { disk: 8 }, { COMMAND: 'exec sleep 1000' }));
  const at = (name: string) => path.join(h.dataDir, 'agent', 'servers', small, name);
  const put = (name: string, data: Buffer) => {
    writeFileSync(at(name), data);
    chownSync(at(name), lstatSync(at('')).uid, lstatSync(at('')).gid);
  };
  const MIB = 1024 * 1024;
  const world = randomBytes(5 * MIB);
  put('world.dat', world);
  try {
    expect(await backup('b-small', [], small)).toMatchObject({ status: 'completed' });
    const inode = lstatSync(at('world.dat')).ino;
    expect(await restore('b-small', false, small)).toMatchObject({ status: 'completed' });
    expect(lstatSync(at('world.dat')).ino).toBe(inode);
    // the same size, other contents: written again, in the room the old file frees
    put('world.dat', randomBytes(5 * MIB));
    expect(await restore('b-small', false, small)).toMatchObject({ status: 'completed' });
    expect(readFileSync(at('world.dat')).equals(world)).toBe(true);
    // real growth past the limit still fails, naming the file, which stays as it was
    const shrunk = randomBytes(MIB);
    put('world.dat', shrunk);
    put('filler.bin', randomBytes(6 * MIB));
    const r = await restore('b-small', false, small);
    expect([r.status, r.error]).toEqual(['failed', expect.stringMatching(/^\/world\.dat does not fit in the server\u2019s disk limit/)]);
    expect(readFileSync(at('world.dat')).equals(shrunk)).toBe(true);
  } finally {
    await h.request('DELETE', `/api/servers/${small}`);
  }
});

test('a server cannot start while a restore runs, nor be restored while it runs', async () => {
  await startRunning(h, id);
  const refused = await h.request('POST', `/api/servers/${id}/backups/b1/restore`, { truncate: false });
  expect(refused.status).toBe(422);
  await power(h, id, 'kill');
  await waitStatus(h, id, 'offline');
  const seen = restores('b1').length;
  const r = await h.request('POST', `/api/servers/${id}/backups/b1/restore`, { truncate: false });
  expect(r.status).toBe(200);
  const start = await power(h, id, 'start');
  const restored = await waitFor(() => restores('b1')[seen], 'the restore');
  // either the start came while restoring (refused) or after it
  if (start.status !== 200) expect(start.body.error.message).toMatch(/restor/i);
  expect(restored).toBeDefined();
  await power(h, id, 'kill');
  await waitStatus(h, id, 'offline');
});

test('deleting a backup frees only what no other backup holds', async () => {
  const before = storedBytes();
  expect((await h.request('DELETE', `/api/servers/${id}/backups/b2`)).status).toBe(204);
  expect(storedBytes()).toBe(before); // b1 and b3 hold the same files
  // made as the server's own user (the jail refuses files of other users: hard links from outside)
  writeFileSync(path.join(dir, 'only-in-b4.bin'), Buffer.alloc(50_000, 9));
  chownSync(path.join(dir, 'only-in-b4.bin'), lstatSync(dir).uid, lstatSync(dir).gid);
  expect(await backup('b4')).toMatchObject({ status: 'completed' });
  expect(storedBytes()).toBe(before + 50_000);
  expect((await h.request('DELETE', `/api/servers/${id}/backups/b4`)).status).toBe(204);
  expect(storedBytes()).toBe(before);
});

test('deleting a server while its backup runs: the deletion succeeds and nothing of its backups stays', async () => {
  const other = newId();
  await createServer(h, specFor('shell-command', other, { disk: 256 }, { COMMAND: 'mkdir -p d && for i in $(seq 1 200); do head -c 131072 /dev/urandom > d/f$i; done; echo ready; exec sleep 1000' }));
  await startRunning(h, other);
  const otherDir = path.join(h.dataDir, 'agent', 'servers', other, 'd');
  await waitFor(() => existsSync(otherDir) && readdirSync(otherDir).length >= 200, 'the files', 30_000);
  expect((await h.request('POST', `/api/servers/${other}/backups`, { id: 'doomed', ignored: [] })).status).toBe(200);
  const otherStore = path.join(h.dataDir, 'agent', 'backups', other);
  await waitFor(() => existsSync(path.join(otherStore, 'blobs')) && readdirSync(path.join(otherStore, 'blobs')).length > 0, 'the backup to be under way');
  expect((await h.request('DELETE', `/api/servers/${other}`)).status).toBe(204);
  await waitFor(() => backupEvents('doomed').find((e) => e.kind === 'backup' && e.status !== 'pending'), 'the end of the backup', 30_000);
  await waitFor(() => !existsSync(otherStore), 'the store of the deleted server to go', 10_000);
});

test('a backup cut off by the agent stopping is marked failed at the next start and leaves nothing', async () => {
  // what a dead agent leaves: the marker, a half-written file, a stored file no manifest names
  writeFileSync(path.join(store, 'pending', 'cut'), 'x');
  mkdirSync(path.join(store, 'tmp'), { recursive: true });
  writeFileSync(path.join(store, 'tmp', 'half'), 'half');
  mkdirSync(path.join(store, 'blobs', 'ff'), { recursive: true });
  writeFileSync(path.join(store, 'blobs', 'ff', 'f'.repeat(64)), 'orphan');
  // the panel lists the server (the agent removes one it does not, with its backups)
  h.panel.servers = [{ spec: specFor('shell-command', id, { disk: 64 }, { COMMAND }), status: 'offline' }];
  await h.restartAgent();
  const failed = await waitFor(() => backupEvents('cut').find((e) => e.kind === 'backup'), 'the failed report');
  expect(failed).toMatchObject({ status: 'failed', error: expect.stringMatching(/stopped/) });
  expect(existsSync(path.join(store, 'pending', 'cut'))).toBe(false);
  expect(existsSync(path.join(store, 'tmp', 'half'))).toBe(false);
  expect(existsSync(path.join(store, 'blobs', 'ff', 'f'.repeat(64)))).toBe(false);
  expect(existsSync(path.join(store, 'manifests', 'b1.json'))).toBe(true);
});
