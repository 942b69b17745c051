/**
 * Pterodactyl eggs imported as blueprints, with the 14 eggs that ship with Pterodactyl Panel (MIT),
 * read from ../shared/eggs/pterodactyl (never copied into the project): every one imports with its
 * variables, rules, ready lines and stop as the egg has them; Paper,
 * BungeeCord, Forge, Team Fortress 2 and Mumble map as their eggs say; servers made from each take
 * the defaults and refuse what the rules forbid; malformed eggs are a 422 naming the field.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createNode, expectError, expectFieldError } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { expectData, gql } from '../graphql/gql.js';
import { EGGS_DIR } from '../support/eggs.js';

if (!EGGS_DIR) console.warn('[tests] SKIPPED: test/api/egg-import.test.ts needs the Pterodactyl eggs in ../shared/eggs/pterodactyl (or EGGS_DIR)');
const EGGS = EGGS_DIR ?? '';
const FILES = EGGS_DIR ? readdirSync(EGGS).filter((f) => f.endsWith('.json')).sort() : [];
const egg = (file: string) => JSON.parse(readFileSync(path.join(EGGS, file), 'utf8'));
/** one test per egg; skipped (with the warning above) where the eggs are missing */
const eachEgg = FILES.length ? test.each(FILES) : test.skip.each(['(the eggs are missing)']);

let p: TestPlatform;
let admin: string;
let user: string;
let nodeId: string;
const imported: Record<string, { data: any; warnings: { field: string; message: string }[] }> = {};

