/**
 * Egg import as Pterodactyl and Wings read the same egg: a `regex:` ready line is a pattern, a stop
 * of `^SIGTERM` a signal, `yml` the yaml parser, `{{env.SERVER_PORT}}` in a config file brings the
 * SERVER_PORT variable, and the environment's names of the memory, address and port are filled.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { EGGS_DIR } from '../support/eggs.js';
import { fillPlaceholders } from '../../src/shared/config-files.js';

let p: TestPlatform;
let admin: string;
const paper = () => JSON.parse(readFileSync(path.join(EGGS_DIR!, 'egg-paper.json'), 'utf8'));
let n = 0;
const importEgg = (egg: any) => p.request('POST', '/api/v1/admin/blueprints/import', { token: admin, body: { ...egg, name: `${egg.name} probe ${++n}` } });

beforeAll(async () => {
  p = await startTestPlatform();
  admin = (await p.admin()).token;
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

(EGGS_DIR ? test : test.skip)('a `regex:` done line is a pattern, as in Wings (else the server never becomes running)', async () => {
  const egg = paper();
  egg.config.startup = JSON.stringify({ done: 'regex:^\\[\\d\\d:\\d\\d:\\d\\d INFO\\]: Done \\(' });
  const r = await importEgg(egg);
  expect(r.status).toBe(201);
  const ready = new RegExp(r.body.data.ready);
  // what the real server prints; Wings marks it running on this line (the escaped text never matched it)
  expect(ready.test('[12:00:00 INFO]: Done (3.2s)! For help, type "help"')).toBe(true);
});

(EGGS_DIR ? test : test.skip)('a stop of `^SIGTERM` is a signal, as in Pterodactyl, not a console line', async () => {
  const egg = paper();
  egg.config.stop = '^SIGTERM';
  const r = await importEgg(egg);
  expect(r.status).toBe(201);
  // the agent (src/agent/server/power.ts) sends `SIGTERM` as a signal; `^SIGTERM` was written to the console
  expect(r.body.data.stop).toBe('SIGTERM');
});

test('the environment\u2019s names of the memory, address and port are filled with them, as Wings fills them', () => {
  const values = { port: '25570', ip: '10.0.0.5', memory: '2048', env: { MOTD: 'hi' } };
  const fill = (v: string) => (fillPlaceholders(v, values) as { value: string }).value;
  // SERVER_MEMORY is reserved, never a server's variable: it was written empty
  expect(fill('{{server.build.env.SERVER_MEMORY}}')).toBe('2048');
  expect(fill('{{env.SERVER_MEMORY}}M')).toBe('2048M');
  expect(fill('{{env.SERVER_PORT}}')).toBe('25570');
  expect(fill('{{ server.build.env.SERVER_IP }}:{{env.SERVER_PORT}}')).toBe('10.0.0.5:25570');
  expect(fill('{{env.MOTD}}/{{env.UNSET}}')).toBe('hi/');
});

(EGGS_DIR ? test : test.skip)('legacy {{env.SERVER_PORT}} in config.files gets the SERVER_PORT variable, as {{server.build.default.port}} does', async () => {
  const egg = paper();
  egg.config.files = JSON.stringify({ 'server.properties': { parser: 'properties', find: { 'server-port': '{{env.SERVER_PORT}}' } } });
  const r = await importEgg(egg);
  expect(r.status).toBe(201);
  // Pterodactyl gives the allocation's port here; without the variable the key was written empty
  expect(r.body.data.variables.map((v: any) => v.key)).toContain('SERVER_PORT');
});

(EGGS_DIR ? test : test.skip)('parser "yml" is Wings\' alias of "yaml" (ConfigurationFile.Parse: `case Yaml, "yml"`), not an unknown parser', async () => {
  const egg = paper();
  egg.config.files = JSON.stringify({ 'config/paper.yml': { parser: 'yml', find: { 'settings.port': '{{server.build.default.port}}' } } });
  const r = await importEgg(egg);
  expect(r.status).toBe(201);
  expect(r.body.data.configFiles).toEqual([{ file: 'config/paper.yml', parser: 'yaml', find: { 'settings.port': '{{server.build.default.port}}' } }]);
});
