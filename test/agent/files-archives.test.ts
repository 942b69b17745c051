/**
 * Compress and decompress on the agent, with the file worker running as the server's uid: a round
 * trip through a .tar.gz, zips and tars made by other tools (Python's tarfile and zipfile, GNU tar),
 * hostile archives (slips, absolute names, links pointing out, entries below links, devices, a
 * decompression bomb) refused with nothing written, and the disk limit on both ways.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { exactly } from '../../src/agent/filesystem/tar-gz';
import { installWorker } from '../../src/agent/filesystem/workers';
import { signRequest, STREAMED_BODY } from '../../src/shared/node-protocol';
import { createServer, newId, specFor, startHarness, type Harness } from './helpers';

let h: Harness;
let work: string;
const id = newId();
beforeAll(async () => {
  h = await startHarness({});
  await createServer(h, specFor('shell-command', id, { disk: 8 }, { COMMAND: 'sleep 1000' }));
  work = mkdtempSync(path.join(os.tmpdir(), 'hp-archives-'));
}, 60_000);
afterAll(async () => {
  rmSync(work, { recursive: true, force: true });
  expect(await h?.close()).toEqual([]);
});

const files = (sub = '', query = '') => `/api/servers/${id}/files${sub}${query ? `?${query}` : ''}`;
const serverDir = () => path.join(h.dataDir, 'agent', 'servers', id);

async function put(p: string, body: Buffer): Promise<number> {
  const url = files('/contents', `path=${encodeURIComponent(p)}`);
  const res = await fetch(h.base + url, { method: 'PUT', body, headers: { authorization: signRequest(h.nodeId, h.nodeKey, 'PUT', url, STREAMED_BODY) } });
  await res.arrayBuffer();
  return res.status;
}

async function read(p: string): Promise<string> {
  const url = files('/contents', `path=${encodeURIComponent(p)}`);
  const res = await fetch(h.base + url, { headers: { authorization: signRequest(h.nodeId, h.nodeKey, 'GET', url) } });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer()).toString();
}

/** Everything below the server's directory, as sorted relative paths. */
function tree(dir = serverDir(), prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const rel = prefix + d.name;
    return d.isDirectory() ? [rel + '/', ...tree(path.join(dir, d.name), rel + '/')] : [rel];
  }).sort();
}

/** Runs a Python script that writes archives into `work` (tarfile and zipfile write what GNU tools would not). */
function python(script: string): void {
  execFileSync('python3', ['-c', `import sys, os, io, tarfile, zipfile\nos.chdir(sys.argv[1])\n${script}`, work]);
}

const archive = (name: string) => readFileSync(path.join(work, name));

test('a folder compressed to .tar.gz and decompressed again comes back whole, its link included', async () => {
  await h.request('POST', files('/directory'), { path: '/world' });
  await h.request('POST', files('/directory'), { path: '/world/region' });
  expect(await put('/world/level.dat', Buffer.from('level'))).toBe(201);
  expect(await put('/world/region/r.0.0.mca', Buffer.alloc(100_000, 7))).toBe(201);
  execFileSync('ln', ['-s', 'level.dat', path.join(serverDir(), 'world', 'latest')]);
  const c = await h.request('POST', files('/compress'), { paths: ['/world'], destination: '/backup.tar.gz' });
  expect(c.status).toBe(201);
  expect(c.body.data).toEqual(expect.objectContaining({ path: '/backup.tar.gz', type: 'file' }));
  // GNU tar reads it
  const listed = execFileSync('tar', ['tzvf', path.join(serverDir(), 'backup.tar.gz')]).toString();
  expect(listed).toMatch(/world\/region\/r\.0\.0\.mca/);
  expect(listed).toMatch(/world\/latest -> level\.dat/);
  expect((await h.request('POST', files('/delete'), { paths: ['/world'] })).status).toBe(204);
  const d = await h.request('POST', files('/decompress'), { path: '/backup.tar.gz', destination: '/' });
  expect(d.status).toBe(200);
  expect(d.body.data.map((e: any) => e.path)).toEqual(['/world']);
  expect(await read('/world/level.dat')).toBe('level');
  expect(await read('/world/latest')).toBe('level');
  expect(readFileSync(path.join(serverDir(), 'world/region/r.0.0.mca')).equals(Buffer.alloc(100_000, 7))).toBe(true);
  // entries are named from the folder the paths share
  const again = await h.request('POST', files('/compress'), { paths: ['/world/level.dat', '/world/region'], destination: '/world/two.tar.gz' });
  expect(again.status).toBe(201);
  expect(execFileSync('tar', ['tzf', path.join(serverDir(), 'world/two.tar.gz')]).toString().split('\n').filter(Boolean).sort()).toEqual(['level.dat', 'region/', 'region/r.0.0.mca']);
  expect((await h.request('POST', files('/compress'), { paths: ['/world'], destination: '/backup.tar.gz' })).body.error.code).toBe('ALREADY_EXISTS');
  await h.request('POST', files('/delete'), { paths: ['/world', '/backup.tar.gz'] });
});

