/**
 * The agent's file routes over its signed HTTP API, with a real server directory and the file worker
 * running as the server's uid: JSON operations, the editor's read limit, streamed writes (signed as
 * streamed bodies), downloads with Range, the disk limit on a write, and a write cut off half way.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { diskUsage } from '../../src/agent/environment/proc';
import { ENTRY_BYTES, footprint } from '../../src/agent/filesystem/footprint';
import { signRequest, STREAMED_BODY } from '../../src/shared/node-protocol';
import { createServer, newId, specFor, startHarness, waitFor, type Harness } from './helpers';
import fc from 'fast-check';
import { sleep } from '../support/wait.js';

let h: Harness;
const id = newId();
beforeAll(async () => {
  h = await startHarness({}, { fileEditMaxBytes: 1024 });
  // 1 MiB of disk: a shell server with no install
  await createServer(h, specFor('shell-command', id, { disk: 1 }, { COMMAND: 'sleep 1000' }));
}, 60_000);
afterAll(async () => {
  expect(await h?.close()).toEqual([]);
});

const files = (sub = '', query = '', server = id) => `/api/servers/${server}/files${sub}${query ? `?${query}` : ''}`;
const q = (p: string) => `path=${encodeURIComponent(p)}`;

/** A streamed PUT of `body` (or of chunks produced by `chunks`), signed as a streamed body. */
function put(p: string, body: Buffer | (() => AsyncIterable<Buffer>), opts: { abortAfter?: number; server?: string } = {}): Promise<{ status: number; body: any }> {
  const url = files('/contents', q(p), opts.server);
  return new Promise((resolve, reject) => {
    const req = httpRequest(h.base + url, { method: 'PUT', headers: { authorization: signRequest(h.nodeId, h.nodeKey, 'PUT', url, STREAMED_BODY) } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', (err) => (opts.abortAfter !== undefined ? resolve({ status: 0, body: err.message }) : reject(err)));
    if (Buffer.isBuffer(body)) return req.end(body);
    void (async () => {
      let sent = 0;
      for await (const chunk of body()) {
        if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
        sent += chunk.length;
        if (opts.abortAfter !== undefined && sent >= opts.abortAfter) {
          req.destroy();
          return;
        }
      }
      req.end();
    })();
  });
}

async function getRaw(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(h.base + url, { headers: { authorization: signRequest(h.nodeId, h.nodeKey, 'GET', url), ...headers } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

test('requests that come together before the server\'s file worker runs all get an answer (one worker starts)', async () => {
  // each first request used to start its own worker on the same socket: all but one failed to listen
  const fresh = newId();
  await createServer(h, specFor('shell-command', fresh, { disk: 1 }, { COMMAND: 'sleep 1000' }));
  const answers = await Promise.all(Array.from({ length: 12 }, () => h.request('GET', files('', 'path=/', fresh))));
  expect(answers.map((r) => r.status)).toEqual(Array(12).fill(200));
});

test('directory, streamed write, list, read, rename, copy, chmod, search, delete', async () => {
  expect((await h.request('POST', files('/directory'), { path: '/plugins' })).status).toBe(201);
  const w = await put('/plugins/a.txt', Buffer.from('hello'));
  expect(w).toEqual({ status: 201, body: { data: expect.objectContaining({ path: '/plugins/a.txt', size: 5, type: 'file' }), meta: { created: true } } });
  expect((await put('/plugins/a.txt', Buffer.from('hello again'))).status).toBe(200);
  const list = await h.request('GET', files('', 'path=/plugins'));
  expect(list.body.data.map((e: any) => e.name)).toEqual(['a.txt']);
  const read = await getRaw(files('/contents', q('/plugins/a.txt')));
  expect(read.bytes.toString()).toBe('hello again');
  expect((await h.request('POST', files('/rename'), { from: '/plugins/a.txt', to: '/b.txt' })).body.data.path).toBe('/b.txt');
  expect((await h.request('POST', files('/copy'), { path: '/b.txt' })).body.data.name).toBe('b copy.txt');
  expect((await h.request('POST', files('/chmod'), { path: '/b.txt', mode: '600' })).body.data.mode).toBe('0600');
  expect((await h.request('POST', files('/chmod'), { path: '/b.txt', mode: '4755' })).status).toBe(422);
  expect((await h.request('GET', files('/search', 'path=/&query=B')).then((r) => r.body.data.map((e: any) => e.path)))).toEqual(['/b copy.txt', '/b.txt']);
  expect((await h.request('POST', files('/delete'), { paths: ['/b.txt', '/b copy.txt', '/plugins'] })).status).toBe(204);
  expect((await h.request('GET', files('', 'path=/'))).body.data).toEqual([]);
});

test('the editor limit, downloads with Range, 404 and INVALID_PATH', async () => {
  const big = Buffer.alloc(5000, 'x');
  big.write('START', 0);
  expect((await put('/big.log', big)).status).toBe(201);
  const tooBig = await h.request('GET', files('/contents', q('/big.log')));
  expect([tooBig.status, tooBig.body.error.code]).toEqual([422, 'FILE_TOO_LARGE']);
  const whole = await getRaw(files('/download', q('/big.log')));
  expect([whole.status, whole.bytes.length, whole.headers.get('accept-ranges')]).toEqual([200, 5000, 'bytes']);
  const part = await getRaw(files('/download', q('/big.log')), { range: 'bytes=0-4' });
  expect([part.status, part.bytes.toString(), part.headers.get('content-range')]).toEqual([206, 'START', 'bytes 0-4/5000']);
  const tail = await getRaw(files('/download', q('/big.log')), { range: 'bytes=4998-' });
  expect([tail.status, tail.bytes.length, tail.headers.get('content-range')]).toEqual([206, 2, 'bytes 4998-4999/5000']);
  // a range past the end is ignored: the whole file, 200 (the API's statuses do not include 416)
  const past = await getRaw(files('/download', q('/big.log')), { range: 'bytes=9000-' });
  expect([past.status, past.bytes.length, past.headers.get('content-range')]).toEqual([200, 5000, null]);
  const backwards = await getRaw(files('/download', q('/big.log')), { range: 'bytes=10-5' });
  expect([backwards.status, backwards.bytes.length]).toEqual([200, 5000]);
  expect((await h.request('GET', files('', 'path=/nope'))).status).toBe(404);
  const escape = await h.request('GET', files('', 'path=../..'));
  expect([escape.status, escape.body.error.code]).toEqual([422, 'INVALID_PATH']);
});

test('the disk limit stops a write half way and leaves nothing; so does a write cut off by the client', async () => {
  const dir = path.join(h.dataDir, 'agent', 'servers', id);
  async function* mib(n: number) {
    for (let i = 0; i < n; i++) yield Buffer.alloc(256 * 1024, i);
  }
  const over = await put('/huge.bin', () => mib(12)); // 3 MiB into a 1 MiB server
  expect(over.status).toBe(422);
  expect(over.body.error.code).toBe('DISK_LIMIT');
  const cut = await put('/cut.bin', () => mib(2), { abortAfter: 256 * 1024 });
  expect(cut.status).toBe(0);
  // the worker notices the cut connection: no temporary file and no half file stay
  for (let i = 0; i < 100 && readdirSync(dir).some((n) => n.startsWith('.hostpanel-tmp-')); i++) await sleep(50);
  expect(readdirSync(dir).filter((n) => n !== 'big.log')).toEqual([]);
});

test('a file written over twice in a row counts once against the disk limit', async () => {
  // 400 KiB three times into a server of 1 MiB of its own, each within the budget's 5 s between
  // measurements (each write needs room for its new bytes beside the old file until the rename): the
  // space of the file a write replaces is given back once it is replaced
  const server = newId();
  await createServer(h, specFor('shell-command', server, { disk: 1 }, { COMMAND: 'sleep 1000' }));
  const statuses = [];
  for (let i = 1; i <= 3; i++) statuses.push((await put('/twice.bin', Buffer.alloc(400 * 1024, i), { server })).status);
  expect(statuses).toEqual([201, 200, 200]);
});

test('writes at once share the free space: a small save goes through while an upload streams, and together they stay within the limit', async () => {
  // each write used to reserve all the free space while it ran: any other write then failed with
  // DISK_LIMIT (an SFTP client with a file open, an upload in the Files tab and an editor's save)
  const server = newId();
  await createServer(h, specFor('shell-command', server, { disk: 1 }, { COMMAND: 'sleep 1000' }));
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  async function* slow() {
    yield Buffer.alloc(300 * 1024, 1);
    await held;
    yield Buffer.alloc(300 * 1024, 2);
  }
  const upload = put('/upload.bin', slow, { server });
  await sleep(300); // the first 300 KiB are on their way
  const save = await put('/server.properties', Buffer.from('motd=hello\n'), { server });
  expect(save.status).toBe(201);
  // a second write that would take the upload's share of the disk is refused; the upload is not
  const greedy = await put('/greedy.bin', Buffer.alloc(800 * 1024, 3), { server });
  expect([greedy.status, greedy.body?.error?.code]).toEqual([422, 'DISK_LIMIT']);
  release();
  expect((await upload).status).toBe(201);
  const listed = await h.request('GET', files('', 'path=/', server));
  expect(listed.body.data.map((e: any) => [e.name, e.size])).toEqual([['server.properties', 11], ['upload.bin', 600 * 1024]]);
});

test('property: writes at once never pass the limit together, what fits goes through, and nothing is left held', async () => {
  const server = newId();
  await createServer(h, specFor('shell-command', server, { disk: 1 }, { COMMAND: 'sleep 1000' }));
  const dir = path.join(h.dataDir, 'agent', 'servers', server);
  const KIB = 1024;
  async function* chunks(size: number, fill: number) {
    for (let sent = 0; sent < size; sent += 64 * KIB) {
      yield Buffer.alloc(Math.min(64 * KIB, size - sent), fill);
      await sleep(1);
    }
  }
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 2, maxLength: 5 }), async (sizesKib) => {
      // each run in a folder of its own, deleted at the end: a failed run leaves nothing to the next
      const folder = `/run${++run}`;
      expect((await h.request('POST', files('/directory', '', server), { path: folder })).status).toBe(201);
      try {
        const answers = await Promise.all(sizesKib.map((kib, i) => put(`${folder}/w${i}.bin`, () => chunks(kib * KIB, i), { server })));
        expect(answers.filter((a) => a.status !== 201 && a.body?.error?.code !== 'DISK_LIMIT')).toEqual([]);
        const written = answers.map((a, i) => (a.status === 201 ? sizesKib[i]! * KIB : 0));
        // together within the limit as it counts them: whole blocks, the run's folder one too
        expect(written.reduce((s, n) => s + (n ? footprint(n) : 0), ENTRY_BYTES)).toBeLessThanOrEqual(1024 * KIB);
        // what fits with room to spare (blocks, the folder's own entries) all goes through
        if (sizesKib.reduce((s, n) => s + n + 4, 0) <= 900) expect(answers.map((a) => a.status)).toEqual(sizesKib.map(() => 201));
        // a write cut off for the disk is answered at once; the worker drops its temporary file as it notices
        await waitFor(() => !readdirSync(path.join(dir, folder)).some((n) => n.startsWith('.hostpanel-tmp-')), 'the temporary files dropped');
      } finally {
        expect((await h.request('POST', files('/delete', '', server), { paths: [folder] })).status).toBe(204);
      }
      // nothing stays held: a write of 900 KiB goes through after each run
      expect((await put('/after.bin', Buffer.alloc(900 * KIB, 9), { server })).status).toBe(201);
      expect((await h.request('POST', files('/delete', '', server), { paths: ['/after.bin'] })).status).toBe(204);
    }),
    { numRuns: 15 },
  );
}, 120_000);

test('the limit counts what files take on disk: tiny files at once stay within it, and with no block left an empty file or a folder is refused', async () => {
  // each write was charged its bytes, while the disk is counted in blocks (4 KiB an entry at least):
  // 600 one-byte files at once passed the limit, and empty files and folders were never refused
  const server = newId();
  await createServer(h, specFor('shell-command', server, { disk: 1 }, { COMMAND: 'sleep 1000' }));
  const dir = path.join(h.dataDir, 'agent', 'servers', server);
  expect((await put('/fill.bin', Buffer.alloc(960 * 1024, 1), { server })).status).toBe(201);
  const tiny = await Promise.all(Array.from({ length: 600 }, (_, i) => put(`/t${i}.txt`, Buffer.from('x'), { server })));
  expect(tiny.filter((a) => a.status !== 201 && a.body?.error?.code !== 'DISK_LIMIT')).toEqual([]);
  const made = tiny.filter((a) => a.status === 201).length;
  expect(made).toBeGreaterThan(0);
  expect(await diskUsage(dir)).toBeLessThanOrEqual(1024 * 1024);
  const room = Math.floor((1024 * 1024 - (await diskUsage(dir))) / ENTRY_BYTES);
  for (let i = 0; i < room; i++) expect((await put(`/more${i}.txt`, Buffer.alloc(0), { server })).status).toBe(201);
  const empty = await put('/empty.txt', Buffer.alloc(0), { server });
  expect([empty.status, empty.body?.error?.code]).toEqual([422, 'DISK_LIMIT']);
  const folder = await h.request('POST', files('/directory', '', server), { path: '/folder' });
  expect([folder.status, folder.body?.error?.code]).toEqual([422, 'DISK_LIMIT']);
  expect(readdirSync(dir)).not.toContain('folder');
}, 60_000);

test('a refused write answers, reads and drops the rest of the body, and leaves the connection usable', async () => {
  // closing with unread bytes resets the connection, and the reset can beat the answer to the panel
  const agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
  const url = files('/contents', q('/huge.bin'));
  const send = (method: string, path: string, body?: Buffer) =>
    new Promise<{ status: number; reused: boolean; connection: string | undefined }>((resolve, reject) => {
      const req = httpRequest(h.base + path, { method, agent, headers: { authorization: signRequest(h.nodeId, h.nodeKey, method, path, body ? STREAMED_BODY : '') } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, reused: req.reusedSocket, connection: res.headers.connection }));
      });
      req.on('error', reject);
      req.end(body);
    });
  try {
    const refused = await send('PUT', url, Buffer.alloc(3 * 1024 * 1024, 1));
    expect(refused).toEqual({ status: 422, reused: false, connection: 'keep-alive' });
    const next = await send('GET', files('', 'path=/'));
    expect(next).toEqual({ status: 200, reused: true, connection: 'keep-alive' });
  } finally {
    agent.destroy();
  }
});

test('a streamed write needs a valid signature, and other routes do not accept the streamed marker', async () => {
  const url = files('/contents', q('/x'));
  const bad = await fetch(h.base + url, { method: 'PUT', headers: { authorization: signRequest(h.nodeId, Buffer.alloc(32, 1), 'PUT', url, STREAMED_BODY) }, body: 'x' });
  expect(bad.status).toBe(401);
  const rename = files('/rename');
  const marker = await fetch(h.base + rename, { method: 'POST', headers: { authorization: signRequest(h.nodeId, h.nodeKey, 'POST', rename, STREAMED_BODY), 'content-type': 'application/json' }, body: JSON.stringify({ from: '/big.log', to: '/stolen' }) });
  expect(marker.status).toBe(401);
});
