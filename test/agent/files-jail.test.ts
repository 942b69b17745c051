/**
 * The file manager's jail on a real directory, through a real worker process running as the server's
 * own uid: the operations, and the escape suite (absolute paths, `..`, symlinks to `/`, to a file
 * outside and into another server's directory, chmod through a link, hard links to foreign files, and
 * a directory swapped for a symlink in a tight loop while requests go through it). Runs as root (the
 * agent's normal case); skipped otherwise, as the worker could not switch users.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { FileWorkers, installWorker, type FileTarget } from '../../src/agent/filesystem/workers.js';
import type { FileRequest } from '../../src/agent/filesystem/protocol.js';

const root = process.getuid?.() === 0;
const maybe = root ? describe : describe.skip;
if (!root) console.warn('SKIPPED test/agent/files-jail.test.ts: it needs root to run the file worker as a server uid');

maybe('file jail', () => {
  const base = mkdtempSync(path.join(os.tmpdir(), 'hostpanel-jail-'));
  const servers = path.join(base, 'servers');
  const dir = path.join(servers, 'srv-a');
  const other = path.join(servers, 'srv-b');
  const uid = 2_900_000 + Math.floor(Math.random() * 50_000);
  const target: FileTarget = { id: 'srv-a', dir, identity: { uid, gid: uid } };
  const workers = new FileWorkers(path.join(base, 'run'), installWorker(path.join(base, 'lib')));
  const loops: ChildProcess[] = [];

  beforeAll(() => {
    chmodSync(base, 0o755);
    mkdirSync(servers, { mode: 0o711 });
    mkdirSync(path.join(base, 'run'), { mode: 0o711 });
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, uid, uid);
    mkdirSync(other, { mode: 0o700 });
    writeFileSync(path.join(other, 'secret.txt'), 'other server secret');
    writeFileSync(path.join(base, 'panel-secret'), 'panel secret', { mode: 0o600 });
  });
  afterAll(() => {
    for (const l of loops) l.kill('SIGKILL');
    workers.close();
    rmSync(base, { recursive: true, force: true });
  });

  /** Runs a shell command as the server's uid inside its directory (what its own process could do). */
  const asServer = (cmd: string) => execFileSync('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', 'sh', '-c', cmd], { cwd: dir });

  async function call(req: FileRequest, body?: Buffer): Promise<{ ok: boolean; status?: number; code?: string; result?: any; bytes: Buffer }> {
    const { res, body: rest } = await workers.request(target, req, body ? Readable.from([body]) : undefined);
    const chunks: Buffer[] = [];
    for await (const c of rest) chunks.push(c as Buffer);
    const bytes = Buffer.concat(chunks);
    return res.ok ? { ok: true, result: res.result, bytes } : { ok: false, status: res.status, code: res.code, bytes };
  }

  test('write, read, list, mkdir, rename, copy, chmod, search, delete', async () => {
    expect((await call({ op: 'mkdir', path: '/plugins' })).result.entry).toMatchObject({ name: 'plugins', path: '/plugins', type: 'directory' });
    const w = await call({ op: 'write', path: 'plugins/config.yml', allowance: 1_000_000 }, Buffer.from('a: 1\n'));
    expect(w.result).toMatchObject({ created: true, entry: { name: 'config.yml', path: '/plugins/config.yml', type: 'file', size: 5, mode: '0644' } });
    expect((await call({ op: 'read', path: '/plugins/config.yml', maxBytes: 100 })).bytes.toString()).toBe('a: 1\n');
    // the file belongs to the server's uid
    expect(execFileSync('stat', ['-c', '%u', path.join(dir, 'plugins/config.yml')]).toString().trim()).toBe(String(uid));
    const over = await call({ op: 'write', path: 'plugins/config.yml', allowance: 10 }, Buffer.alloc(100, 1));
    expect(over.code).toBe('DISK_LIMIT');
    expect(readFileSync(path.join(dir, 'plugins/config.yml'), 'utf8')).toBe('a: 1\n'); // nothing half-written
    expect(asServer('ls -A plugins').toString().trim()).toBe('config.yml'); // no temporary file left
    expect((await call({ op: 'read', path: '/plugins/config.yml', maxBytes: 3 })).code).toBe('FILE_TOO_LARGE');
    const copy = await call({ op: 'copy', path: '/plugins/config.yml', allowance: 1000 });
    expect(copy.result.entry.name).toBe('config copy.yml');
    expect((await call({ op: 'copy', path: '/plugins/config.yml', allowance: 1000 })).result.entry.name).toBe('config copy 2.yml');
    expect((await call({ op: 'rename', from: '/plugins/config copy.yml', to: '/renamed.yml' })).result.entry.path).toBe('/renamed.yml');
    expect((await call({ op: 'rename', from: '/renamed.yml', to: '/plugins/config.yml' })).code).toBe('ALREADY_EXISTS');
    expect((await call({ op: 'chmod', path: '/renamed.yml', mode: 0o600 })).result.entry.mode).toBe('0600');
    const list = await call({ op: 'list', path: '/', page: 1, limit: 100 });
    expect(list.result.entries.map((e: any) => e.name)).toEqual(['plugins', 'renamed.yml']); // folders first
    expect((await call({ op: 'search', path: '/', query: 'CONFIG' })).result.entries.map((e: any) => e.path)).toEqual(['/plugins/config copy 2.yml', '/plugins/config.yml']);
    expect((await call({ op: 'delete', paths: ['/renamed.yml', '/plugins'] })).ok).toBe(true);
    expect((await call({ op: 'list', path: '/', page: 1, limit: 100 })).result.total).toBe(0);
    expect((await call({ op: 'read', path: '/nope', maxBytes: 10 })).status).toBe(404);
  });

  test('paths: `..` above the root, NUL and over-long names are INVALID_PATH; a leading / is the root', async () => {
    for (const bad of ['../etc/passwd', '/a/../../x', 'a\u0000b', 'x'.repeat(300), '\ud800']) {
      expect((await call({ op: 'read', path: bad, maxBytes: 10 })).code).toBe('INVALID_PATH');
    }
    expect((await call({ op: 'write', path: '/etc/passwd', allowance: 100 }, Buffer.from('mine'))).status).toBe(404); // no /etc in the server yet
    await call({ op: 'mkdir', path: '/etc' });
    expect((await call({ op: 'write', path: '/etc/passwd', allowance: 100 }, Buffer.from('mine'))).ok).toBe(true);
    expect(readFileSync(path.join(dir, 'etc/passwd'), 'utf8')).toBe('mine'); // inside the server
  }, 30_000);

  test('a listing leaves out names that are not UTF-8 text, and its total does not count them', async () => {
    // they were left out of the page but counted in the total
    await call({ op: 'mkdir', path: '/latin' });
    asServer(`printf x > latin/ok.txt; printf y > "latin/$(printf 'caf\\351')"`);
    expect(readdirSync(path.join(dir, 'latin'))).toHaveLength(2);
    const list = await call({ op: 'list', path: '/latin', page: 1, limit: 100 });
    expect({ names: list.result.entries.map((e: any) => e.name), total: list.result.total }).toEqual({ names: ['ok.txt'], total: 1 });
    expect((await call({ op: 'search', path: '/latin', query: 'caf' })).result.entries).toEqual([]);
  });

  test('symlinks out of the server are refused for every operation; links inside work', async () => {
    asServer(`ln -s / root && ln -s /etc/passwd p && ln -s ${other} neighbour && ln -s ${path.join(base, 'panel-secret')} key && mkdir -p in && echo ok > in/f && ln -s in inside`);
    const refused = async (req: FileRequest, body?: Buffer) => expect([req, (await call(req, body)).code]).toEqual([req, 'INVALID_PATH']);
    await refused({ op: 'list', path: '/root', page: 1, limit: 10 });
    await refused({ op: 'list', path: '/root/etc', page: 1, limit: 10 });
    await refused({ op: 'read', path: '/p', maxBytes: 100_000 });
    await refused({ op: 'read', path: '/root/etc/hostname', maxBytes: 100_000 });
    await refused({ op: 'read', path: '/neighbour/secret.txt', maxBytes: 100 });
    await refused({ op: 'read', path: '/key', maxBytes: 100 });
    await refused({ op: 'download', path: '/p' });
    await refused({ op: 'write', path: '/root/tmp/evil', allowance: 100 }, Buffer.from('x'));
    await refused({ op: 'mkdir', path: '/root/tmp/evil-dir' });
    await refused({ op: 'chmod', path: '/p', mode: 0o777 });
    await refused({ op: 'rename', from: '/root/etc/hostname', to: '/stolen' });
    await refused({ op: 'copy', path: '/p', allowance: 100_000 });
    await refused({ op: 'delete', paths: ['/root/etc/hostname'] });
    // deleting the link removes the link, never what it points to
    expect((await call({ op: 'delete', paths: ['/neighbour'] })).ok).toBe(true);
    expect(readFileSync(path.join(other, 'secret.txt'), 'utf8')).toBe('other server secret');
    // a hard link to a file of another user (here made by root: protected_hardlinks keeps the server's user from it)
    execFileSync('ln', [path.join(base, 'panel-secret'), path.join(dir, 'hard')]);
    await refused({ op: 'read', path: '/hard', maxBytes: 100 });
    await refused({ op: 'copy', path: '/hard', allowance: 100 });
    expect(() => asServer(`ln ${path.join(other, 'secret.txt')} hard2`)).toThrow();
    // a link inside the server is followed
    expect((await call({ op: 'read', path: '/inside/f', maxBytes: 10 })).bytes.toString()).toBe('ok\n');
    expect((await call({ op: 'list', path: '/', page: 1, limit: 100 })).result.entries.find((e: any) => e.name === 'root').type).toBe('symlink');
  });

  test('a directory swapped for a symlink to / in a tight loop never lets a request through it out', async () => {
    asServer('mkdir -p swap && echo inside > swap/file && mkdir -p work');
    const loop = spawn('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', 'sh', '-c', 'while true; do mv swap swap.real; ln -s / swap; rm swap; mv swap.real swap; done'], { cwd: dir, stdio: 'ignore' });
    loops.push(loop);
    const outside: string[] = [];
    const deadline = Date.now() + 4000;
    let requests = 0;
    while (Date.now() < deadline) {
      const results = await Promise.all([
        call({ op: 'list', path: '/swap', page: 1, limit: 100 }),
        call({ op: 'read', path: '/swap/file', maxBytes: 100 }),
        call({ op: 'read', path: '/swap/etc/hostname', maxBytes: 100 }),
        call({ op: 'write', path: '/swap/tmp/escaped', allowance: 100 }, Buffer.from('x')),
        call({ op: 'chmod', path: '/swap/etc/hostname', mode: 0o777 }),
        call({ op: 'rename', from: '/swap/etc/hostname', to: '/work/h' }),
        call({ op: 'mkdir', path: '/swap/tmp/escaped-dir' }),
      ]);
      requests += results.length;
      const [list, file, hostname] = results;
      if (list!.ok && list!.result.entries.some((e: any) => ['etc', 'proc', 'usr'].includes(e.name))) outside.push('listed /');
      if (file!.ok && file!.bytes.toString() !== 'inside\n') outside.push(`read ${file!.bytes.toString()}`);
      if (hostname!.ok) outside.push('read /etc/hostname');
    }
    loop.kill('SIGKILL');
    expect(requests).toBeGreaterThan(50);
    expect(outside).toEqual([]);
    expect(execFileSync('sh', ['-c', 'ls /tmp/escaped /tmp/escaped-dir 2>/dev/null || true']).toString()).toBe('');
    expect(execFileSync('stat', ['-c', '%a', '/etc/hostname']).toString().trim()).not.toBe('777');
  }, 30_000);
});
