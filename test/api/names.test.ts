/**
 * Names (users, servers, nodes, API tokens) refuse bidirectional controls and zero-width characters,
 * which make a name read as something it is not (e.g. "report\u202Eexe.txt"), on every endpoint that
 * takes a name, REST and GraphQL alike; other text, right-to-left scripts and emoji included, is kept.
 */
import fc from 'fast-check';
import { hasInvisible } from '../../src/validation/common.js';
import { createNode, expectFieldError } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { expectGqlError, gql } from '../graphql/gql.js';

/** The characters the rule refuses, listed one by one (independently of the rule's own pattern). */
const FORBIDDEN = [
  '\u202A', '\u202B', '\u202C', '\u202D', '\u202E', // embeddings and overrides
  '\u2066', '\u2067', '\u2068', '\u2069', // isolates
  '\u200E', '\u200F', '\u061C', // marks
  '\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF', // zero-width
];

let p: TestPlatform;
let admin: { token: string; user: any };
let user: { token: string; user: any; password: string };
let nodeId: string;
let serverId: string;
let blueprintId: string;

beforeAll(async () => {
  p = await startTestPlatform();
  admin = await p.admin();
  user = await p.newUser();
  nodeId = (await createNode(p, admin.token)).id;
  const bps = await p.request('GET', '/api/v1/blueprints?limit=100', { token: user.token });
  blueprintId = bps.body.data.find((b: any) => b.key === 'shell-command').id;
  const s = await p.request('POST', '/api/v1/servers', { token: user.token, body: { name: 'plain', nodeId, blueprintId, memory: 64, cpu: 10, disk: 128 } });
  serverId = s.body.data.id;
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

/** Every operation that takes a name: sends `name`, answers the REST or GraphQL reply. */
const ENDPOINTS: Record<string, (name: string) => Promise<{ status: number; body: any }>> = {
  signup: (name) => p.request('POST', '/api/v1/auth/signup', { body: { email: `n${Math.random().toString(36).slice(2)}@example.com`, password: 'password-123', name } }),
  updateMe: (name) => p.request('PATCH', '/api/v1/users/me', { token: user.token, body: { name } }),
  apiToken: (name) => p.request('POST', '/api/v1/users/me/api-tokens', { token: user.token, body: { name } }),
  createServer: (name) => p.request('POST', '/api/v1/servers', { token: user.token, body: { name, nodeId, blueprintId, memory: 64, cpu: 10, disk: 128 } }),
  updateServer: (name) => p.request('PATCH', `/api/v1/servers/${serverId}`, { token: user.token, body: { name } }),
  createNode: (name) => p.request('POST', '/api/v1/nodes', { token: admin.token, body: { name, fqdn: '127.0.0.1', port: 1, memory: 1024, disk: 1024 } }),
};

/** Visible text around the forbidden character (it is inside the name, where trimming cannot remove it). */
const visible = fc.string({ unit: fc.constantFrom(...'abcXYZ019 _-.éßжعשׁ中🌱'.split(/(?:)/u)), minLength: 1, maxLength: 30 }).map((s) => `a${s}z`);

test('the rule refuses exactly the listed characters among the format and control code points', () => {
  for (const c of FORBIDDEN) expect([c, hasInvisible(`a${c}b`)]).toEqual([c, true]);
  for (const ok of ['Ada 🌱', 'خادم اللعبة', 'שרת', 'Zoë', '中文服务器']) expect([ok, hasInvisible(ok)]).toEqual([ok, false]);
});

test('a name with a bidi or zero-width character is a 422 with the field on every endpoint (property)', async () => {
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...Object.keys(ENDPOINTS)), visible, fc.constantFrom(...FORBIDDEN), visible, async (endpoint, before, bad, after) => {
      const r = await ENDPOINTS[endpoint]!(before + bad + after);
      expectFieldError(r as any, 'name');
      expect(r.body.error.details.fields.name).toMatch(/invisible or text-direction/);
    }),
    { numRuns: 60 },
  );
  // nothing was stored: the user's name and server name are unchanged
  expect((await p.request('GET', '/api/v1/users/me', { token: user.token })).body.data.name).not.toMatch(/[\u200B-\u200F\u202A-\u202E\u2060\u2066-\u2069\u061C\uFEFF]/);
  expect((await p.request('GET', `/api/v1/servers/${serverId}`, { token: user.token })).body.data.name).toBe('plain');
});

test('names without them are kept exactly, right-to-left scripts and emoji included (property)', async () => {
  await fc.assert(
    fc.asyncProperty(visible, async (name) => {
      const r = await ENDPOINTS.updateMe!(name);
      expect(r.status).toBe(200);
      expect(r.body.data.name).toBe(name.trim());
    }),
    { numRuns: 30 },
  );
});

test('GraphQL applies the same rule (updateMe, createServer)', async () => {
  const me = await gql(p, 'mutation($n: String!) { updateMe(input: { name: $n }) { name } }', { n: 'evil\u202Egnp.exe' }, { token: user.token });
  expectGqlError(me, 'VALIDATION_ERROR');
  expect(Object.keys(me.body.errors![0]!.extensions.details.fields)).toEqual(['name']);
  const s = await gql(p, 'mutation($input: CreateServerInput!) { createServer(input: $input) { id } }', { input: { name: 'x\u200By', nodeId, blueprintId, memory: 64, cpu: 10, disk: 128 } }, { token: user.token });
  expectGqlError(s, 'VALIDATION_ERROR');
  expect(Object.keys(s.body.errors![0]!.extensions.details.fields)).toEqual(['name']);
});