test('compress names each member exactly as its file', async () => {
  await h.request('POST', files('/directory'), { path: '/names' });
  const names = ['back\\slash', 'minecraft:stone.json', 'stone.json', '..\\..\\evil.txt'];
  for (const [i, name] of names.entries()) expect(await put(`/names/${name}`, Buffer.from(`file ${i}`))).toBe(201);
  const c = await h.request('POST', files('/compress'), { paths: ['/names'], destination: '/names.tar.gz' });
  expect(c.status).toBe(201);
  // archiver made 'names/back/slash', dropped 'minecraft:' (two members 'names/stone.json') and made
  // 'names/../../evil.txt' of one file's name
  const listed = execFileSync('tar', ['--quoting-style=literal', '-tzf', path.join(serverDir(), 'names.tar.gz')]).toString().split('\n').filter(Boolean).sort();
  expect(listed).toEqual(['names/', ...names.map((n) => `names/${n}`)].sort());
  const out = path.join(work, 'names-out');
  execFileSync('mkdir', ['-p', out]);
  execFileSync('tar', ['xzf', path.join(serverDir(), 'names.tar.gz'), '-C', out]);
  for (const [i, name] of names.entries()) expect(readFileSync(path.join(out, 'names', name), 'utf8')).toBe(`file ${i}`);
  await h.request('POST', files('/delete'), { paths: ['/names', '/names.tar.gz'] });
});

test('a file that shrinks while it is compressed is filled with zeros to the size its member announced', async () => {
  const out = Buffer.concat(await exactly(Readable.from([Buffer.from('abc')]), 70_000).toArray());
  expect([out.length, out.subarray(0, 3).toString(), out.subarray(3).every((b) => b === 0)]).toEqual([70_000, 'abc', true]);
});

test('zips and tars made by other tools decompress into the destination, which is made when missing', async () => {
  python(`
with zipfile.ZipFile('plugins.zip', 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('Essentials/config.yml', 'motd: hi\\n')
    z.writestr('Essentials/', '')
    z.writestr('readme.txt', 'read me')
`);
  execFileSync('tar', ['cf', path.join(work, 'plain.tar'), '-C', work, 'plugins.zip']);
  expect(await put('/plugins.zip', archive('plugins.zip'))).toBe(201);
  expect(await put('/plain.tar', archive('plain.tar'))).toBe(201);
  const z = await h.request('POST', files('/decompress'), { path: '/plugins.zip', destination: '/plugins/new' });
  expect(z.status).toBe(200);
  expect(z.body.data.map((e: any) => e.name)).toEqual(['Essentials', 'readme.txt']);
  expect(await read('/plugins/new/Essentials/config.yml')).toBe('motd: hi\n');
  const t = await h.request('POST', files('/decompress'), { path: '/plain.tar', destination: '/t' });
  expect(t.status).toBe(200);
  expect(readFileSync(path.join(serverDir(), 't/plugins.zip')).equals(archive('plugins.zip'))).toBe(true);
  await h.request('POST', files('/delete'), { paths: ['/plugins.zip', '/plain.tar', '/plugins', '/t'] });
});

