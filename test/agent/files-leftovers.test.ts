/**
 * What interrupted writes leave: a write's temporary file (`.hostpanel-tmp-` and 16 hex digits) stays
 * in the server's directory when the agent or the file worker is killed in the middle of it. The
 * server's file worker removes such names anywhere in the tree when it starts (as the server's user,
 * a link or a folder as what it is), and every disk measurement (the start's check, the check while
 * running, the file manager's budget) waits for that and counts what is left the same way.
 */
import { request as httpRequest } from 'node:http';
import { existsSync, lchownSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startAgent } from '../../src/agent';
import { deriveNodeKey, generateNodeToken, signRequest, STREAMED_BODY } from '../../src/shared/node-protocol';
import { hasAgentBuild, startAgentProcess, type AgentProcess } from './agent-process';
import { createServer, FakePanel, getState, killAllUnder, newId, power, specFor, startHarness, startRunning, tmpDir, waitFor, waitStatus, type Harness } from './helpers';

const MIB = 1024 * 1024;
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ diskCheckIntervalMs: 200 });
}, 60_000);
const processes: AgentProcess[] = [];
let fakePanel: FakePanel | undefined;
let processDataDir = '';
afterAll(async () => {
  for (const a of processes) await a.stop().catch(() => undefined);
  await fakePanel?.close();
  if (processDataDir) killAllUnder(processDataDir);
  expect(await h?.close()).toEqual([]);
});

const shell = (id: string) => specFor('shell-command', id, { disk: 2 }, { COMMAND: 'exec sleep 100000' });
const serverDir = (id: string): string => path.join(h.dataDir, 'agent', 'servers', id);
const contents = (id: string, p: string) => `/api/servers/${id}/files/contents?path=${encodeURIComponent(p)}`;
const names = async (id: string, p = '/'): Promise<string[]> => (await h.request('GET', `/api/servers/${id}/files?path=${encodeURIComponent(p)}`)).body.data.map((e: { name: string }) => e.name);

/** A streamed PUT of `body`; with `hold`, the request is left open after it (`end()` ends it). */
function put(id: string, p: string, body: Buffer, hold = false): { answer: Promise<{ status: number; body: any }>; end: () => void; abort: () => void } {
  const url = contents(id, p);
  const req = httpRequest(h.base + url, { method: 'PUT', headers: { authorization: signRequest(h.nodeId, h.nodeKey, 'PUT', url, STREAMED_BODY) } });
  const answer = new Promise<{ status: number; body: any }>((resolve) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
      res.on('error', () => resolve({ status: 0, body: null }));
    });
    req.on('error', () => resolve({ status: 0, body: null }));
  });
  req.write(body);
  if (!hold) req.end();
  return { answer, end: () => req.end(), abort: () => req.destroy() };
}

/** Gives `p` (not following a link) to the server's user, as the worker that made it would have. */
const owned = (id: string, p: string): void => {
  const { uid, gid } = statSync(serverDir(id));
  lchownSync(p, uid, gid);
};

