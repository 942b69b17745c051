/**
 * README.md's "From `npm start` to a running game server", run as written: its shell block (curl and
 * jq, as a user pastes it) against a real panel with its local agent, then its console messages sent
 * on the socket the block prints. Without curl or jq on the machine the test says it was skipped.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { ConsoleClient } from '../support/console-client.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

const section = readFileSync('README.md', 'utf8').split('## From `npm start` to a running game server')[1]!.split('\n## ')[0]!;
const [shell, messages] = [...section.matchAll(/```(?:sh|json)\n([\s\S]*?)```/g)].map((m) => m[1]!);
const tools = ['curl', 'jq'].every((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status === 0);
const maybe = tools ? test : test.skip;
if (!tools) console.warn('test/api/readme-walkthrough.test.ts skipped: curl or jq is not installed');

let p: TestPlatform;
beforeAll(async () => {
  if (tools) p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 5 });
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

maybe('the shell block makes, installs and starts a server, and its console answers the messages shown', async () => {
  const script = shell!
    .replaceAll('http://localhost:8080', p.url)
    .replaceAll('admin@example.com', ADMIN_EMAIL)
    .replaceAll('<printed password>', ADMIN_PASSWORD);
  // the panel answers in this process: the block runs beside it, not blocking it
  const run = await promisify(execFile)('bash', ['-c', `set -o pipefail\n${script}\necho "SRV=$SRV"`], { encoding: 'utf8', timeout: 90_000 });
  expect(run.stderr).toBe('');
  const out = run.stdout.trim().split('\n');
  // step 4's start prints "starting"; step 5 prints the console token's JSON (jq, over several lines)
  expect(out).toContain('"starting"');
  const srv = out.find((l) => l.startsWith('SRV='))!.slice(4);
  const json = run.stdout.slice(run.stdout.lastIndexOf('{\n'), run.stdout.lastIndexOf('}') + 1);
  const ticket = JSON.parse(json) as { token: string; socket: string; expiresAt: string };
  expect(ticket).toEqual({ token: expect.any(String), socket: expect.stringMatching(/^wss?:\/\//), expiresAt: expect.any(String) });

  const status = async () => (await p.request('GET', `/api/v1/servers/${srv}`, { token: (await p.admin()).token })).body.data.status;
  await until(async () => (await status()) === 'running' || null, 60_000, 'the server to be "running", as the block says');
  const sent = messages!.trim().split('\n').map((l) => JSON.parse(l.replace('<token>', ticket.token)) as { type: string; data?: string });
  expect(sent.map((m) => m.type)).toEqual(['auth', 'command', 'power']);
  const ws = await ConsoleClient.open(ticket.socket);
  try {
    ws.send(sent[0]!);
    await ws.waitFor((m) => m.type === 'auth_success');
    ws.send(sent[1]!);
    await ws.waitFor((m) => m.type === 'console_output' && String(m.data?.line).includes('hello'));
    ws.send(sent[2]!);
    await until(async () => (await status()) === 'offline' || null, 60_000, 'the server to stop');
  } finally {
    ws.close();
  }
}, 180_000);
