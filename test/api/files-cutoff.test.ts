/**
 * Writes and uploads that the client cuts off at any point (fast-check picks the route, how many bytes
 * go out and how long the client waits before it goes): the panel keeps answering, and the node is
 * left with neither the file nor a temporary one. Real HTTP, the local node agent, real files. (It
 * found two requests starting the server's file worker at once: test/agent/files-http.test.ts.)
 */
import { request as httpRequest } from 'node:http';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { blueprintsByKey, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let token: string;
let serverId: string;
let dir: string;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, rateLimits: { general: 100_000, auth: 100_000, admin: 100_000 } });
  const admin = await p.admin();
  const owner = await p.newUser('owner');
  token = owner.token;
  const [nodeId, bps] = await Promise.all([localNodeId(p, admin.token), blueprintsByKey(p, token)]);
  const r = await p.request('POST', '/api/v1/servers', { token, body: { name: 'cut-offs', nodeId, blueprintId: bps['shell-command'].id, memory: 128, cpu: 50, disk: 128, variables: { COMMAND: 'exec sleep 600' } } });
  serverId = r.body.data.id;
  await waitForStatus(p, token, serverId, 'offline');
  dir = path.join(p.config.dataDir, 'agent', 'servers', serverId);
}, 90_000);
afterAll(async () => {
  await p?.stop();
}, 60_000);

const BOUNDARY = 'cut-off';
const HEAD = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="f"; filename="up.bin"\r\n\r\n`;

/** Sends the start of a write (`put`) or an upload of 8 MiB, `sent` bytes of it, then goes away after `waitMs`. */
function cutOff(route: 'put' | 'upload', sent: number, waitMs: number): Promise<void> {
  const url = route === 'put' ? `/api/v1/servers/${serverId}/files/contents?path=/put.bin` : `/api/v1/servers/${serverId}/files/upload?path=/`;
  const headers: Record<string, string> =
    route === 'put' ? { 'content-length': String(8 * 1024 * 1024) } : { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(HEAD.length + 8 * 1024 * 1024) };
  const body = route === 'put' ? Buffer.alloc(sent, 1) : Buffer.concat([Buffer.from(HEAD), Buffer.alloc(sent, 1)]).subarray(0, sent);
  return new Promise<void>((resolve) => {
    const req = httpRequest(p.url + url, { method: route === 'put' ? 'PUT' : 'POST', headers: { authorization: `Bearer ${token}`, ...headers } });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.write(body, () => setTimeout(() => req.destroy(), waitMs));
  });
}

const leftovers = () => readdirSync(dir).filter((n) => n.startsWith('.hostpanel-tmp-') || n === 'put.bin' || n === 'up.bin');

test('a write or an upload cut off anywhere leaves nothing behind, and the panel keeps answering', async () => {
  await fc.assert(
    fc.asyncProperty(fc.constantFrom<'put' | 'upload'>('put', 'upload'), fc.integer({ min: 0, max: 3 * 1024 * 1024 }), fc.integer({ min: 0, max: 150 }), async (route, sent, waitMs) => {
      await cutOff(route, sent, waitMs);
      await until(() => leftovers().length === 0, 10_000, `nothing left after a ${route} cut off at ${sent} bytes`);
      const list = await p.request('GET', `/api/v1/servers/${serverId}/files?path=/`, { token });
      expect([list.status, list.status === 200 ? null : list.body]).toEqual([200, null]);
    }),
    { numRuns: 24 },
  );
  // and a whole write still goes through afterwards
  const w = await p.request('PUT', `/api/v1/servers/${serverId}/files/contents?path=/whole.txt`, { token, raw: 'whole', headers: { 'content-type': 'application/octet-stream' } });
  expect(w.status).toBe(200);
  // (a cut-off write may reach the node after the check above found nothing: it leaves nothing either)
  await until(() => leftovers().length === 0, 10_000, 'nothing left at the end');
}, 120_000);