test('the agent removes what interrupted writes left, anywhere in the tree and as what it is, before the server starts again; names that only look alike stay', async () => {
  const id = newId();
  await createServer(h, shell(id));
  const dir = serverDir(id);
  // 1 MiB of the user's, within the 2 MiB limit
  expect((await put(id, '/world.bin', Buffer.alloc(MIB, 1)).answer).status).toBe(201);
  await startRunning(h, id);
  await h.agent.close({ stopServers: false });

  // what writes killed with the agent leave (1.5 MiB would take the server over its limit) ...
  const left = ['.hostpanel-tmp-0123456789abcdef', 'plugins/.hostpanel-tmp-fedcba9876543210', '.hostpanel-tmp-00000000aaaaaaaa', '.hostpanel-tmp-1111111111111111'];
  mkdirSync(path.join(dir, 'plugins'));
  owned(id, path.join(dir, 'plugins'));
  writeFileSync(path.join(dir, left[0]!), Buffer.alloc(1.5 * MIB, 2));
  writeFileSync(path.join(dir, left[1]!), Buffer.alloc(4096, 3));
  // a link to a file outside the server: the link goes, never its target
  const outside = path.join(tmpDir('hp-leftover-target-'), 'precious.txt');
  writeFileSync(outside, 'not the server\u2019s');
  symlinkSync(outside, path.join(dir, left[2]!));
  // a folder of that name (the server's own process made it): removed with what it holds
  mkdirSync(path.join(dir, left[3]!));
  writeFileSync(path.join(dir, left[3]!, 'inner.txt'), 'x');
  owned(id, path.join(dir, left[3]!, 'inner.txt'));
  // ... and names that only look like them: the user's files
  const kept = ['.hostpanel-tmp-notes.txt', '.hostpanel-tmp-0123456789ABCDEF', '.hostpanel-tmp-0123456789abcde', 'plugins/x.hostpanel-tmp-0123456789abcdef'];
  for (const k of kept) writeFileSync(path.join(dir, k), 'mine');
  for (const p of [...left, ...kept]) owned(id, path.join(dir, p));

  h.panel.servers = [{ spec: shell(id), status: 'running' }];
  h.agent = await startAgent(h.opts);
  h.base = `http://127.0.0.1:${h.agent.port}`;
  // it was running: the agent starts it again (it was refused DISK_LIMIT, 2.5 MiB over 2 MiB, while
  // the file manager showed 1 MiB)
  const state = await waitFor(async () => {
    const s = await getState(h, id);
    return s?.status === 'running' || s?.reason === 'disk_limit' ? s : null;
  }, 'the server started again or refused', 20_000);
  expect({ status: state.status, reason: state.reason }).toEqual({ status: 'running', reason: null });
  for (const p of left) expect([p, existsSync(path.join(dir, p)) || !!lstatSync(path.join(dir, p), { throwIfNoEntry: false })]).toEqual([p, false]);
  expect(readFileSync(outside, 'utf8')).toBe('not the server\u2019s');
  for (const k of kept) expect([k, readFileSync(path.join(dir, k), 'utf8')]).toEqual([k, 'mine']);
  // the user's look-alikes are files like any other: listed
  expect(await names(id)).toEqual(expect.arrayContaining(['.hostpanel-tmp-notes.txt', '.hostpanel-tmp-0123456789ABCDEF', '.hostpanel-tmp-0123456789abcde', 'world.bin']));
  expect(await names(id, '/plugins')).toEqual(['x.hostpanel-tmp-0123456789abcdef']);
  expect((await power(h, id, 'kill')).status).toBe(200);
  await waitStatus(h, id, 'offline');
}, 90_000);

test('a file whose name only starts like a temporary file counts in the file manager\u2019s budget as in the start\u2019s check, and is listed; a temporary name cannot be written', async () => {
  const id = newId();
  await createServer(h, shell(id));
  const dir = serverDir(id);
  // made by the server's own process
  writeFileSync(path.join(dir, '.hostpanel-tmp-notes.bin'), Buffer.alloc(1.5 * MIB, 1));
  owned(id, path.join(dir, '.hostpanel-tmp-notes.bin'));
  // 1.5 MiB + 1 MiB is over 2 MiB for the file manager as for the start (it was accepted, and the
  // start then refused DISK_LIMIT)
  const up = await put(id, '/more.bin', Buffer.alloc(MIB, 2)).answer;
  expect([up.status, up.body?.error?.code]).toEqual([422, 'DISK_LIMIT']);
  expect(await names(id)).toContain('.hostpanel-tmp-notes.bin');
  // and the start agrees: 1.5 MiB is within 2 MiB
  await startRunning(h, id);
  expect((await power(h, id, 'kill')).status).toBe(200);
  await waitStatus(h, id, 'offline');
  // the user sees it, so they can delete it
  expect((await h.request('POST', `/api/servers/${id}/files/delete`, { paths: ['/.hostpanel-tmp-notes.bin'] })).status).toBe(204);
  expect((await put(id, '/more.bin', Buffer.alloc(MIB, 2)).answer).status).toBe(201);
  // the names temporary files take are the file manager's own
  const reserved = await put(id, '/.hostpanel-tmp-0123456789abcdef', Buffer.from('x')).answer;
  expect([reserved.status, reserved.body?.error?.code]).toEqual([422, 'INVALID_PATH']);
  expect(readdirSync(dir)).not.toContain('.hostpanel-tmp-0123456789abcdef');
}, 60_000);

/** Pids of the file workers of the server directory `dir`. */
function workersOf(dir: string): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        const argv = readFileSync(`/proc/${n}/cmdline`, 'utf8').split('\0');
        return argv.some((a) => a.endsWith('worker.js')) && argv.includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

