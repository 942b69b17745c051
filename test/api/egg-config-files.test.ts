/**
 * An imported egg's `config.files` on the local node agent: written into the server's files before
 * each start by the server's file worker (its uid, inside its directory), with only the allowed
 * placeholders: a hostile egg's `{{config.token}}` is refused and its key not written. The real Paper
 * egg writes the server's port into server.properties; a server.properties that is a symlink to a
 * file outside the server's directory is not followed.
 */
import { lstatSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { agentPaths, serverDir } from '../../src/agent/paths.js';
import { createRecordedServer, localNodeId, waitForStatus } from '../support/fixtures.js';
import { EGGS_DIR } from '../support/eggs.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

if (!EGGS_DIR) console.warn('[tests] SKIPPED: the Paper tests of test/api/egg-config-files.test.ts need the Pterodactyl eggs in ../shared/eggs/pterodactyl (or EGGS_DIR)');
const withEggs = EGGS_DIR ? test : test.skip;

let p: TestPlatform;
let admin: string;
let nodeId: string;
const consoleLines: Record<string, string[]> = {};
const unsubscribes: (() => void)[] = [];

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 2 });
  admin = (await p.admin()).token;
  nodeId = await localNodeId(p, admin);
}, 60_000);
afterAll(async () => {
  unsubscribes.forEach((u) => u());
  await p?.stop();
}, 60_000);

const HOSTILE_EGG = {
  meta: { version: 'PTDL_v2' },
  name: 'Config files egg',
  startup: 'sleep 60',
  config: {
    startup: '{"done": "never printed"}',
    stop: '^C',
    files: JSON.stringify({
      'game.properties': {
        parser: 'properties',
        find: { port: '{{server.build.default.port}}', memory: '{{server.build.memory}}', motd: 'hi {{env.GREETING}} on {{server.build.default.ip}}', token: '{{config.token}}' },
      },
      'conf/settings.json': { parser: 'json', find: { 'net.port': '{{server.build.default.port}}', 'net.public': 'true', 'net.bind': '{{config.docker.interface}}' } },
      'conf/app.yml': { parser: 'yaml', find: { 'listeners[0].port': '{{server.build.env.SERVER_PORT}}' } },
      'murmur.ini': { parser: 'ini', find: { port: '{{server.build.default.port}}', 'Ice.host': '127.0.0.1' } },
      'plugins.xml': { parser: 'xml', find: { 'a.b': 'c', 'a.*': 'all' } },
      'notes.toml': { parser: 'toml', find: { a: 'b' } },
    }),
  },
  variables: [
    { name: 'Port', env_variable: 'SERVER_PORT', default_value: '27777', user_viewable: true, user_editable: true, rules: 'required|integer|between:1,65535' },
    { name: 'Greeting', env_variable: 'GREETING', default_value: 'hello', user_viewable: true, user_editable: true, rules: 'required|string' },
  ],
};

async function importEgg(body: unknown): Promise<{ data: any; warnings: { field: string; message: string }[] }> {
  const r = await p.request('POST', '/api/v1/admin/blueprints/import', { token: admin, body });
  expect(r.status).toBe(201);
  return { data: r.body.data, warnings: r.body.data.warnings };
}

async function createServer(blueprintId: string, variables: Record<string, string> = {}): Promise<string> {
  const { id, lines, stop } = await createRecordedServer(p, admin, { name: 'config files', nodeId, blueprintId, memory: 96, cpu: 50, disk: 256, variables });
  consoleLines[id] = lines;
  unsubscribes.push(stop);
  return id;
}

const start = async (id: string) => expect((await p.request('POST', `/api/v1/servers/${id}/start`, { token: admin })).status).toBe(200);
const dirOf = (id: string) => serverDir(agentPaths(p.config.dataDir), id);
const readFile = (id: string, file: string) => p.request('GET', `/api/v1/servers/${id}/files/contents?path=${encodeURIComponent(file)}`, { token: admin });
/** A new file's lines, sorted: the database keeps a file's keys in an order of its own. */
const linesOf = (text: string) => text.split('\n').filter(Boolean).sort();
const paperEgg = () => JSON.parse(readFileSync(path.join(EGGS_DIR!, 'egg-paper.json'), 'utf8'));

test('the import keeps the files of known parsers; other parsers, `*` in xml keys and disallowed placeholders are warnings', async () => {
  const { data, warnings } = await importEgg(HOSTILE_EGG);
  expect(data.configFiles.map((f: any) => [f.file, f.parser])).toEqual([
    ['game.properties', 'properties'],
    ['conf/settings.json', 'json'],
    ['conf/app.yml', 'yaml'],
    ['murmur.ini', 'ini'],
    ['plugins.xml', 'xml'],
  ]);
  expect(data.configFiles[4].find).toEqual({ 'a.b': 'c' });
  expect(warnings).toContainEqual({ field: 'config.files.notes.toml.parser', message: 'the parser "toml" is not supported: notes.toml is not changed at start' });
  expect(warnings.find((w) => w.field === 'config.files.plugins.xml.find.a.*')?.message).toMatch(/^an xml key is a dotted path of element names/);
  expect(warnings.find((w) => w.field === 'config.files.game.properties.find.token')?.message).toMatch(/^the placeholder \{\{config\.token\}\} is not allowed/);
  expect(warnings.find((w) => w.field === 'config.files.conf/settings.json.find.net.bind')?.message).toMatch(/\{\{config\.docker\.interface\}\} is not allowed/);
});

