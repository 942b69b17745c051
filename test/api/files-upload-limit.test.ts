/**
 * A multipart upload that the disk limit stops half way is answered at once with its error (422
 * DISK_LIMIT), while the client is still sending: the answer waited for the whole body, which the
 * failed part's stream held up, and the client got its connection reset after the 60 s idle limit.
 */
import { randomBytes } from 'node:crypto';
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
  const r = await fetch(`${p.url}/api/v1/servers/${serverId}/files/upload?path=/`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const body = (await r.json()) as { error?: { code: string } };
  expect([r.status, body.error?.code]).toEqual([422, 'DISK_LIMIT']);
  expect(readdirSync(path.join(p.config.dataDir, 'agent', 'servers', serverId)).sort()).toEqual(['first.txt']);
}, 120_000);
