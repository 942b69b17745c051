/**
 * What a server cannot escape: its memory cgroup (processes that left its tree included), its process
 * limit, its own /tmp and /dev/shm, the disk its files really take; and its removal (processes killed
 * until its cgroup is empty, files removed by its own user). Needs root and cgroups (as on a node).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ServerCgroups } from '../../src/agent/environment/cgroup';
import { createServer, getState, logs, newId, power, specFor, startHarness, startRunning, waitFor, waitStatus, type Harness } from './helpers';
import { sleep } from '../support/wait.js';

const cgroups = new ServerCgroups();
// the relay test below timed out twice under CI load (never alone): one retry, with what it saw logged
jest.retryTimes(1, { logErrorsBeforeRetry: true });
const usable = process.getuid?.() === 0 && cgroups.has('memory') && cgroups.has('pids');
const maybe = usable ? test : test.skip;
if (!usable) console.warn('SKIPPED test/agent/limits.test.ts: needs root and the cgroup memory and pids controllers');

const PIDS_MAX = 40;
let h: Harness;
beforeAll(async () => {
  h = await startHarness({}, { serverPidsMax: PIDS_MAX });
});
afterAll(async () => {
  expect(await h.close()).toEqual([]);
});

const shell = (id: string, command: string, overrides = {}) => specFor('shell-command', id, overrides, { COMMAND: command });
const serverDir = (id: string): string => path.join(h.dataDir, 'agent', 'servers', id);

/** Pids of processes whose cwd is in `dir`. */
function processesIn(dir: string): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        const cwd = readlinkSync(`/proc/${n}/cwd`);
        return cwd === dir || cwd.startsWith(dir + '/');
      } catch {
        return false;
      }
    })
    .map(Number);
}

maybe('a memory hog that left the process tree (setsid in a subshell) is held to the memory limit and ends the server', async () => {
  const id = newId();
  // `tail` keeps a line without a newline in memory: 400 MB of zeros, far over the 64 MiB limit
  await createServer(h, shell(id, "( setsid sh -c 'head -c 400000000 /dev/zero | tail > /dev/null' & ); echo hog started; exec sleep 100000", { memory: 64 }));
  await startRunning(h, id);
  const st = await waitStatus(h, id, 'offline', 30_000);
  expect(st.reason).toBe('memory_limit');
  expect(processesIn(serverDir(id))).toEqual([]);
}, 40_000);

maybe('a fork bomb stops at the process limit (pids.max)', async () => {
  const id = newId();
  // bounded: 200 sleepers wanted, 5 times the limit (node, since a shell exits at its first failed fork)
  const spawner = `const { spawn } = require('child_process'); let failed = 0; for (let i = 0; i < 200; i++) { try { spawn('sleep', ['100000'], { stdio: 'ignore' }).on('error', () => failed++); } catch { failed++; } } setTimeout(() => console.log('spawned, failed ' + failed), 2000); setInterval(() => {}, 1e6);`;
  await createServer(h, shell(id, `exec ${process.execPath} -e "${spawner}"`));
  await startRunning(h, id);
  const done = await waitFor(async () => (await logs(h, id)).find((l) => l.startsWith('spawned')), 'the loop to end', 30_000);
  expect(Number(/failed (\d+)/.exec(done)![1])).toBeGreaterThan(0);
  expect(readFileSync(path.join(cgroups.groupDir(id, 'pids')!, 'pids.max'), 'utf8').trim()).toBe(String(PIDS_MAX));
  const running = processesIn(serverDir(id)).length;
  expect(running).toBeGreaterThan(PIDS_MAX / 2); // it did fork, up to the limit
  expect(running).toBeLessThanOrEqual(PIDS_MAX);
  expect((await power(h, id, 'kill')).status).toBe(200);
  await waitStatus(h, id, 'offline');
  await waitFor(() => processesIn(serverDir(id)).length === 0, 'every sleeper to be killed');
}, 40_000);