describe('hostile archives are INVALID_ARCHIVE and write nothing', () => {
  const hostile: [string, string, string][] = [
    ['tar slip', 'slip.tar', `
with tarfile.open('slip.tar', 'w') as t:
    i = tarfile.TarInfo('ok.txt'); i.size = 2; t.addfile(i, io.BytesIO(b'ok'))
    i = tarfile.TarInfo('a/../../evil.txt'); i.size = 4; t.addfile(i, io.BytesIO(b'evil'))
`],
    ['absolute name', 'abs.tar.gz', `
with tarfile.open('abs.tar.gz', 'w:gz') as t:
    i = tarfile.TarInfo('ok.txt'); i.size = 2; t.addfile(i, io.BytesIO(b'ok'))
    i = tarfile.TarInfo('/tmp/hp-abs-evil.txt'); i.size = 4; t.addfile(i, io.BytesIO(b'evil'))
`],
    ['symlink to /', 'link-root.tar', `
with tarfile.open('link-root.tar', 'w') as t:
    i = tarfile.TarInfo('ok.txt'); i.size = 2; t.addfile(i, io.BytesIO(b'ok'))
    i = tarfile.TarInfo('root'); i.type = tarfile.SYMTYPE; i.linkname = '/'; t.addfile(i)
`],
    ['symlink up and out', 'link-up.tar', `
with tarfile.open('link-up.tar', 'w') as t:
    i = tarfile.TarInfo('sub/up'); i.type = tarfile.SYMTYPE; i.linkname = '../../..'; t.addfile(i)
`],
    ['an entry below a link the archive makes', 'through-link.tar', `
with tarfile.open('through-link.tar', 'w') as t:
    os.mkdir('d')
    i = tarfile.TarInfo('here'); i.type = tarfile.SYMTYPE; i.linkname = '.'; t.addfile(i)
    i = tarfile.TarInfo('here/x'); i.size = 1; t.addfile(i, io.BytesIO(b'x'))
`],
    ['a hard link to a file outside', 'hardlink.tar', `
with tarfile.open('hardlink.tar', 'w') as t:
    i = tarfile.TarInfo('passwd'); i.type = tarfile.LNKTYPE; i.linkname = '/etc/passwd'; t.addfile(i)
`],
    ['a character device', 'device.tar', `
with tarfile.open('device.tar', 'w') as t:
    i = tarfile.TarInfo('null'); i.type = tarfile.CHRTYPE; i.devmajor = 1; i.devminor = 3; t.addfile(i)
`],
    ['a fifo', 'fifo.tar', `
with tarfile.open('fifo.tar', 'w') as t:
    i = tarfile.TarInfo('pipe'); i.type = tarfile.FIFOTYPE; t.addfile(i)
`],
    ['zip slip', 'slip.zip', `
with zipfile.ZipFile('slip.zip', 'w') as z:
    z.writestr('ok.txt', 'ok')
    z.writestr('../../evil.txt', 'evil')
`],
    ['a zip with an absolute name', 'abs.zip', `
with zipfile.ZipFile('abs.zip', 'w') as z:
    z.writestr('/tmp/hp-abs-evil.txt', 'evil')
`],
    ['a zip symlink pointing out', 'link.zip', `
with zipfile.ZipFile('link.zip', 'w') as z:
    z.writestr('ok.txt', 'ok')
    i = zipfile.ZipInfo('etc'); i.create_system = 3; i.external_attr = (0o120777 << 16); z.writestr(i, '/etc')
`],
    ['a name of the file manager\'s temporary files (hidden and counted as a write under way)', 'temp-name.tar', `
with tarfile.open('temp-name.tar', 'w') as t:
    i = tarfile.TarInfo('ok.txt'); i.size = 2; t.addfile(i, io.BytesIO(b'ok'))
    i = tarfile.TarInfo('sub/.hostpanel-tmp-0123456789abcdef'); i.size = 4; t.addfile(i, io.BytesIO(b'evil'))
`],
    ['a zip with a temporary file\'s name', 'temp-name.zip', `
with zipfile.ZipFile('temp-name.zip', 'w') as z:
    z.writestr('.hostpanel-tmp-fedcba9876543210', 'evil')
`],
    ['not an archive', 'fake.zip', `
open('fake.zip', 'wb').write(b'PK\\x03\\x04' + b'garbage' * 100)
`],
    ['a text file', 'notes.tar.gz', `
open('notes.tar.gz', 'w').write('just text, not gzip')
`],
  ];

  test.each(hostile)('%s', async (_what, name, script) => {
    python(script);
    expect(await put(`/${name}`, archive(name))).toBe(201);
    const before = tree();
    const r = await h.request('POST', files('/decompress'), { path: `/${name}`, destination: '/' });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('INVALID_ARCHIVE');
    expect(r.body.error.message).toBeTruthy();
    expect(tree()).toEqual(before);
    expect(existsSync('/tmp/hp-abs-evil.txt')).toBe(false);
    expect(existsSync(path.join(serverDir(), '..', 'evil.txt'))).toBe(false);
    await h.request('POST', files('/delete'), { paths: [`/${name}`] });
  });
});

