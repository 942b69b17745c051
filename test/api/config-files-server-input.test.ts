/**
 * A blueprint's configuration files against what a server's user controls: its variables and its
 * files. A variable with a line break adds no line of its own to a file (not even to one the user may
 * not edit); a file shaped to be slow to parse does not hold the node agent, whose other servers go
 * on answering, and is left as it is with a console line while the start goes on.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { agentPaths, serverDir } from '../../src/agent/paths.js';
import { createRecordedServer, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let admin: string;
let user: string;
let nodeId: string;
const consoleLines: Record<string, string[]> = {};
const unsubscribes: (() => void)[] = [];

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 2 });
  admin = (await p.admin()).token;
  user = (await p.newUser('config files user')).token;
  nodeId = await localNodeId(p, admin);
}, 60_000);
afterAll(async () => {
  unsubscribes.forEach((u) => u());
  await p?.stop();
}, 60_000);

async function blueprint(key: string, extra: Record<string, unknown>): Promise<string> {
  const r = await p.request('POST', '/api/v1/admin/blueprints', { token: admin, body: { key, name: key, startup: 'sleep 60', stop: 'SIGTERM', ready: null, ...extra } });
  expect(r.status).toBe(201);
  return r.body.data.id;
}

async function createServer(blueprintId: string): Promise<string> {
  const { id, lines, stop } = await createRecordedServer(p, user, { name: 'config files', nodeId, blueprintId, memory: 96, cpu: 50, disk: 256 });
  consoleLines[id] = lines;
  unsubscribes.push(stop);
  return id;
}

const fileOf = (id: string, file: string) => readFileSync(path.join(serverDir(agentPaths(p.config.dataDir), id), file), 'utf8');
const consoleSays = (id: string, text: string) => until(() => consoleLines[id]!.some((l) => l.includes(text)), 10_000, `"${text}" in the console`);
const kill = async (id: string) => {
  expect((await p.request('POST', `/api/v1/servers/${id}/kill`, { token: admin })).status).toBe(200);
  await waitForStatus(p, admin, id, 'offline');
};

test('a variable with a line break is not written into any file: its key is skipped with a console line, and the start goes on', async () => {
  const find = { motd: '{{env.MOTD}}', port: '{{server.build.default.port}}' };
  const id = await createServer(
    await blueprint('config-files-one-line', {
      fileDenylist: ['server.properties', 'murmur.ini'],
      variables: [
        { key: 'SERVER_PORT', default: '27001', rules: 'required|integer' },
        { key: 'MOTD', default: 'hello', rules: 'required|string|max:200' },
      ],
      configFiles: [
        { file: 'server.properties', parser: 'properties', find },
        { file: 'murmur.ini', parser: 'ini', find: { 'Server.welcometext': '{{server.build.env.MOTD}}', 'Server.port': '{{server.build.default.port}}' } },
        { file: 'motd.txt', parser: 'file', find: { 'motd=': 'motd={{env.MOTD}}' } },
        { file: 'app.yml', parser: 'yaml', find },
      ],
    }),
  );
  const put = await p.request('PUT', `/api/v1/servers/${id}/startup`, { token: user, body: { variables: { MOTD: 'hi\nenable-rcon=true\r\n[admin]\nrcon.password=owned' } } });
  expect(put.status).toBe(200);
  expect((await p.request('PUT', `/api/v1/servers/${id}/files/contents?path=%2Fmotd.txt`, { token: user, raw: 'motd=old\n', headers: { 'content-type': 'text/plain' } })).status).toBe(200);
  expect((await p.request('POST', `/api/v1/servers/${id}/start`, { token: user })).status).toBe(200);
  await waitForStatus(p, admin, id, 'running');
  expect(fileOf(id, 'server.properties')).toBe('port=27001\n');
  expect(fileOf(id, 'murmur.ini')).toBe('[Server]\nport=27001\n');
  expect(fileOf(id, 'motd.txt')).toBe('motd=old\n');
  expect(fileOf(id, 'app.yml')).toBe('port: 27001\n');
  for (const [file, key] of [['server.properties', 'motd'], ['murmur.ini', 'Server.welcometext'], ['motd.txt', 'motd='], ['app.yml', 'motd']]) {
    await consoleSays(id, `Configuration file ${file}: ${key} is not written: its value with the placeholders filled in must be one line of at most 4096 characters`);
  }
  await kill(id);
}, 60_000);

test('a variable with a line break of YAML 1.1 readers (U+2028) adds no key; a last backslash does not swallow the next properties line; {{env.constructor}} is empty', async () => {
  const id = await createServer(
    await blueprint('config-files-plain-text', {
      fileDenylist: ['server.properties', 'app.yml'],
      variables: [
        { key: 'MOTD', default: 'hello', rules: 'required|string|max:200' },
        { key: 'TAIL', default: 'x', rules: 'required|string|max:200' },
      ],
      configFiles: [
        { file: 'app.yml', parser: 'yaml', find: { motd: '{{env.MOTD}}', 'online-mode': 'true' } },
        { file: 'server.properties', parser: 'properties', find: { motd: '{{env.TAIL}}', 'white-list': 'true', proto: '{{env.constructor}}' } },
      ],
    }),
  );
  // SnakeYAML and PyYAML end a line at U+2028: written as a plain scalar, it made keys of its own
  const put = await p.request('PUT', `/api/v1/servers/${id}/startup`, { token: user, body: { variables: { MOTD: 'hi\u2028online-mode:\u2028 false', TAIL: 'owned\\' } } });
  expect(put.status).toBe(200);
  expect((await p.request('POST', `/api/v1/servers/${id}/start`, { token: user })).status).toBe(200);
  await waitForStatus(p, admin, id, 'running');
  expect(fileOf(id, 'app.yml')).toBe('online-mode: true\n');
  await consoleSays(id, 'Configuration file app.yml: motd is not written: its value with the placeholders filled in must be one line');
  // java.util.Properties reads `owned\\` as `owned\` and white-list as its own line
  expect(fileOf(id, 'server.properties')).toBe('motd=owned\\\\\nproto=\nwhite-list=true\n');
  await kill(id);
}, 60_000);

test('a server\'s file that is slow to parse does not hold the node agent: the start answers, another server answers meanwhile, and the file is left as it is', async () => {
  const bp = await blueprint('config-files-slow-file', { configFiles: [{ file: 'config.yml', parser: 'yaml', find: { port: '1' } }] });
  const [id, other] = [await createServer(bp), await createServer(bp)];
  expect((await p.request('POST', `/api/v1/servers/${other}/start`, { token: user })).status).toBe(200);
  await waitForStatus(p, admin, other, 'running');
  expect(fileOf(other, 'config.yml')).toBe('port: 1\n');
  // 700 000 flow sequences opened: the yaml parser takes seconds over them, far more than a start's time for edits
  const hostile = 'port: ' + '['.repeat(700_000) + '\n';
  const put = await p.request('PUT', `/api/v1/servers/${id}/files/contents?path=%2Fconfig.yml`, { token: user, raw: hostile, headers: { 'content-type': 'text/plain' } });
  expect(put.status).toBe(200);
  const [start, meanwhile] = await Promise.all([
    p.request('POST', `/api/v1/servers/${id}/start`, { token: user }),
    p.request('GET', `/api/v1/servers/${other}/files?path=%2F`, { token: user }),
  ]);
  expect(start.status).toBe(200);
  expect(meanwhile.status).toBe(200);
  await waitForStatus(p, admin, id, 'running');
  await consoleSays(id, 'Configuration file config.yml is not changed: it takes too long to edit');
  expect(fileOf(id, 'config.yml')).toBe(hostile);
  await kill(id);
  await kill(other);
}, 90_000);
