/**
 * How long a request's body may take (src/shared/body-time.ts), with a real panel, local node agent
 * and files, the limit set to 1.5 s here (60 s by default): an upload may take as long as it needs
 * while its bytes keep coming (a minute's limit on the whole request cut off every upload slower than
 * that, with "the node cannot be reached"), one that stalls is cut off and leaves nothing, and any
 * other body must still arrive whole in time.
 */
import { Agent, request as httpRequest } from 'node:http';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { blueprintsByKey, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

const LIMIT_MS = 1_500;
let p: TestPlatform;
let token: string;
let serverId: string;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, bodyTimeoutMs: LIMIT_MS });
  const admin = await p.admin();
  const owner = await p.newUser('owner');
  token = owner.token;
  const [nodeId, bps] = await Promise.all([localNodeId(p, admin.token), blueprintsByKey(p, token)]);
  const r = await p.request('POST', '/api/v1/servers', { token, body: { name: 'slow line', nodeId, blueprintId: bps['shell-command'].id, memory: 64, cpu: 10, disk: 128 } });
  serverId = r.body.data.id;
  await waitForStatus(p, token, serverId, 'offline');
}, 90_000);
afterAll(async () => p?.stop(), 60_000);

const F = (sub: string, query: string) => `${p.url}/api/v1/servers/${serverId}/files${sub}?${query}`;
const serverDir = () => path.join(p.config.dataDir, 'agent', 'servers', serverId);

/** Sends a request's body in `chunks`, each after `gapMs`; resolves with the answer (status and body), or null when the connection was cut. */
function slowRequest(method: string, url: string, headers: Record<string, string>, chunks: (string | Buffer)[], gapMs: number): Promise<{ status: number; body: string } | null> {
  let timer: NodeJS.Timeout | undefined;
  return new Promise<{ status: number; body: string } | null>((resolve) => {
    const req = httpRequest(url, { method, headers: { authorization: `Bearer ${token}`, ...headers } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
      res.on('error', () => resolve(null));
    });
    req.on('error', () => resolve(null));
    let i = 0;
    const next = () => {
      if (req.destroyed) return;
      if (i === chunks.length) return void req.end();
      req.write(chunks[i++]);
      timer = setTimeout(next, gapMs);
    };
    next();
  }).finally(() => clearTimeout(timer));
}

test('an upload taking three times the limit goes through while its bytes keep coming', async () => {
  const b = 'slow-multipart';
  const chunks = [`--${b}\r\nContent-Disposition: form-data; name="f"; filename="slow.bin"\r\n\r\n`, ...Array.from({ length: 15 }, () => Buffer.alloc(1024, 7)), `\r\n--${b}--\r\n`];
  const started = Date.now();
  const answer = await slowRequest('POST', F('/upload', 'path=/'), { 'content-type': `multipart/form-data; boundary=${b}` }, chunks, 300);
  expect(Date.now() - started).toBeGreaterThan(3 * LIMIT_MS);
  expect(answer?.status).toBe(201);
  expect(JSON.parse(answer!.body).data).toEqual([expect.objectContaining({ path: '/slow.bin', size: 15 * 1024 })]);
  // and a raw write (the editor's save, PUT /contents) the same way
  const raw = await slowRequest('PUT', F('/contents', 'path=/slow.txt'), { 'content-length': String(15 * 100), 'content-type': 'application/octet-stream' }, Array.from({ length: 15 }, () => 'x'.repeat(100)), 300);
  expect(raw?.status).toBe(200); // a new file by PUT is a 200, as documented
});

test('an upload that stalls for the limit is cut off and leaves nothing behind', async () => {
  const b = 'stalled-multipart';
  const answer = await slowRequest('POST', F('/upload', 'path=/'), { 'content-type': `multipart/form-data; boundary=${b}` }, [`--${b}\r\nContent-Disposition: form-data; name="f"; filename="stalled.bin"\r\n\r\n`, Buffer.alloc(4096, 1)], 4 * LIMIT_MS);
  if (answer) {
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error.message).toMatch(/its body stopped arriving/);
  }
  await until(() => !readdirSync(serverDir()).some((n) => n.startsWith('.hostpanel-tmp-') || n === 'stalled.bin') || null, 10_000, 'nothing left of the stalled upload');
});

test('any other body must arrive whole within the limit', async () => {
  const body = JSON.stringify({ path: '/dripped' });
  const answer = await slowRequest('POST', F('/directory', ''), { 'content-type': 'application/json', 'content-length': String(body.length) }, body.split(''), 200);
  expect(answer?.status).toBe(400);
  expect(JSON.parse(answer!.body).error).toEqual({ code: 'BAD_REQUEST', message: expect.stringMatching(/not received in time/), details: {} });
  expect(readdirSync(serverDir())).not.toContain('dripped');
});

test('a connection kept alive after a refused upload still closes once idle (its keep-alive timer is left alone)', async () => {
  // the body's end, read after the refusal was answered, cleared the socket's timer: Node's keep-alive
  // timer by then, so the idle connection was never closed
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const closed = await new Promise<Promise<void>>((resolve, reject) => {
      const req = httpRequest(F('/contents', 'path=%2F..%2Fout.txt'), { method: 'PUT', agent, headers: { authorization: `Bearer ${token}`, 'content-length': String(256 * 1024) } }, (res) => {
        res.resume();
        res.on('end', () => resolve(new Promise<void>((r) => req.socket!.once('close', () => r()))));
      });
      req.on('error', reject);
      req.end(Buffer.alloc(256 * 1024, 1));
    });
    const started = Date.now();
    await Promise.race([closed, new Promise((_, reject) => setTimeout(() => reject(new Error('the idle connection was never closed')), 15_000))]);
    expect(Date.now() - started).toBeLessThan(15_000);
  } finally {
    agent.destroy();
  }
}, 30_000);
