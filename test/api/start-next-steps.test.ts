/**
 * What a start that cannot go on tells the user to do next:
 * - a startup program that is not on the node (an egg imported without its image) is named as not
 *   installed, with the way out, instead of spawn's bare ENOENT/EACCES; it is no crash (not counted,
 *   not restarted);
 * - a server whose install script failed answers start and restart with what to do, not only
 *   "reinstall" (which runs the same script again).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { createRecordedServer, localNodeId } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { sleep, until } from '../support/wait.js';

let p: TestPlatform;
let admin: string;
let nodeId: string;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0 });
  admin = (await p.admin()).token;
  nodeId = await localNodeId(p, admin);
}, 120_000);
afterAll(async () => {
  await p?.stop();
}, 60_000);

let n = 0;
async function blueprint(body: Record<string, unknown>): Promise<string> {
  const r = await p.request('POST', '/api/v1/admin/blueprints', { token: admin, body: { key: `next-steps-${++n}`, name: `Next steps ${n}`, stop: '^C', ...body } });
  expect(r.status).toBe(201);
  return r.body.data.id;
}

describe('a startup program missing from the node', () => {
  test.each([
    ['a name looked up in the PATH', 'hostpanel-test-program-not-installed -fg', 'hostpanel-test-program-not-installed', /not installed on this node \(not found in the PATH of the server's processes\)/],
    ['a path', '/opt/hostpanel-test-nowhere/program --port 1', '/opt/hostpanel-test-nowhere/program', /not installed on this node \(there is no executable file at that path\)/],
  ])('%s: the console names it as not installed and says what to do; no crash', async (_what, startup, program, detail) => {
    const blueprintId = await blueprint({ startup });
    const srv = await createRecordedServer(p, admin, { name: 'Missing', nodeId, blueprintId, memory: 128, cpu: 50, disk: 128, autoRestart: true });
    try {
      expect((await p.request('POST', `/api/v1/servers/${srv.id}/start`, { token: admin })).status).toBe(200);
      const line = await until(() => srv.lines.find((l) => l.includes('could not be started')), 15_000, 'the start error line');
      expect(line).toContain(`${program} is not installed on this node`);
      expect(line).toMatch(detail);
      expect(line).toMatch(/install it there, or change the server's startup command/);
      expect(line).not.toMatch(/EACCES|ENOENT|spawn/);
      const server = await until(async () => {
        const s = (await p.request('GET', `/api/v1/servers/${srv.id}`, { token: admin })).body.data;
        return s.status === 'offline' && s.lastStopReason ? s : null;
      }, 15_000, 'offline with a reason');
      expect({ reason: server.lastStopReason, crashes: server.crashCount }).toEqual({ reason: 'program_missing', crashes: 0 });
      // not restarted as after a crash
      await sleep(1_500);
      expect(srv.lines.filter((l) => l.includes('could not be started'))).toHaveLength(1);
      expect(srv.lines.some((l) => /Restarting the server/.test(l))).toBe(false);
    } finally {
      srv.stop();
    }
  }, 60_000);
});

test('start and restart of a server whose install failed say what to do next (422 INVALID_STATE)', async () => {
  const blueprintId = await blueprint({ startup: 'sleep 600', install: 'echo "curl: (6) Could not resolve host: api.papermc.io" >&2; exit 6', installShell: 'sh' });
  const owner = await p.newUser('Owner');
  const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'Offline', nodeId, blueprintId, memory: 128, cpu: 50, disk: 128 } });
  expect(r.status).toBe(201);
  const id = r.body.data.id;
  await until(async () => (await p.request('GET', `/api/v1/servers/${id}`, { token: owner.token })).body.data.status === 'install_failed', 30_000, 'install_failed');
  for (const action of ['start', 'restart']) {
    const res = await p.request('POST', `/api/v1/servers/${id}/${action}`, { token: owner.token });
    expect([res.status, res.body.error.code]).toEqual([422, 'INVALID_STATE']);
    expect(res.body.error.message).toBe(
      "The install script failed (its output is in the console): reinstall the server once what the script needs is there, or ask an administrator to fix or clear the blueprint's install script first.",
    );
  }
}, 60_000);

describe('a startup program in the server\'s own files (./start.sh)', () => {
  const marker = `/tmp/hostpanel-next-steps-host-tmp-${process.pid}`;
  beforeAll(() => writeFileSync(marker, 'the host /tmp\n'));
  afterAll(() => rmSync(marker, { force: true }));

  async function serverWith(startup: string, script: string) {
    const srv = await createRecordedServer(p, admin, { name: 'Relative', nodeId, blueprintId: await blueprint({ startup, ready: 'Ready' }), memory: 128, cpu: 50, disk: 128 });
    const F = (sub: string) => `/api/v1/servers/${srv.id}/files${sub}`;
    expect((await p.request('PUT', `${F('/contents')}?path=/start.sh`, { token: admin, raw: script, headers: { 'content-type': 'application/octet-stream' } })).status).toBe(200);
    expect((await p.request('POST', F('/chmod'), { token: admin, body: { path: '/start.sh', mode: '755' } })).status).toBe(200);
    expect((await p.request('POST', `/api/v1/servers/${srv.id}/start`, { token: admin })).status).toBe(200);
    return srv;
  }

  test('runs where `sh start.sh` runs: the same private /tmp (it was found from the agent\'s folder, not the server\'s, and run outside the sandbox)', async () => {
    const script = `#!/bin/sh\nif [ -e ${marker} ]; then echo TMP=host; else echo TMP=private; fi\necho Ready\nexec sleep 30\n`;
    const viaShell = await serverWith('sh start.sh', script);
    const relative = await serverWith('./start.sh', script);
    try {
      const a = await until(() => viaShell.lines.find((l) => l.startsWith('TMP=')), 15_000, 'sh start.sh');
      const b = await until(() => relative.lines.find((l) => l.startsWith('TMP=')), 15_000, './start.sh');
      expect(b).toBe(a);
    } finally {
      for (const s of [viaShell, relative]) {
        await p.request('POST', `/api/v1/servers/${s.id}/kill`, { token: admin });
        s.stop();
      }
    }
  }, 60_000);

  test('one that is there but cannot run (its interpreter is missing) is not called "not installed on this node"', async () => {
    const srv = await serverWith('./start.sh', '#!/opt/hostpanel-no-such-interpreter\necho Ready\n');
    try {
      const server = await until(async () => {
        const s = (await p.request('GET', `/api/v1/servers/${srv.id}`, { token: admin })).body.data;
        return s.status === 'offline' && s.lastStopReason ? s : null;
      }, 15_000, 'offline with a reason');
      expect(server.lastStopReason).not.toBe('program_missing');
      expect(srv.lines.some((l) => l.includes('is not installed on this node'))).toBe(false);
    } finally {
      srv.stop();
    }
  }, 60_000);
});