test('a malformed entry is a 422 naming config.files.<name>', async () => {
  const bad = (files: unknown) => p.request('POST', '/api/v1/admin/blueprints/import', { token: admin, body: { ...HOSTILE_EGG, config: { ...HOSTILE_EGG.config, files: files } } });
  const noFind = await bad({ 'server.properties': { parser: 'properties' } });
  expect(noFind.status).toBe(422);
  expect(noFind.body.error.details.fields['config.files.server.properties']).toMatch(/`find`/);
  const outside = await bad({ '../../etc/passwd': { parser: 'file', find: { root: 'x' } } });
  expect(outside.status).toBe(422);
  expect(Object.keys(outside.body.error.details.fields)).toEqual(['config.files.../../etc/passwd']);
  const list = await bad({ 'a.json': { parser: 'json', find: { a: ['x'] } } });
  expect(list.body.error.details.fields['config.files.a.json.find.a']).toBe('must be a string');
  // not text (PostgreSQL refuses NUL and lone surrogates: these answered 500), and YAML 1.1's line breaks
  for (const find of [{ 'a\u0000b': 'x' }, { 'a\ud800': 'x' }, { a: 'x\udc00' }, { a: 'x\u2028y: 1' }, { a: 'x\u0085' }]) {
    const r = await bad({ 'a.properties': { parser: 'properties', find } });
    expect([r.status, Object.keys(r.body.error.details.fields)]).toEqual([422, [expect.stringMatching(/^config\.files\.a\.properties\.find\./)]]);
  }
  const created = await p.request('POST', '/api/v1/admin/blueprints', {
    token: admin,
    body: { key: 'config-nul-key', name: 'NUL key', startup: 'sleep 60', stop: 'SIGTERM', configFiles: [{ file: 'a.properties', parser: 'properties', find: { 'k\u0000': 'v' } }] },
  });
  expect(created.status).toBe(422);
});

test('at start, the allowed placeholders are written as the server\'s user; {{config.token}} is refused', async () => {
  const { data } = await importEgg({ ...HOSTILE_EGG, name: 'Config files egg run' });
  const id = await createServer(data.id, { SERVER_PORT: '28123', GREETING: 'friends' });
  writeFileSync(path.join(dirOf(id), 'murmur.ini'), 'database=\nport=1\n[Ice]\nhost=0.0.0.0\n'); // as root: the start makes it the server's
  await start(id);
  await waitForStatus(p, admin, id, 'starting');
  expect(linesOf((await readFile(id, '/game.properties')).text)).toEqual(['memory=96', 'motd=hi friends on 0.0.0.0', 'port=28123']);
  expect(JSON.parse((await readFile(id, '/conf/settings.json')).text)).toEqual({ net: { port: 28123, public: true } });
  expect((await readFile(id, '/conf/app.yml')).text).toBe('listeners:\n  - port: 28123\n');
  expect((await readFile(id, '/murmur.ini')).text).toBe('database=\nport=28123\n[Ice]\nhost=127.0.0.1\n');
  expect((await readFile(id, '/plugins.xml')).text).toBe('<?xml version="1.0" encoding="UTF-8"?>\n<a>\n    <b>c</b>\n</a>\n');
  const owner = statSync(dirOf(id)).uid;
  expect(owner).not.toBe(0);
  expect(statSync(path.join(dirOf(id), 'conf/settings.json')).uid).toBe(owner);
  await until(() => consoleLines[id]!.some((l) => l.includes('token is not written: the placeholder {{config.token}} is not allowed')), 10_000, 'the refusal in the console');
  expect(consoleLines[id]!.some((l) => l.includes('net.bind is not written: the placeholder {{config.docker.interface}} is not allowed'))).toBe(true);
  expect((await p.request('POST', `/api/v1/servers/${id}/kill`, { token: admin })).status).toBe(200);
  await waitForStatus(p, admin, id, 'offline');
}, 60_000);

/** Paper's install script downloads the game: the test servers start without it. */
async function paperBlueprint(): Promise<string> {
  const { data } = await importEgg({ ...paperEgg(), name: `Paper ${Math.random().toString(36).slice(2, 8)}` });
  const patched = await p.request('PATCH', `/api/v1/admin/blueprints/${data.id}`, { token: admin, body: { install: null } });
  expect(patched.status).toBe(200);
  return data.id;
}