test('links that lead through links the archive makes are written plain: they stay in the destination', async () => {
  // s/b -> a/.., with s/a -> .., was written as it came: it led to the folder above the server's own
  python(`
with tarfile.open('chain.tar', 'w') as t:
    i = tarfile.TarInfo('s'); i.type = tarfile.DIRTYPE; t.addfile(i)
    i = tarfile.TarInfo('s/a'); i.type = tarfile.SYMTYPE; i.linkname = '..'; t.addfile(i)
    i = tarfile.TarInfo('s/b'); i.type = tarfile.SYMTYPE; i.linkname = 'a/..'; t.addfile(i)
    i = tarfile.TarInfo('s/c'); i.type = tarfile.SYMTYPE; i.linkname = './a/../../s/./b'; t.addfile(i)
`);
  expect(await put('/chain.tar', archive('chain.tar'))).toBe(201);
  const r = await h.request('POST', files('/decompress'), { path: '/chain.tar', destination: '/d' });
  expect(r.status).toBe(200);
  const d = path.join(serverDir(), 'd');
  expect(['a', 'b', 'c'].map((n) => readlinkSync(path.join(d, 's', n)))).toEqual(['..', '.', 'b']);
  for (const n of ['a', 'b', 'c']) expect(realpathSync(path.join(d, 's', n)).startsWith(realpathSync(d))).toBe(true);
  await h.request('POST', files('/delete'), { paths: ['/chain.tar', '/d'] });
});

test('an archive that makes one name both a file and a folder is refused before it writes: a file it would replace is kept', async () => {
  // the file was written over, then the folder failed (INVALID_STATE), and the old contents were gone
  await h.request('POST', files('/directory'), { path: '/keep' });
  expect(await put('/keep/config.txt', Buffer.from('precious'))).toBe(201);
  python(`
with tarfile.open('both.tar', 'w') as t:
    i = tarfile.TarInfo('config.txt'); i.size = 11; t.addfile(i, io.BytesIO(b'overwritten'))
    i = tarfile.TarInfo('config.txt'); i.type = tarfile.DIRTYPE; t.addfile(i)
with tarfile.open('under.tar', 'w') as t:
    i = tarfile.TarInfo('config.txt'); i.size = 11; t.addfile(i, io.BytesIO(b'overwritten'))
    i = tarfile.TarInfo('config.txt/x'); i.size = 1; t.addfile(i, io.BytesIO(b'x'))
`);
  for (const name of ['both.tar', 'under.tar']) {
    expect(await put(`/${name}`, archive(name))).toBe(201);
    const r = await h.request('POST', files('/decompress'), { path: `/${name}`, destination: '/keep' });
    expect([r.status, r.body.error?.code]).toEqual([422, 'INVALID_ARCHIVE']);
    expect(await read('/keep/config.txt')).toBe('precious');
  }
  await h.request('POST', files('/delete'), { paths: ['/keep', '/both.tar', '/under.tar'] });
});

