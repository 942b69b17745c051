/**
 * A multipart upload that the disk limit stops half way is answered at once with its error (422
 * DISK_LIMIT), while the client is still sending: the answer waited for the whole body, which the
 * failed part's stream held up, and the client got its connection reset after the 60 s idle limit.
 *
 * The upload goes on a connection of its own: building a 150 MiB form holds this process's event
 * loop for seconds on a loaded machine, and a pooled connection idle for about the server's
 * keep-alive time (5 s) could be reused by the client and closed by the server's overdue keep-alive
 * timer in the same moment (a reset before any answer, seen in CI), which is HTTP keep-alive's race,
 * not the upload's.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { Readable } from 'node:stream';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { blueprintsByKey, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

const MiB = 1024 * 1024;
let p: TestPlatform;
let token: string;
let serverId: string;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0 });
  const admin = await p.admin();
  const owner = await p.newUser('owner');
  token = owner.token;
  const bps = await blueprintsByKey(p, token);
  const made = await p.request('POST', '/api/v1/servers', { token, body: { name: 'small', nodeId: await localNodeId(p, admin.token), blueprintId: bps['shell-command'].id, memory: 64, cpu: 50, disk: 128, variables: { COMMAND: 'exec sleep 600' } } });
  serverId = made.body.data.id;
  await waitForStatus(p, token, serverId, 'offline');
}, 120_000);
afterAll(async () => {
  await p?.stop();
}, 60_000);

test('a part past the disk limit answers 422 DISK_LIMIT before the body ends; the part before it stays, nothing of it does', async () => {
  const form = new FormData();
  form.append('files', new Blob([Buffer.from('first')]), 'first.txt');
  form.append('files', new Blob([randomBytes(150 * MiB)]), 'over.bin');
  form.append('files', new Blob([Buffer.from('after')]), 'after.txt');
  const r = await postOnFreshConnection(`${p.url}/api/v1/servers/${serverId}/files/upload?path=/`, form);
  expect([r.status, r.body.error?.code]).toEqual([422, 'DISK_LIMIT']);
  expect(readdirSync(path.join(p.config.dataDir, 'agent', 'servers', serverId)).sort()).toEqual(['first.txt']);
}, 120_000);

/** POSTs `form` on a new connection (no keep-alive pool) and reads the JSON answer. */
async function postOnFreshConnection(url: string, form: FormData): Promise<{ status: number; body: { error?: { code: string } } }> {
  const encoded = new Response(form);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: false, headers: { authorization: `Bearer ${token}`, 'content-type': encoded.headers.get('content-type')! } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      res.on('error', reject);
    });
    // the panel answers before the body ends; a write error after that is not the test's concern
    req.on('error', reject);
    Readable.fromWeb(encoded.body! as never).pipe(req);
  });
}
