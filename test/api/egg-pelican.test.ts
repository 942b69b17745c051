/**
 * Pelican eggs (PLCN_v1 to PLCN_v3) through `POST /admin/blueprints/import` in JSON and in YAML, and
 * GraphQL `importBlueprintYaml`: Pterodactyl's Paper egg turned into Pelican's export (its `config.*`
 * as objects, `startup_commands`, `tags`, `uuid`, rules as lists, `sort`, the script as a YAML block)
 * imports to the same blueprint as the PTDL egg. YAML that does not parse, an alias bomb, an unknown
 * `meta.version` are 422s naming the field.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { stringify as yamlStringify } from 'yaml';
import { expectError, expectFieldError } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { expectData, gql } from '../graphql/gql.js';
import { EGGS_DIR } from '../support/eggs.js';

if (!EGGS_DIR) console.warn('[tests] SKIPPED: test/api/egg-pelican.test.ts needs the Pterodactyl eggs in ../shared/eggs/pterodactyl (or EGGS_DIR)');
const withEggs = EGGS_DIR ? test : test.skip;

let p: TestPlatform;
let admin: string;
let user: string;

beforeAll(async () => {
  p = await startTestPlatform();
  admin = (await p.admin()).token;
  user = (await p.newUser('pelican user')).token;
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

const paper = () => JSON.parse(readFileSync(path.join(EGGS_DIR!, 'egg-paper.json'), 'utf8'));

/** Paper as Pelican exports it. */
function pelicanPaper(version = 'PLCN_v3'): any {
  const e = paper();
  e.meta = { version, update_url: 'https://example.com/egg-paper.yaml' };
  e.uuid = '5da37ef6-58da-4169-90a6-e683e1721247';
  e.tags = ['minecraft'];
  e.config = { ...e.config, files: JSON.parse(e.config.files), startup: JSON.parse(e.config.startup), logs: JSON.parse(e.config.logs) };
  e.startup_commands = { Default: e.startup };
  delete e.startup;
  e.scripts.installation.script = e.scripts.installation.script.replace(/\r\n/g, '\n');
  e.variables = e.variables.map((v: any, i: number) => ({ ...v, rules: v.rules.split('|'), sort: i + 1 }));
  return e;
}

/** YAML as Pelican writes it: multi-line strings as literal blocks. */
const stringify = (value: unknown) => yamlStringify(value, { blockQuote: 'literal' });

const importJson = (body: unknown, token = admin) => p.request('POST', '/api/v1/admin/blueprints/import', { token, body });
const importYaml = (text: string, type = 'application/yaml', token = admin) =>
  p.request('POST', '/api/v1/admin/blueprints/import', { token, raw: text, headers: { 'content-type': type } });
/** The blueprint without what differs between two imports. */
// the blueprint without what differs between two imports of one egg (its id, key, times) and the import's warnings
const comparable = ({ id: _i, key: _k, createdAt: _c, updatedAt: _u, warnings: _w, ...rest }: any) => rest;

withEggs('a PLCN egg in JSON and the same egg in YAML import to the blueprint of the PTDL egg', async () => {
  const ptdl = await importJson(paper());
  expect(ptdl.status).toBe(201);
  const json = await importJson(pelicanPaper());
  expect(json.status).toBe(201);
  expect(comparable(json.body.data)).toEqual(comparable(ptdl.body.data));
  const text = stringify(pelicanPaper());
  expect(text).toMatch(/\n +script: \|-\n/); // the install script as a YAML block
  for (const type of ['application/yaml', 'application/x-yaml', 'text/yaml; charset=utf-8']) {
    const yaml = await importYaml(text, type);
    expect(yaml.status).toBe(201);
    expect(comparable(yaml.body.data)).toEqual(comparable(ptdl.body.data));
    expect(yaml.body.data.warnings).toEqual(json.body.data.warnings);
  }
  expect(json.body.data.warnings).toContainEqual({ field: 'tags', message: 'tags are not kept: minecraft' });
});

withEggs('PLCN_v1 and PLCN_v2 (startup, config strings or objects) import too', async () => {
  const v1 = { ...pelicanPaper('PLCN_v1'), startup: paper().startup, startup_commands: undefined, config: paper().config };
  expect((await importJson(v1)).status).toBe(201);
  const v2 = { ...pelicanPaper('PLCN_v2'), startup: paper().startup, startup_commands: undefined };
  const r = await importYaml(stringify(v2));
  expect(r.status).toBe(201);
  expect(r.body.data.startup).toBe('java -Xms128M -XX:MaxRAMPercentage=95.0 -Dterminal.jline=false -Dterminal.ansi=true -jar {{SERVER_JARFILE}}');
});

withEggs('startup_commands: the first is imported, the others are a warning; variables in their `sort` order', async () => {
  const e = pelicanPaper();
  e.startup_commands = { Default: e.startup_commands.Default, 'Low memory': 'java -Xms64M -jar {{SERVER_JARFILE}}', Debug: 'java -Ddebug=true -jar {{SERVER_JARFILE}}' };
  e.variables = e.variables.map((v: any, i: number) => ({ ...v, sort: 10 - i }));
  const r = await importJson(e);
  expect(r.status).toBe(201);
  expect(r.body.data.startup).toMatch(/^java -Xms128M /);
  expect(r.body.data.warnings).toContainEqual({ field: 'startup_commands', message: 'a blueprint has one startup command: "Default" is imported, not "Low memory", "Debug"' });
  expect(r.body.data.variables.map((v: any) => v.key)).toEqual(['BUILD_NUMBER', 'DL_PATH', 'SERVER_JARFILE', 'MINECRAFT_VERSION', 'SERVER_PORT']);
  const bad = pelicanPaper();
  bad.startup_commands = { Default: 'java -jar "{{SERVER_JARFILE}}' };
  expectFieldError(await importJson(bad), 'startup_commands.Default');
  expectFieldError(await importJson({ ...pelicanPaper(), startup_commands: {} }), 'startup');
});

