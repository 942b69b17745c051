/**
 * An imported egg runs on the local node agent: a startup with shell syntax goes through bash with
 * the variables in the environment (both placeholder forms), never pasted into the script, so a
 * value with shell syntax stays text; `done` makes the server `running`; `^C` (SIGINT) stops it.
 */
import { localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform;
let admin: string;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 2 });
  admin = (await p.admin()).token;
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

const EGG = {
  meta: { version: 'PTDL_v2' },
  name: 'Shell egg',
  startup: 'echo "ready on {{SERVER_PORT}} as ${GREETING}" > marker.txt; cat marker.txt; trap "echo bye; exit 0" INT; while true; do sleep 0.2; done',
  config: { files: '{}', startup: '{"done": "ready on 25565 as "}', logs: '{}', stop: '^C' },
  variables: [{ name: 'Greeting', env_variable: 'GREETING', default_value: 'hello', user_viewable: true, user_editable: true, rules: 'required|string|max:64' }],
};

test('the bash startup runs with the values as environment variables, and stops with SIGINT', async () => {
  const imported = await p.request('POST', '/api/v1/admin/blueprints/import', { token: admin, body: EGG });
  expect(imported.status).toBe(201);
  expect(imported.body.data.startup.startsWith('/bin/bash -c ')).toBe(true);
  expect(imported.body.data.stop).toBe('SIGINT');
  const nodeId = await localNodeId(p, admin);
  const created = await p.request('POST', '/api/v1/servers', {
    token: admin,
    body: { name: 'shell egg', nodeId, blueprintId: imported.body.data.id, memory: 64, cpu: 10, disk: 128, variables: { GREETING: 'x"; touch pwned; echo "' } },
  });
  expect(created.status).toBe(201);
  const id = created.body.data.id;
  await waitForStatus(p, admin, id, 'offline');
  expect((await p.request('POST', `/api/v1/servers/${id}/start`, { token: admin })).status).toBe(200);
  await waitForStatus(p, admin, id, 'running');
  const marker = await p.request('GET', `/api/v1/servers/${id}/files/contents?path=/marker.txt`, { token: admin });
  expect(marker.text).toBe('ready on 25565 as x"; touch pwned; echo "\n');
  const files = await p.request('GET', `/api/v1/servers/${id}/files?path=/`, { token: admin });
  expect(files.body.data.map((f: any) => f.name)).not.toContain('pwned');
  expect((await p.request('POST', `/api/v1/servers/${id}/stop`, { token: admin })).status).toBe(200);
  await waitForStatus(p, admin, id, 'offline');
}, 60_000);