withEggs('Paper: server.properties gets the server\'s port at start (before java, which then fails)', async () => {
  const id = await createServer(await paperBlueprint(), { SERVER_PORT: '25991' });
  await start(id);
  await until(async () => (await readFile(id, '/server.properties')).status === 200, 15_000, 'server.properties written');
  expect(linesOf((await readFile(id, '/server.properties')).text)).toEqual(['query.port=25991', 'server-ip=0.0.0.0', 'server-port=25991']);
  // no server.jar: the process ends (or java is missing); either way the server is offline again
  await waitForStatus(p, admin, id, 'offline');
}, 60_000);

withEggs('Paper: a server.properties that links outside the server\'s directory is not followed', async () => {
  const id = await createServer(await paperBlueprint());
  const outside = `/tmp/hostpanel-outside-${process.pid}.properties`;
  writeFileSync(outside, 'server-port=1\n', { mode: 0o666 });
  try {
    symlinkSync(outside, path.join(dirOf(id), 'server.properties'));
    await start(id);
    await until(() => consoleLines[id]!.some((l) => l.includes('Configuration file server.properties is not changed')), 15_000, 'the refusal in the console');
    expect(readFileSync(outside, 'utf8')).toBe('server-port=1\n');
    expect(lstatSync(path.join(dirOf(id), 'server.properties')).isSymbolicLink()).toBe(true);
    await waitForStatus(p, admin, id, 'offline');
  } finally {
    rmSync(outside, { force: true });
  }
}, 60_000);

/** As the Space Engineers egg writes SpaceEngineers-Dedicated.cfg. */
const XML_EGG = {
  meta: { version: 'PTDL_v2' },
  name: 'Xml config egg',
  startup: 'sleep 60',
  config: {
    startup: { done: 'never printed' },
    stop: '^C',
    files: { 'config/Dedicated.cfg': { parser: 'xml', find: { 'MyConfigDedicated.ServerPort': '{{server.build.default.port}}', 'MyConfigDedicated.IP': '{{server.build.default.ip}}' } } },
  },
  variables: [],
};
const DEDICATED_CFG = '<?xml version="1.0"?>\n<MyConfigDedicated xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n  <!-- the game\'s -->\n  <ServerPort>27016</ServerPort>\n  <ServerName>Mine</ServerName>\n</MyConfigDedicated>\n';

test('xml: an imported egg\'s file gets the server\'s port at start; a file with entity declarations is left as it is and the start goes on', async () => {
  const { data, warnings } = await importEgg(XML_EGG);
  expect(data.configFiles).toEqual([{ file: 'config/Dedicated.cfg', parser: 'xml', find: XML_EGG.config.files['config/Dedicated.cfg'].find }]);
  expect(warnings.some((w) => w.field.startsWith('config.files.config/Dedicated.cfg'))).toBe(false);
  const id = await createServer(data.id, { SERVER_PORT: '27555' });
  const write = async (text: string) => {
    const r = await p.request('PUT', `/api/v1/servers/${id}/files/contents?path=${encodeURIComponent('/config/Dedicated.cfg')}`, { token: admin, raw: text, headers: { 'content-type': 'text/plain' } });
    expect(r.status).toBe(200);
  };
  expect((await p.request('POST', `/api/v1/servers/${id}/files/directory`, { token: admin, body: { path: '/config' } })).status).toBe(201);
  await write(DEDICATED_CFG);
  await start(id);
  await waitForStatus(p, admin, id, 'starting');
  expect((await readFile(id, '/config/Dedicated.cfg')).text).toBe(DEDICATED_CFG.replace('27016', '27555').replace('  <ServerName>Mine</ServerName>\n', '  <ServerName>Mine</ServerName>\n  <IP>0.0.0.0</IP>\n'));
  expect((await p.request('POST', `/api/v1/servers/${id}/kill`, { token: admin })).status).toBe(200);
  await waitForStatus(p, admin, id, 'offline');

  const bomb = '<?xml version="1.0"?>\n<!DOCTYPE MyConfigDedicated [\n <!ENTITY a "aaaaaaaaaa">\n <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\n <!ENTITY x SYSTEM "file:///etc/passwd">\n]>\n<MyConfigDedicated><ServerPort>&b;</ServerPort><ServerName>&x;</ServerName></MyConfigDedicated>\n';
  await write(bomb);
  await start(id);
  await waitForStatus(p, admin, id, 'starting');
  await until(() => consoleLines[id]!.some((l) => l.includes('Configuration file config/Dedicated.cfg is not changed: it has a DOCTYPE')), 10_000, 'the refusal in the console');
  expect((await readFile(id, '/config/Dedicated.cfg')).text).toBe(bomb);
  expect((await p.request('POST', `/api/v1/servers/${id}/kill`, { token: admin })).status).toBe(200);
  await waitForStatus(p, admin, id, 'offline');
}, 60_000);