test('a decompression bomb stops at the disk limit before writing, and so does a compress past it', async () => {
  // 64 MiB of zeros: 64 KiB compressed, eight times the server's 8 MiB disk
  python(`
with tarfile.open('bomb.tar.gz', 'w:gz') as t:
    i = tarfile.TarInfo('ok.txt'); i.size = 2; t.addfile(i, io.BytesIO(b'ok'))
    i = tarfile.TarInfo('zeros'); i.size = 64 << 20; t.addfile(i, io.BytesIO(bytes(64 << 20)))
`);
  expect(await put('/bomb.tar.gz', archive('bomb.tar.gz'))).toBe(201);
  const before = tree();
  const r = await h.request('POST', files('/decompress'), { path: '/bomb.tar.gz', destination: '/out' });
  expect(r.status).toBe(422);
  expect(r.body.error.code).toBe('DISK_LIMIT');
  expect(tree()).toEqual(before);
  await h.request('POST', files('/delete'), { paths: ['/bomb.tar.gz'] });

  // 6 MiB of random bytes (they do not compress): the archive does not fit beside them
  writeFileSync(path.join(work, 'random.bin'), randomBytes(6 << 20));
  expect(await put('/random.bin', archive('random.bin'))).toBe(201);
  const before2 = tree();
  const c = await h.request('POST', files('/compress'), { paths: ['/random.bin'], destination: '/r.tar.gz' });
  expect(c.status).toBe(422);
  expect(c.body.error.code).toBe('DISK_LIMIT');
  expect(tree()).toEqual(before2); // no temporary file left behind
  await h.request('POST', files('/delete'), { paths: ['/random.bin'] });
});

test('paths of compress and decompress go through the jail: .. and links pointing out are INVALID_PATH', async () => {
  execFileSync('ln', ['-s', '/etc', path.join(serverDir(), 'etc-link')]);
  expect((await h.request('POST', files('/compress'), { paths: ['/../../etc'], destination: '/x.tar.gz' })).body.error.code).toBe('INVALID_PATH');
  expect((await h.request('POST', files('/compress'), { paths: ['/etc-link/passwd'], destination: '/x.tar.gz' })).body.error.code).toBe('INVALID_PATH');
  expect((await h.request('POST', files('/compress'), { paths: ['/'], destination: '/etc-link/x.tar.gz' })).body.error.code).toBe('INVALID_PATH');
  expect((await h.request('POST', files('/decompress'), { path: '/etc-link/passwd', destination: '/' })).body.error.code).toBe('INVALID_PATH');
  expect((await h.request('POST', files('/compress'), { paths: [], destination: '/x.tar.gz' })).status).toBe(422);
  // the link itself is archived as a link, never followed
  const c = await h.request('POST', files('/compress'), { paths: ['/etc-link'], destination: '/l.tar.gz' });
  expect(c.body.error).toBeUndefined();
  expect(c.status).toBe(201);
  expect(execFileSync('tar', ['tzvf', path.join(serverDir(), 'l.tar.gz')]).toString()).toMatch(/etc-link -> \/etc\s*$/m);
  await h.request('POST', files('/delete'), { paths: ['/etc-link', '/l.tar.gz'] });
});

test('where the servers\u2019 users cannot read the installed packages, the worker gets a copy it can read', async () => {
  const lib = path.join(work, 'lib');
  const installed = await installWorker(lib, { copyPackages: true });
  expect(installed.nodePath).toBeNull();
  // a user with no access to the project loads the archive modules from the copy
  const probe = `require(${JSON.stringify(path.join(lib, 'agent', 'filesystem', 'archives.js'))}); console.log('loaded')`;
  chmodSync(work, 0o755);
  const out = execFileSync(process.execPath, ['-e', probe], { uid: 65534, gid: 65534, cwd: '/', env: { PATH: process.env.PATH } }).toString();
  expect(out.trim()).toBe('loaded');
  // a second install finds the copy up to date and leaves it be
  const copied = path.join(lib, 'node_modules', 'tar', 'package.json');
  const before = statSync(copied).mtimeMs;
  await installWorker(lib, { copyPackages: true });
  expect(statSync(copied).mtimeMs).toBe(before);
}, 120_000);