test('a file worker killed in the middle of a write: what it left is removed before the disk is measured again, so the running server is not stopped for it', async () => {
  const id = newId();
  await createServer(h, shell(id));
  const dir = serverDir(id);
  await startRunning(h, id);
  // 1.5 MiB of an upload under way, held open (1 MiB of it written: the worker writes by the MiB)
  const upload = put(id, '/big.bin', Buffer.alloc(1.5 * MIB, 1), true);
  const temps = () => readdirSync(dir).filter((n) => n.startsWith('.hostpanel-tmp-'));
  await waitFor(() => temps().some((t) => statSync(path.join(dir, t)).size >= MIB), 'the upload to be written');
  // a write under way counts: with its 1.5 MiB, 1 MiB more does not fit in 2 MiB
  const meanwhile = await put(id, '/other.bin', Buffer.alloc(MIB, 2)).answer;
  expect([meanwhile.status, meanwhile.body?.error?.code]).toEqual([422, 'DISK_LIMIT']);
  const pids = workersOf(dir);
  expect(pids.length).toBe(1);
  process.kill(pids[0]!, 'SIGKILL');
  upload.abort();
  await upload.answer;
  // (a request that reaches the dead worker before the agent has seen it exit fails: the next starts another)
  await waitFor(async () => (await h.request('GET', `/api/servers/${id}/files?path=%2F`)).status === 200, 'the file manager back');
  // 1.25 MiB: the budget does not count the dead write's 1 MiB, and neither does the running server's
  // check any more (it counted it: 2.25 MiB, and stopped the server)
  expect((await put(id, '/other.bin', Buffer.alloc(1.25 * MIB, 2)).answer).status).toBe(201);
  const state = await waitFor(async () => {
    const s = await getState(h, id);
    return s?.status !== 'running' || s?.stats?.disk >= 1.2 ? s : null;
  }, 'the running server\u2019s disk measured with the new file', 20_000);
  expect({ status: state.status, disk: state.stats.disk }).toEqual({ status: 'running', disk: expect.any(Number) });
  expect(state.stats.disk).toBeLessThan(2);
  expect(temps()).toEqual([]);
  expect((await power(h, id, 'kill')).status).toBe(200);
  await waitStatus(h, id, 'offline');
}, 60_000);

(hasAgentBuild ? test : test.skip)('an upload cut by the agent being killed (SIGKILL): after the restart nothing of it is left or counted', async () => {
  const nodeToken = generateNodeToken();
  const nodeId = 'node-kill-' + newId().slice(0, 8);
  const nodeKey = deriveNodeKey(nodeToken);
  fakePanel = new FakePanel(nodeId, nodeKey);
  await fakePanel.listen();
  const node = { panelUrl: fakePanel.url, nodeId, nodeToken };
  processDataDir = tmpDir('hp-leftover-kill-');
  const id = newId();
  const spec = specFor('shell-command', id, { disk: 16 }, { COMMAND: 'exec sleep 1000' });
  fakePanel.servers = [{ spec, status: 'offline' }];
  let agent = await startAgentProcess(0, { DATA_DIR: processDataDir }, node);
  processes.push(agent);
  expect((await agent.request('PUT', `/api/servers/${id}`, spec)).status).toBe(200);
  await waitFor(async () => (await agent.request('GET', `/api/servers/${id}`)).body?.data?.status === 'offline', 'the install', 20_000);
  const dir = path.join(processDataDir, 'agent', 'servers', id);
  const temps = () => (existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith('.hostpanel-tmp-')) : []);
  const streamed = (p: string, length: number) => {
    const url = contents(id, p);
    const req = httpRequest({ host: '127.0.0.1', port: agent.port, method: 'PUT', path: url, headers: { authorization: signRequest(nodeId, nodeKey, 'PUT', url, STREAMED_BODY), 'content-length': String(length) } });
    const answer = new Promise<number>((resolve) => {
      req.on('response', (res) => res.resume().on('end', () => resolve(res.statusCode!)));
      req.on('error', () => resolve(0));
    });
    return { req, answer };
  };
  // 11 MiB of a 12 MiB upload, then the agent dies
  const cut = streamed('/world.bin', 12 * MIB);
  for (let i = 0; i < 11; i++) cut.req.write(Buffer.alloc(MIB, 7));
  await waitFor(() => temps().some((t) => statSync(path.join(dir, t)).size >= 10 * MIB), 'the temporary file to hold 10 MiB', 20_000);
  agent.child.kill('SIGKILL');
  await new Promise((r) => agent.child.once('exit', r));
  cut.req.destroy();
  await cut.answer;

  agent = await startAgentProcess(0, { DATA_DIR: processDataDir }, node);
  processes.push(agent);
  await waitFor(async () => (await agent.request('GET', `/api/servers/${id}`)).body?.data?.status === 'offline', 'the server back', 20_000);
  // the file manager answers once its worker has removed what the dead write left
  const listing = await agent.request('GET', `/api/servers/${id}/files?path=%2F`);
  expect([listing.status, listing.body.data]).toEqual([200, []]);
  expect(temps()).toEqual([]);
  // 6 MiB of the 16 the user sees free: accepted, and the start agrees (it was refused: 17 MiB)
  const small = streamed('/small.bin', 6 * MIB);
  small.req.end(Buffer.alloc(6 * MIB, 1));
  expect(await small.answer).toBe(201);
  const start = await agent.request('POST', `/api/servers/${id}/power`, { action: 'start' });
  expect([start.status, start.body?.error?.code]).toEqual([200, undefined]);
  await agent.request('POST', `/api/servers/${id}/power`, { action: 'kill' });
}, 120_000);