maybe('a server has a /tmp and /dev/shm of its own, within its memory', async () => {
  const marker = `hp-host-marker-${process.pid}`;
  writeFileSync(path.join('/tmp', marker), 'host');
  const id = newId();
  const probe = [
    `test -e /tmp/${marker} && echo SEES-HOST-TMP || echo own-tmp`,
    `echo mine > /tmp/hp-server-file-${id} && echo wrote-tmp`,
    'dd if=/dev/zero of=/dev/shm/fill bs=1M count=100 2>/dev/null; echo "shm=$(du -sm /dev/shm | cut -f1)"',
    'exec sleep 100000',
  ].join('; ');
  try {
    await createServer(h, shell(id, probe, { memory: 48 }));
    await startRunning(h, id);
    const out = await waitFor(async () => {
      const l = await logs(h, id);
      return l.some((x) => x.startsWith('shm=')) ? l : null;
    }, 'the probe', 30_000);
    expect(out).toEqual(expect.arrayContaining(['own-tmp', 'wrote-tmp']));
    expect(existsSync(`/tmp/hp-server-file-${id}`)).toBe(false);
    // the tmpfs holds half the memory limit: 100 MB do not fit, and the server is still running
    const shm = Number(out.find((x) => x.startsWith('shm='))!.slice(4));
    expect(shm).toBeLessThanOrEqual(24);
    expect(shm).toBeGreaterThan(20);
    expect((await getState(h, id)).status).toBe('running');
    expect((await power(h, id, 'kill')).status).toBe(200);
    await waitStatus(h, id, 'offline');
  } finally {
    rmSync(path.join('/tmp', marker), { force: true });
    rmSync(`/tmp/hp-server-file-${id}`, { force: true });
  }
}, 45_000);

maybe("a server sees its own processes in /proc, not another server's command line", async () => {
  // /proc was the host's: any server read the command lines of the others, where eggs put passwords
  // (the pattern's brackets keep the spy's own command line from matching it)
  const victim = newId();
  const spy = newId();
  const look = [
    'test -r /proc/$$/cmdline && echo sees-own',
    "if cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' ' | grep -q 'sleep 100000[.]4711'; then echo SEES-OTHER; else echo other-hidden; fi",
    'exec sleep 100000',
  ].join('; ');
  await createServer(h, shell(victim, 'exec sleep 100000.4711'));
  await createServer(h, shell(spy, look));
  await startRunning(h, victim);
  await waitFor(() => execFileSync('ps', ['-eo', 'args']).toString().includes('sleep 100000.4711'), 'the victim running');
  await startRunning(h, spy);
  const out = await waitFor(async () => {
    const l = await logs(h, spy);
    return l.some((x) => x.includes('SEES-OTHER') || x.includes('other-hidden')) ? l : null;
  }, 'the spy', 30_000);
  expect(out).toEqual(expect.arrayContaining(['sees-own', 'other-hidden']));
  for (const id of [victim, spy]) expect((await power(h, id, 'kill')).status).toBe(200);
}, 45_000);

maybe("a server's variables reach its process whole, and never the sandbox's root part (mount, setpriv)", async () => {
  // the root part ran with the server's variables: LIBMOUNT_DEBUG made mount print its debug lines as root
  const id = newId();
  const vars = { COMMAND: 'env; exec sleep 100000', LIBMOUNT_DEBUG: 'all', HP_MULTI: "one 'two'\nthree=3 $x" };
  await createServer(h, specFor('shell-command', id, { variables: vars }));
  await startRunning(h, id);
  const out = await waitFor(async () => {
    const l = await logs(h, id);
    return l.includes('three=3 $x') ? l : null;
  }, 'the environment', 30_000);
  expect(out.filter((l) => /libmount|mnt_|debug mask/i.test(l) && l !== 'LIBMOUNT_DEBUG=all')).toEqual([]);
  expect(out).toEqual(expect.arrayContaining(['LIBMOUNT_DEBUG=all', "HP_MULTI=one 'two'", `SERVER_ID=${id}`, 'USER=container']));
  expect((await power(h, id, 'kill')).status).toBe(200);
}, 45_000);

