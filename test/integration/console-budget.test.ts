/**
 * The panel's CONSOLE_MAX_LINES_PER_SECOND reaches its local agent: a demo server printing more than
 * that in a burst has the rest dropped at the agent, and a reader of the node's console is told how
 * many (`console_skipped`), every line accounted for. Real panel, real agent, real process and socket.
 */
import { loadConfig } from '../../src/config.js';
import { ConsoleClient } from '../support/console-client.js';
import { createLocalDemoServer, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let owner: { token: string };
let serverId: string;

beforeAll(async () => {
  expect(loadConfig({}).consoleMaxLinesPerSecond).toBe(2000);
  expect(() => loadConfig({ CONSOLE_MAX_LINES_PER_SECOND: '0' })).toThrow(/CONSOLE_MAX_LINES_PER_SECOND/);
  const { consoleMaxLinesPerSecond } = loadConfig({ CONSOLE_MAX_LINES_PER_SECOND: '100' });
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 3, consoleMaxLinesPerSecond });
  const admin = await p.admin();
  owner = await p.newUser('Owner');
  serverId = await createLocalDemoServer(p, admin.token, owner.token, 'budget');
  await p.request('POST', `/api/v1/servers/${serverId}/start`, { token: owner.token });
  await waitForStatus(p, owner.token, serverId, 'running');
}, 90_000);

afterAll(async () => {
  await p?.request('POST', `/api/v1/servers/${serverId}/kill`, { token: owner.token });
  await p?.stop();
}, 60_000);

test('lines over the configured budget are dropped at the agent and counted for the reader', async () => {
  const N = 3000;
  const t = await p.request('GET', `/api/v1/servers/${serverId}/console-token`, { token: owner.token });
  const node = await ConsoleClient.connect(t.body.data.socket, t.body.data.token);
  node.send({ type: 'command', data: `spam ${N}` });
  const spam = (): number => node.messages.filter((m) => m.type === 'console_output' && / spam line \d+ #\d+$/.test(m.data.line)).length;
  const skipped = (): number => node.messages.filter((m) => m.type === 'console_skipped').reduce((n, m) => n + m.data.skipped, 0);
  await until(() => spam() + skipped() >= N, 10_000, 'every spam line to be received or counted as skipped');
  expect(spam() + skipped()).toBe(N);
  expect(spam()).toBeGreaterThanOrEqual(50);
  expect(spam()).toBeLessThan(N / 2);
  expect(node.has('console_output', (m) => m.data.stream === 'system' && m.data.line.startsWith('[panel] Output over 100 lines/s: lines are being dropped'))).toBe(true);
  node.close();
}, 60_000);