describe('422 naming the field', () => {
  test('YAML that does not parse: fields.egg, with the line', async () => {
    const r = await importYaml('meta:\n  version: PLCN_v3\nname: "Paper\nstartup: [java\n');
    expectFieldError(r, 'egg');
    expect(r.body.error.details.fields.egg).toMatch(/^is not valid YAML: .*line \d+, column \d+/);
    const twice = await importYaml('name: a\nname: b\n');
    expect(twice.body.error.details.fields.egg).toMatch(/^is not valid YAML: Map keys must be unique at line 2/);
  });

  test('an alias bomb (billion laughs) is refused before it expands', async () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const r = await importYaml(levels.join('\n') + '\n');
    expectFieldError(r, 'egg');
    expect(r.body.error.details.fields.egg).toMatch(/aliases/);
  });

  test('flow collections nested too deeply are refused before the parser recurses on them', async () => {
    for (const text of ['{'.repeat(100_000), 'a: ' + '['.repeat(65) + ']'.repeat(65)]) {
      const r = await importYaml(text);
      expect(r.body.error.details.fields.egg).toBe('is not valid YAML: flow collections ([…], {…}) nested deeper than 64');
    }
    expectFieldError(await importYaml('meta: ' + '['.repeat(64) + ']'.repeat(64) + '\n'), 'meta');
  });

  test('a YAML text of more tokens than any egg has is refused before it is parsed; a key twice in a long mapping is found, with its line', async () => {
    // a flat mapping of 88,000 keys (1 MiB) held the panel's event loop for minutes (yaml's check of
    // unique keys compares every key with every other one)
    let flat = 'meta:\n  version: PTDL_v2\nname: x\nextra:\n';
    for (let i = 0; flat.length < 1024 * 1024 - 40; i++) flat += `  k${i}: v\n`;
    const r = await importYaml(flat);
    expectFieldError(r, 'egg');
    expect(r.body.error.details.fields.egg).toMatch(/^has more than 20,000 YAML tokens/);
    const keys = Array.from({ length: 2000 }, (_, i) => `  k${i}: v`);
    keys.push('  k7: again');
    const twice = await importYaml(`name: x\nextra:\n${keys.join('\n')}\n`);
    expect(twice.body.error.details.fields.egg).toBe('is not valid YAML: Map keys must be unique at line 2003, column 3 (the key k7 appears twice)');
  });

    test('not a mapping, empty', async () => {
    expect((await importYaml('- a\n- b\n')).body.error.details.fields.egg).toBe('must be a YAML mapping (the egg\u2019s fields)');
    expectFieldError(await importYaml('# nothing\n'), 'egg');
  });

  withEggs('an unknown meta.version, in JSON and in YAML', async () => {
    const e = pelicanPaper('PLCN_v9');
    for (const r of [await importJson(e), await importYaml(stringify(e))]) {
      expectFieldError(r, 'meta.version');
      expect(r.body.error.details.fields['meta.version']).toBe('must be PTDL_v1, PTDL_v2, PLCN_v1, PLCN_v2 or PLCN_v3');
    }
  });

  withEggs('a wrong field in YAML names the egg\'s field as in JSON', async () => {
    const e = pelicanPaper();
    e.variables[1].rules = ['required', 'max:many'];
    expectFieldError(await importYaml(stringify(e)), 'variables.1.rules');
  });
});

test('a YAML body over 1 MiB is a 400, as a JSON one', async () => {
  expectError(await importYaml(`name: ${'x'.repeat(1024 * 1024 + 10)}\n`), 400, 'BAD_REQUEST');
});

test('YAML goes to this route only; users get 403', async () => {
  const other = await p.request('POST', '/api/v1/admin/blueprints', { token: admin, raw: 'key: a\n', headers: { 'content-type': 'application/yaml' } });
  expectError(other, 400, 'BAD_REQUEST');
  expectError(await importYaml('name: a\n', 'application/yaml', user), 403, 'FORBIDDEN');
});

withEggs('GraphQL importBlueprintYaml: the same blueprint; a YAML error is a VALIDATION_ERROR naming egg', async () => {
  const text = stringify(pelicanPaper());
  const mutation = 'mutation($egg: String!) { importBlueprintYaml(egg: $egg) { blueprint { name startup stop ready installShell configFiles { file parser find } variables { key rules } } warnings { field } } }';
  const data = expectData(await gql(p, mutation, { egg: text }, { token: admin })).importBlueprintYaml;
  const rest = (await importJson(paper())).body.data;
  expect(data.blueprint).toEqual({
    name: rest.name,
    startup: rest.startup,
    stop: rest.stop,
    ready: rest.ready,
    installShell: rest.installShell,
    configFiles: rest.configFiles,
    variables: rest.variables.map((v: any) => ({ key: v.key, rules: v.rules })),
  });
  expect(data.warnings.map((w: any) => w.field)).toContain('tags');
  const bad = await gql(p, mutation, { egg: 'a: [' }, { token: admin });
  expect(bad.body.errors?.[0]?.extensions.code).toBe('VALIDATION_ERROR');
  expect(bad.body.errors![0]!.extensions.details.fields.egg).toMatch(/^is not valid YAML: .*line 1/);
  const object = await gql(p, 'mutation($egg: JSONObject!) { importBlueprint(egg: $egg) { blueprint { startup } } }', { egg: pelicanPaper() }, { token: admin });
  expect(expectData(object).importBlueprint.blueprint.startup).toBe(rest.startup);
});
