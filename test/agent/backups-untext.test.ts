/**
 * Names that are not UTF-8 text and restores (a real agent, real files). A backup holds only names
 * that are text, so such a name is never in one: a restore with `truncate` deletes it (a file, a
 * folder with all it holds, a link as a link, never what it leads to), and one without leaves it as
 * it is. Both failed on it instead ("… has a name that is not UTF-8 text"), as a backup does.
 */
import { chmodSync, existsSync, lchownSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { backupWorld } from './backup-world';
import { tmpDir } from './helpers';

jest.setTimeout(120_000);

const w = backupWorld(64);
const { backup, restore } = w;
let dir: string;
beforeAll(() => {
  ({ dir } = w);
});

/** The path of `rel` in the server's directory, with `bytes` (not UTF-8: 0xff 0xfe …) inside the last name. */
const odd = (rel: string, bytes = [0xff, 0xfe]): Buffer => Buffer.concat([Buffer.from(path.join(dir, rel)), Buffer.from(bytes), Buffer.from('x')]);
/** Gives `p` to the server's user, as if its own process had made it. */
const own = (p: string | Buffer): void => lchownSync(p, lstatSync(dir).uid, lstatSync(dir).gid);
/** The names in the server's folder `rel` as bytes (hex), sorted. */
const namesIn = (rel = ''): string[] => readdirSync(path.join(dir, rel), { encoding: 'buffer' }).map((b) => b.toString('hex')).sort();
const hex = (s: string): string => Buffer.from(s).toString('hex');

test('a restore with truncate deletes files, folders and links whose names are not UTF-8; what links lead to stays', async () => {
  mkdirSync(path.join(dir, 'keep'));
  writeFileSync(path.join(dir, 'keep', 'a.txt'), 'as backed up');
  own(path.join(dir, 'keep'));
  own(path.join(dir, 'keep', 'a.txt'));
  expect(await backup('b-untext')).toMatchObject({ status: 'completed' });

  // outside the server: what a link leads to
  const outside = tmpDir('hp-untext-out-');
  writeFileSync(path.join(outside, 'precious'), 'not the server\u2019s');
  // a file at the root, and one in a folder the backup has, made read-only by the server
  const file = odd('f');
  writeFileSync(file, 'junk');
  own(file);
  const nested = odd('keep/n', [0xe9]);
  writeFileSync(nested, 'junk');
  own(nested);
  chmodSync(path.join(dir, 'keep'), 0o555);
  // a folder, with files in it (text names and not), a read-only folder and one closed to its owner
  const folder = odd('d');
  mkdirSync(folder);
  const inFolder = [Buffer.concat([folder, Buffer.from('/t.txt')]), Buffer.concat([folder, Buffer.from([0x2f, 0xc3, 0x28])])];
  for (const f of inFolder) writeFileSync(f, 'junk');
  const sub = Buffer.concat([folder, Buffer.from('/sub')]);
  mkdirSync(sub);
  writeFileSync(Buffer.concat([sub, Buffer.from('/deep')]), 'junk');
  const shut = Buffer.concat([folder, Buffer.from('/shut')]);
  mkdirSync(shut);
  writeFileSync(Buffer.concat([shut, Buffer.from('/inside')]), 'junk');
  for (const p of [folder, ...inFolder, sub, Buffer.concat([sub, Buffer.from('/deep')]), shut, Buffer.concat([shut, Buffer.from('/inside')])]) own(p);
  chmodSync(sub, 0o500);
  chmodSync(shut, 0o000);
  // links leading out: to a folder and to a file
  const linkDir = odd('ld');
  symlinkSync(outside, linkDir);
  own(linkDir);
  const linkFile = odd('lf');
  symlinkSync(path.join(outside, 'precious'), linkFile);
  own(linkFile);
  for (const p of [file, nested, folder, linkDir, linkFile]) expect(lstatSync(p)).toBeTruthy();

  try {
    const r = await restore('b-untext', true);
    expect([r.status, r.error]).toEqual(['completed', undefined]);
    for (const p of [file, nested, folder, linkDir, linkFile]) expect([p.toString('hex'), existsSync(p)]).toEqual([p.toString('hex'), false]);
    // what the backup has is there, its folder's mode as backed up
    expect(namesIn('keep')).toEqual([hex('a.txt')]);
    expect(readFileSync(path.join(dir, 'keep', 'a.txt'), 'utf8')).toBe('as backed up');
    expect(lstatSync(path.join(dir, 'keep')).mode & 0o777).toBe(0o755);
    // the links' targets are untouched
    expect(readdirSync(outside)).toEqual(['precious']);
    expect(readFileSync(path.join(outside, 'precious'), 'utf8')).toBe('not the server\u2019s');
  } finally {
    chmodSync(path.join(dir, 'keep'), 0o755);
    if (existsSync(sub)) chmodSync(sub, 0o755);
    if (existsSync(shut)) chmodSync(shut, 0o755);
    for (const p of [file, nested, folder, linkDir, linkFile]) rmSync(p, { recursive: true, force: true });
    rmSync(path.join(dir, 'keep'), { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  }
});

test('a restore without truncate leaves names that are not UTF-8 as they are', async () => {
  writeFileSync(path.join(dir, 'kept.txt'), 'as backed up');
  own(path.join(dir, 'kept.txt'));
  expect(await backup('b-untext-keep')).toMatchObject({ status: 'completed' });
  writeFileSync(path.join(dir, 'kept.txt'), 'changed');
  const file = odd('f');
  writeFileSync(file, 'made since');
  own(file);
  const folder = odd('d');
  mkdirSync(folder);
  own(folder);
  try {
    const r = await restore('b-untext-keep', false);
    expect([r.status, r.error]).toEqual(['completed', undefined]);
    expect(readFileSync(path.join(dir, 'kept.txt'), 'utf8')).toBe('as backed up');
    expect(readFileSync(file, 'utf8')).toBe('made since');
    expect(lstatSync(folder).isDirectory()).toBe(true);
  } finally {
    for (const p of [file, folder, path.join(dir, 'kept.txt')]) rmSync(p, { recursive: true, force: true });
  }
});