maybe('disk counts allocated blocks (fallocate --keep-size) and every file', async () => {
  const id = newId();
  await createServer(h, shell(id, 'exec sleep 100000', { disk: 4 }));
  mkdirSync(serverDir(id), { recursive: true });
  // apparent size 0, 8 MiB allocated
  writeFileSync(path.join(serverDir(id), 'hidden.bin'), '');
  execFileSync('fallocate', ['--keep-size', '-l', '8M', path.join(serverDir(id), 'hidden.bin')]);
  const r = await power(h, id, 'start');
  expect(r.status).toBe(422);
  expect(r.body.error.code).toBe('DISK_LIMIT');
  rmSync(path.join(serverDir(id), 'hidden.bin'));
  // 2,000 empty files: no bytes, but 2,000 inodes
  mkdirSync(path.join(serverDir(id), 'many'));
  for (let i = 0; i < 2000; i++) writeFileSync(path.join(serverDir(id), 'many', String(i)), '');
  const r2 = await power(h, id, 'start');
  expect(r2.status).toBe(422);
  expect(r2.body.error.code).toBe('DISK_LIMIT');
  rmSync(path.join(serverDir(id), 'many'), { recursive: true });
  await startRunning(h, id);
  expect((await power(h, id, 'kill')).status).toBe(200);
  await waitStatus(h, id, 'offline');
});

maybe('kill empties the cgroup of a relay of processes, each starting the next outside the process group and exiting', async () => {
  const id = newId();
  // one or two processes alive at any moment, each a new pid: one read of cgroup.procs misses the next
  // (bounded: the relay ends by itself after 200,000 generations, long after the kill). Each generation
  // waits 20 ms first: at full speed, under CI load, the exited generations not yet reaped filled the
  // server's 40 pids and the relay died ("Cannot fork") before the test could see it
  const relay = 'n=$1; sleep 0.02; [ "$n" -gt 0 ] && setsid sh ./relay.sh $((n-1)) &';
  await createServer(h, shell(id, `echo '${relay}' > relay.sh; setsid sh ./relay.sh 200000 & echo relay started; exec sleep 100000`));
  await startRunning(h, id);
  await waitFor(async () => (await logs(h, id)).includes('relay started'), 'the relay', 30_000);
  await waitFor(() => cgroups.procs(id).length > 1, 'the relay to be under way', 30_000).catch(async (err: Error) => {
    // under CI load this wait has timed out twice (2026-11-25) and never alone: say what the server was doing
    const state = await getState(h, id);
    throw new Error(`${err.message}; cgroup.procs: ${JSON.stringify(cgroups.procs(id))}; status ${state?.status}; last lines: ${JSON.stringify((await logs(h, id)).slice(-5))}`);
  });
  expect((await power(h, id, 'kill')).status).toBe(200);
  await waitStatus(h, id, 'offline');
  await sleep(300);
  expect(processesIn(serverDir(id))).toEqual([]);
});

maybe("a deleted server's files are removed by its own user, not by root", async () => {
  const id = newId();
  await createServer(h, shell(id, 'echo mine > own.txt; exec sleep 100000'));
  await startRunning(h, id);
  await waitFor(() => existsSync(path.join(serverDir(id), 'own.txt')), 'own.txt');
  // stands for what a symlink swapped in mid-walk would expose: something the server's user may not delete
  const guarded = path.join(serverDir(id), 'guarded');
  mkdirSync(guarded);
  writeFileSync(path.join(guarded, 'keep.txt'), 'root only');
  chmodSync(guarded, 0o755);
  expect((await h.request('DELETE', `/api/servers/${id}`)).status).toBe(204);
  const trash = await waitFor(() => {
    const t = readdirSync(path.join(h.dataDir, 'agent', 'servers')).find((n) => n.includes(id));
    return t && !existsSync(path.join(h.dataDir, 'agent', 'servers', t, 'own.txt')) ? t : null;
  }, 'the server files to be removed');
  expect(existsSync(path.join(h.dataDir, 'agent', 'servers', trash, 'guarded', 'keep.txt'))).toBe(true);
  expect(await getState(h, id)).toBeUndefined();
});
