/**
 * The cause of a failed install can be read after the fact: the console keeps only the last 150 lines,
 * and no route serves the install log, so docs/blueprints.md says where the log is on the node and who
 * can read it. This checks that what it says is true: the file is where the docs say, holds the whole
 * output (the cause that the console's history lost), and is readable by the agent's user only.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { localNodeId } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let admin: string;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0 });
  admin = (await p.admin()).token;
}, 120_000);
afterAll(async () => {
  await p?.stop();
}, 60_000);

const docs = readFileSync(path.join(__dirname, '../../docs/blueprints.md'), 'utf8').replace(/\s+/g, ' ');

test('docs/blueprints.md says where the install log is, who can read it, and that no route serves it', () => {
  expect(docs).toContain('`<DATA_DIR>/agent/install-logs/<server id>.log`');
  expect(docs).toMatch(/readable by that user only \(the file 0600, its folder 0700\)/);
  expect(docs).toMatch(/No API route, file manager or SFTP session reaches it/);
  expect(docs).toMatch(/the console keeps only its last 150 lines/);
});

test('the install log is where the docs say, with the whole output, readable by its owner only', async () => {
  const bp = await p.request('POST', '/api/v1/admin/blueprints', {
    token: admin,
    body: {
      key: 'chatty-install-docs',
      name: 'Chatty install',
      startup: 'sleep 600',
      stop: '^C',
      installShell: 'sh',
      install: 'echo "ERROR: the licence key CAUSE-1234 was refused"; i=0; while [ $i -lt 400 ]; do echo "progress $i"; i=$((i+1)); done; exit 1',
    },
  });
  expect(bp.status).toBe(201);
  const r = await p.request('POST', '/api/v1/servers', { token: admin, body: { name: 'Chatty', nodeId: await localNodeId(p, admin), blueprintId: bp.body.data.id, memory: 128, cpu: 50, disk: 128 } });
  expect(r.status).toBe(201);
  const id: string = r.body.data.id;
  await until(async () => (await p.request('GET', `/api/v1/servers/${id}`, { token: admin })).body.data.status === 'install_failed', 30_000, 'install_failed');

  const documented = /`(<DATA_DIR>\/agent\/install-logs\/<server id>\.log)`/.exec(docs)![1]!;
  const file = documented.replace('<DATA_DIR>', p.config.dataDir).replace('<server id>', id);
  const log = readFileSync(file, 'utf8');
  expect(log.split('\n')[0]).toBe('ERROR: the licence key CAUSE-1234 was refused');
  expect(log).toContain('progress 399\n');
  expect(log).not.toContain('[panel]');
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
  expect(statSync(file).uid).toBe(process.getuid!());
  // and no route serves it
  const spec = (await p.request('GET', '/api/v1/openapi.json')).body;
  expect(Object.keys(spec.paths).filter((k) => /install-?log/i.test(k))).toEqual([]);
}, 60_000);