beforeAll(async () => {
  p = await startTestPlatform();
  admin = (await p.admin()).token;
  user = (await p.newUser('egg user')).token;
  nodeId = (await createNode(p, admin, { memory: 1_000_000, disk: 10_000_000 })).id;
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

const importEgg = (body: unknown, token = admin) => p.request('POST', '/api/v1/admin/blueprints/import', { token, body });
const variable = (bp: any, key: string) => bp.variables.find((v: any) => v.key === key);
const createServer = (blueprintId: string, variables: Record<string, string> = {}, token = user) =>
  p.request('POST', '/api/v1/servers', { token, body: { name: 'egg server', nodeId, blueprintId, memory: 64, cpu: 10, disk: 128, variables } });

(EGGS_DIR ? test : test.skip)('the 14 eggs of Pterodactyl are there', () => {
  expect(FILES).toHaveLength(14);
});

eachEgg('%s imports with 201, its container image named in the warnings', async (file) => {
  const r = await importEgg(egg(file));
  expect(r.status).toBe(201);
  expect(r.body.data.builtin).toBe(false);
  expect(r.body.data.name).toBe(egg(file).name);
  expect(r.body.data.key).toMatch(/^[a-z0-9][a-z0-9-]*$/);
  expect(r.body.data.warnings.some((w: any) => /images/.test(w.field) && /container image is not used/.test(w.message))).toBe(true);
  expect(r.body.data.warnings.some((w: any) => w.field === 'scripts.installation')).toBe(true);
  // the warnings go with the blueprint: `meta` is the envelope's for lists only
  expect(r.body.meta).toBeUndefined();
  imported[file] = { data: r.body.data, warnings: r.body.data.warnings };
  // every variable of the egg is there, with its rules and who may see and change it
  for (const v of egg(file).variables) {
    expect(variable(r.body.data, v.env_variable)).toMatchObject({ name: v.name, default: v.default_value, userViewable: v.user_viewable, userEditable: v.user_editable, rules: v.rules });
  }
  // its ready line(s) and its stop
  const config = egg(file).config;
  const startup = typeof config.startup === 'string' ? JSON.parse(config.startup) : config.startup;
  for (const done of [startup.done].flat()) expect(new RegExp(r.body.data.ready).test(`[12:00:00 INFO]: ${done} and the rest of the line`)).toBe(true);
  expect(new RegExp(r.body.data.ready).test('[12:00:00 INFO]: Loading libraries, please wait...')).toBe(false);
  expect(r.body.data.stop).toBe(config.stop === '^C' ? 'SIGINT' : config.stop);
});

test('Paper: an argv template, the ready line, `stop`, its variables and rules', () => {
  const { data, warnings } = imported['egg-paper.json']!;
  expect(data.key).toMatch(/^paper(-\d+)?$/);
  expect(data.startup).toBe('java -Xms128M -XX:MaxRAMPercentage=95.0 -Dterminal.jline=false -Dterminal.ansi=true -jar {{SERVER_JARFILE}}');
  expect(data.ready).toBe('\\)! For help, type ');
  expect(new RegExp(data.ready).test('[12:00:00 INFO]: Done (3.2s)! For help, type "help"')).toBe(true);
  expect(data.stop).toBe('stop');
  // the install script as the egg has it (Unix line ends), run with its entrypoint
  expect(data.install).toBe(egg('egg-paper.json').scripts.installation.script.replace(/\r\n/g, '\n'));
  expect(data.installShell).toBe('ash');
  // SERVER_PORT is added for server.properties' {{server.build.default.port}}
  expect(data.variables.map((v: any) => v.key)).toEqual(['MINECRAFT_VERSION', 'SERVER_JARFILE', 'DL_PATH', 'BUILD_NUMBER', 'SERVER_PORT']);
  expect(variable(data, 'SERVER_PORT')).toMatchObject({ default: '25565', rules: 'required|integer|between:1,65535' });
  expect(data.configFiles).toEqual([{ file: 'server.properties', parser: 'properties', find: { 'server-ip': '0.0.0.0', 'server-port': '{{server.build.default.port}}', 'query.port': '{{server.build.default.port}}' } }]);
  expect(variable(data, 'SERVER_JARFILE')).toMatchObject({ default: 'server.jar', rules: 'required|regex:/^([\\w\\d._-]+)(\\.jar)$/', userViewable: true, userEditable: true });
  expect(variable(data, 'DL_PATH')).toMatchObject({ rules: 'nullable|string', userViewable: false, userEditable: false });
  expect(warnings.map((w) => w.field)).toEqual(expect.arrayContaining(['docker_images', 'scripts.installation', 'config.files', 'features']));
});

test('BungeeCord: `end` stops it, "Listening on " is ready, alpha_num and between kept', () => {
  const { data } = imported['egg-bungeecord.json']!;
  expect(data.stop).toBe('end');
  expect(data.ready).toBe('Listening on ');
  expect(variable(data, 'BUNGEE_VERSION').rules).toBe('required|alpha_num|between:1,6');
});

test('Forge: shell syntax runs with bash, placeholders become environment variables', () => {
  const { data, warnings } = imported['egg-forge-minecraft.json']!;
  expect(data.startup.startsWith('/bin/bash -c "java -Xms128M')).toBe(true);
  expect(data.startup).toContain('printf %s \\"-jar ${SERVER_JARFILE}\\"');
  expect(data.startup).not.toContain('{{');
  expect(variable(data, 'BUILD_TYPE').rules).toBe('required|string|in:recommended,latest');
  expect(variable(data, 'FORGE_VERSION').rules).toBe('nullable|regex:/^[0-9\\.\\-]+$/');
  expect(warnings.some((w) => w.field === 'startup' && /bash/.test(w.message))).toBe(true);
});

test('Team Fortress 2 (Source): quit, the Steam ID line, SERVER_PORT as a variable, the empty required default reported', () => {
  const { data, warnings } = imported['egg-team-fortress2.json']!;
  expect(data.stop).toBe('quit');
  expect(data.ready).toBe('gameserver Steam ID');
  expect(data.startup).toBe('./srcds_run -game tf -console -port {{SERVER_PORT}} +map {{SRCDS_MAP}} +ip 0.0.0.0 -strictportbind -norestart +sv_setsteamaccount {{STEAM_ACC}}');
  expect(variable(data, 'SERVER_PORT')).toMatchObject({ default: '27015', rules: 'required|integer|between:1,65535' });
  expect(variable(data, 'SRCDS_APPID')).toMatchObject({ rules: 'required|regex:/^(232250)$/', userEditable: false });
  expect(variable(data, 'STEAM_ACC').rules).toBe('required|string|alpha_num|size:32');
  expect(warnings).toContainEqual({ field: 'variables.2.default_value', message: expect.stringMatching(/STEAM_ACC: the default is required/) });
});

test('Mumble and TeamSpeak: ^C becomes SIGINT', () => {
  expect(imported['egg-mumble-server.json']!.data.stop).toBe('SIGINT');
  expect(imported['egg-teamspeak3-server.json']!.data.stop).toBe('SIGINT');
});

/** Values for the variables whose egg default breaks the egg's own rules. */
const FIXES: Record<string, string> = { STEAM_ACC: 'A'.repeat(32), SRCDS_APPID: '740', SRCDS_GAME: 'csgo', SRCDS_MAP: 'de_dust2', RCON_PASS: 'secret' };

eachEgg('%s: a server takes the defaults (or exactly the variables whose defaults break the rules are 422)', async (file) => {
  const { data, warnings } = imported[file]!;
  const broken = warnings.filter((w) => w.field.endsWith('.default_value')).map((w) => w.message.split(':')[0]!);
  const r = await createServer(data.id);
  if (!broken.length) {
    expect(r.status).toBe(201);
    return;
  }
  expectError(r, 422, 'VALIDATION_ERROR');
  expect(Object.keys(r.body.error.details.fields).sort()).toEqual(broken.map((k) => `variables.${k}`).sort());
  // the egg's users set what it lets them edit; an administrator sets the rest (the Source egg's game id)
  const fixes = Object.fromEntries(broken.map((k) => [k, FIXES[k]!]));
  const editable = (k: string) => variable(data, k).userEditable;
  const fixed = await createServer(data.id, fixes, broken.every(editable) ? user : admin);
  expect(fixed.status).toBe(201);
  if (!broken.every(editable)) {
    const refused = await createServer(data.id, fixes);
    expectError(refused, 422, 'VALIDATION_ERROR');
    for (const k of broken.filter((k) => !editable(k))) expect(refused.body.error.details.fields[`variables.${k}`]).toBe('is read-only: ask an administrator to change it');
  }
});

test.each([
  ['egg-paper.json', 'SERVER_JARFILE', 'server.exe'],
  ['egg-forge-minecraft.json', 'BUILD_TYPE', 'nightly'],
  ['egg-bungeecord.json', 'BUNGEE_VERSION', 'lat-est'],
  ['egg-rust.json', 'SERVER_URL', 'not a url'],
  ['egg-teamspeak3-server.json', 'FILE_TRANSFER', '80'],
  ['egg-garrys-mod.json', 'MAX_PLAYERS', '129'],
  ['egg-ark--survival-evolved.json', 'ARK_PASSWORD', 'two words'],
  ['egg-ark--survival-evolved.json', 'AUTO_UPDATE', 'yes'],
  ['egg-team-fortress2.json', 'STEAM_ACC', 'A'.repeat(31)],
  ['egg-insurgency.json', 'SRCDS_MAP', 'x'.repeat(21)],
  ['egg-mumble-server.json', 'MAX_USERS', '123456'],
  ['egg-team-fortress2.json', 'SERVER_PORT', '70000'],
])('%s: %s=%j is refused on create and on update, naming the variable', async (file, key, value) => {
  const { data } = imported[file]!;
  expectFieldError(await createServer(data.id, { ...fixesFor(file), [key]: value }), `variables.${key}`);
  const ok = await createServer(data.id, fixesFor(file));
  expect(ok.status).toBe(201);
  const r = await p.request('PATCH', `/api/v1/servers/${ok.body.data.id}`, { token: user, body: { variables: { [key]: value } } });
  expectFieldError(r, `variables.${key}`);
  expect(Object.keys(r.body.error.details.fields)).toEqual([`variables.${key}`]);
});

function fixesFor(file: string): Record<string, string> {
  const { warnings } = imported[file]!;
  const broken = warnings.filter((w) => w.field.endsWith('.default_value')).map((w) => w.message.split(':')[0]!);
  return Object.fromEntries(broken.map((k) => [k, FIXES[k]!]));
}

test('an update within the rules is taken', async () => {
  const { data } = imported['egg-forge-minecraft.json']!;
  const s = await createServer(data.id);
  const r = await p.request('PATCH', `/api/v1/servers/${s.body.data.id}`, { token: user, body: { variables: { BUILD_TYPE: 'latest', FORGE_VERSION: '1.20.1-47.2.0' } } });
  expect(r.status).toBe(200);
  expect(r.body.data.variables).toMatchObject({ BUILD_TYPE: 'latest', FORGE_VERSION: '1.20.1-47.2.0', SERVER_JARFILE: 'server.jar' });
});

describe('malformed eggs: 422 naming the field', () => {
  const paper = () => egg('egg-paper.json');
  const cases: [string, (e: any) => unknown, string][] = [
    ['an unknown format', (e) => ({ ...e, meta: { version: 'PTDL_v9' } }), 'meta.version'],
    ['no meta', (e) => ({ ...e, meta: undefined }), 'meta'],
    ['no name', (e) => ({ ...e, name: undefined }), 'name'],
    ['a number as startup', (e) => ({ ...e, startup: 42 }), 'startup'],
    ['a huge startup', (e) => ({ ...e, startup: 'java '.repeat(2000) }), 'startup'],
    ['a huge description', (e) => ({ ...e, description: 'x'.repeat(100_000) }), 'description'],
    ['no stop', (e) => ({ ...e, config: { ...e.config, stop: undefined } }), 'config.stop'],
    ['config.startup that is not JSON', (e) => ({ ...e, config: { ...e.config, startup: '{"done": ' } }), 'config.startup'],
    ['a number as done', (e) => ({ ...e, config: { ...e.config, startup: '{"done": 5}' } }), 'config.startup.done'],
    ['a huge done', (e) => ({ ...e, config: { ...e.config, startup: { done: ['x'.repeat(200), 'y'.repeat(200)] } } }), 'config.startup.done'],
    ['variables that are not a list', (e) => ({ ...e, variables: 'none' }), 'variables'],
    ['too many variables', (e) => ({ ...e, variables: Array.from({ length: 101 }, (_, i) => ({ ...e.variables[0], env_variable: `V${i}` })) }), 'variables'],
    ['a variable without env_variable', (e) => ({ ...e, variables: [{ ...e.variables[0], env_variable: undefined }] }), 'variables.0.env_variable'],
    ['a reserved variable name', (e) => ({ ...e, variables: [{ ...e.variables[0], env_variable: 'LD_PRELOAD' }] }), 'variables.0.env_variable'],
    // a record key that objects treat as their prototype: the server's value for it was lost
    ['a variable named __proto__', (e) => ({ ...e, variables: [{ ...e.variables[0], env_variable: '__proto__' }] }), 'variables.0.env_variable'],
    ['a variable name that is no name', (e) => ({ ...e, variables: [{ ...e.variables[0], env_variable: 'A B' }] }), 'variables.0.env_variable'],
    ['the same variable twice', (e) => ({ ...e, variables: [e.variables[0], e.variables[0]] }), 'variables.1.env_variable'],
    ['a regex rule that does not compile', (e) => ({ ...e, variables: [{ ...e.variables[0], rules: 'required|regex:/(/' }] }), 'variables.0.rules'],
    ['a regex that backtracks catastrophically', (e) => ({ ...e, variables: [{ ...e.variables[0], rules: 'required|regex:/^(\\w+\\s?)*$/' }] }), 'variables.0.rules'],
    ['a rule with a bad argument', (e) => ({ ...e, variables: [{ ...e.variables[0], rules: 'required|max:many' }] }), 'variables.0.rules'],
    ['an object as a default', (e) => ({ ...e, variables: [{ ...e.variables[0], default_value: { a: 1 } }] }), 'variables.0.default_value'],
    ['an unterminated quote in the startup', (e) => ({ ...e, startup: 'java -jar "{{SERVER_JARFILE}}' }), 'startup'],
  ];
  test.each(cases)('%s', async (_what, change, field) => {
    const r = await importEgg(change(paper()));
    expectFieldError(r, field);
  });

  test('not an object at all', async () => {
    const r = await importEgg(['egg']);
    expect([400, 422]).toContain(r.status);
  });
});

test('rules the panel does not know are reported, not enforced', async () => {
  const e = egg('egg-paper.json');
  e.variables[0].rules = 'nullable|string|max:20|starts_with:1';
  const r = await importEgg(e);
  expect(r.status).toBe(201);
  expect(variable(r.body.data, 'MINECRAFT_VERSION').rules).toBe('nullable|string|max:20');
  expect(r.body.data.warnings).toContainEqual({ field: 'variables.0.rules', message: expect.stringMatching(/starts_with/) });
});

test('importing the same egg twice gives a second key', async () => {
  const a = await importEgg(egg('egg-rust.json'));
  const b = await importEgg(egg('egg-rust.json'));
  expect(b.body.data.key).not.toBe(a.body.data.key);
  expect(b.body.data.key).toMatch(/^rust-\d+$/);
});

test('users may not import (403)', async () => {
  expectError(await importEgg(egg('egg-paper.json'), user), 403, 'FORBIDDEN');
});

test('GraphQL importBlueprint: the blueprint and the warnings', async () => {
  const r = await gql(p, 'mutation($egg: JSONObject!) { importBlueprint(egg: $egg) { blueprint { key stop ready variables { key rules userEditable } } warnings { field message } } }', { egg: egg('egg-bungeecord.json') }, { token: admin });
  const data = expectData(r).importBlueprint;
  expect(data.blueprint).toMatchObject({ stop: 'end', ready: 'Listening on ' });
  expect(data.blueprint.variables).toContainEqual({ key: 'BUNGEE_VERSION', rules: 'required|alpha_num|between:1,6', userEditable: true });
  expect(data.warnings.map((w: any) => w.field)).toContain('docker_images');
  const bad = await gql(p, 'mutation($egg: JSONObject!) { importBlueprint(egg: $egg) { blueprint { id } } }', { egg: { ...egg('egg-paper.json'), startup: 7 } }, { token: admin });
  expect(bad.body.errors?.[0]?.extensions.code).toBe('VALIDATION_ERROR');
  expect(Object.keys(bad.body.errors![0]!.extensions.details.fields)).toEqual(['startup']);
});
