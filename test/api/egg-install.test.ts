/**
 * An imported egg's install script runs on the local node agent: with the egg's entrypoint (bash),
 * as the server's own user (not root), with the server's directory at /mnt/server during install and
 * at /home/container at run time, and Pterodactyl's variables. A script that writes outside the
 * server's directory fails. The import names the programs the script calls that this machine lacks.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { agentPaths, serverDir } from '../../src/agent/paths.js';
import { privateTmpAvailable } from '../../src/agent/environment/sandbox.js';
import { localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

/** The mapping needs a private mount namespace: root with unshare and setpriv. */
const sandboxed = privateTmpAvailable();
if (!sandboxed) console.warn('[tests] SKIPPED: test/api/egg-install.test.ts needs root with unshare and setpriv (a private mount namespace)');
const testSandboxed = sandboxed ? test : test.skip;

let p: TestPlatform;
let admin: string;
let nodeId: string;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 2 });
  admin = (await p.admin()).token;
  nodeId = await localNodeId(p, admin);
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

/** A bash script (`[[ ]]` and arrays: dash, the node's /bin/sh, fails on them). */
const INSTALL = [
  '#!/bin/bash',
  'parts=("$(id -u)" "$SERVER_MEMORY" "$P_SERVER_UUID")',
  'if [[ -d /mnt/server ]]; then cd /mnt/server; fi',
  'echo "${parts[*]}" > /mnt/server/installed.txt',
  'if [[ -n "$NEVER" ]]; then hostpanel-no-such-tool --help | curl -s example.invalid; fi',
  'echo installed',
].join('\r\n');

const egg = (name: string, script: string, startup = 'sleep 60') => ({
  meta: { version: 'PTDL_v2' },
  name,
  startup,
  config: { files: '{}', startup: '{"done": "never printed"}', logs: '{}', stop: '^C' },
  scripts: { installation: { script, container: 'ghcr.io/example/installer:debian', entrypoint: 'bash' } },
  variables: [],
});

async function importEgg(body: unknown): Promise<{ id: string; warnings: { field: string; message: string }[]; data: any }> {
  const r = await p.request('POST', '/api/v1/admin/blueprints/import', { token: admin, body });
  expect(r.status).toBe(201);
  return { id: r.body.data.id, warnings: r.body.data.warnings, data: r.body.data };
}

async function createServer(blueprintId: string): Promise<string> {
  const r = await p.request('POST', '/api/v1/servers', { token: admin, body: { name: 'egg install', nodeId, blueprintId, memory: 96, cpu: 50, disk: 128 } });
  expect(r.status).toBe(201);
  return r.body.data.id;
}

const dirOf = (id: string) => serverDir(agentPaths(p.config.dataDir), id);
const readFile = (id: string, file: string) => p.request('GET', `/api/v1/servers/${id}/files/contents?path=${encodeURIComponent(file)}`, { token: admin });

test('the import keeps the script and its entrypoint, and names the programs this machine lacks', async () => {
  const { data, warnings } = await importEgg(egg('Install egg', INSTALL));
  expect(data.install).toBe(INSTALL.replace(/\r\n/g, '\n'));
  expect(data.installShell).toBe('bash');
  expect(warnings).toContainEqual({
    field: 'scripts.installation.script',
    message: 'the script calls hostpanel-no-such-tool, which this machine lacks; install it on the nodes that run this blueprint',
  });
  // curl is named only where this machine lacks it; `id`, `echo` and `cd` never are
  expect(warnings.filter((w) => /the script calls (id|echo|cd|if),/.test(w.message))).toEqual([]);
  expect(warnings.some((w) => w.field === 'scripts.installation' && /not as root in ghcr\.io\/example\/installer:debian/.test(w.message))).toBe(true);
});

testSandboxed(
  'the script runs with bash as the server\'s user, /mnt/server and /home/container are the server\'s directory',
  async () => {
    const { id: blueprintId } = await importEgg(egg('Install egg run', INSTALL, 'touch /home/container/ran.txt; sleep 60'));
    const id = await createServer(blueprintId);
    await waitForStatus(p, admin, id, 'offline');
    const dir = dirOf(id);
    const file = path.join(dir, 'installed.txt');
    const owner = statSync(dir).uid;
    expect(owner).not.toBe(0);
    expect(statSync(file).uid).toBe(owner);
    expect((await readFile(id, '/installed.txt')).text).toBe(`${owner} 96 ${id}\n`);
    expect(existsSync('/mnt/server/installed.txt')).toBe(false); // written in the namespace only

    expect((await p.request('POST', `/api/v1/servers/${id}/start`, { token: admin })).status).toBe(200);
    await until(async () => (await readFile(id, '/ran.txt')).status === 200, 15_000, 'ran.txt written through /home/container');
    expect(statSync(path.join(dir, 'ran.txt')).uid).toBe(owner);
    expect((await p.request('POST', `/api/v1/servers/${id}/kill`, { token: admin })).status).toBe(200);
    await waitForStatus(p, admin, id, 'offline');
  },
  60_000,
);

test('a script that writes outside the server\'s directory fails', async () => {
  const target = '/etc/hostpanel-test-' + process.pid;
  const { id: blueprintId } = await importEgg(egg('Install egg outside', `#!/bin/bash\nset -e\necho owned > ${target}\n`));
  const id = await createServer(blueprintId);
  await waitForStatus(p, admin, id, 'install_failed');
  expect(existsSync(target)).toBe(false);
}, 60_000);
