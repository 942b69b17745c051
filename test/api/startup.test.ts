/**
 * A server's startup variables over REST and GraphQL (GET/PUT /servers/:id/startup): only the
 * user-viewable variables are listed, only the user-editable ones change, each value is checked by
 * its rules (422 per variable, nothing saved), the change is in the activity log, subusers need
 * startup.read / startup.update, and the node agent runs the server with the new values.
 */
import fc from 'fast-check';
import { ConsoleClient } from '../support/console-client.js';
import { createLocalDemoServer, createNode, expectError, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { expectData, gql } from '../graphql/gql.js';

let p: TestPlatform;
let admin: string;
let owner: { token: string; user: any; email: string };
let stranger: { token: string };
let nodeId: string;
let blueprintId: string;
let n = 0;

const BLUEPRINT = {
  name: 'Startup game',
  startup: './game --port {{PORT}} --motd {{MOTD}} --mode {{MODE}} --secret {{SECRET}} --memory {{SERVER_MEMORY}}',
  stop: 'stop',
  variables: [
    { key: 'PORT', name: 'Port', description: 'Where players connect', default: '27015', rules: 'required|integer|between:1024,65535' },
    { key: 'MOTD', name: 'Message', default: 'hi', rules: 'nullable|string|max:16', userEditable: false },
    { key: 'SECRET', default: 'hunter2', rules: 'required|string', userViewable: false, userEditable: false },
    { key: 'MODE', default: 'survival', rules: 'required|in:survival,creative' },
  ],
};

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 2 });
  admin = (await p.admin()).token;
  owner = await p.newUser('owner');
  stranger = await p.newUser('stranger');
  nodeId = (await createNode(p, admin)).id;
  const bp = await p.request('POST', '/api/v1/admin/blueprints', { token: admin, body: { key: `startup-${Date.now()}`, ...BLUEPRINT } });
  if (bp.status !== 201) throw new Error(bp.text);
  blueprintId = bp.body.data.id;
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

async function newServer(variables: Record<string, string> = {}): Promise<string> {
  const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: `s ${++n}`, nodeId, blueprintId, memory: 64, cpu: 10, disk: 128, variables } });
  if (r.status !== 201) throw new Error(r.text);
  return r.body.data.id;
}

/** A subuser of the server holding `permissions`; their token. */
async function subuser(serverId: string, permissions: string[]): Promise<string> {
  const u = await p.newUser('sub');
  const r = await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: u.email, permissions } });
  if (r.status !== 201) throw new Error(r.text);
  return u.token;
}

const startup = (id: string) => `/api/v1/servers/${id}/startup`;
const put = (id: string, variables: unknown, token = owner.token) => p.request('PUT', startup(id), { token, body: { variables } });
const stored = async (id: string) => (await p.request('GET', `/api/v1/servers/${id}`, { token: admin })).body.data.variables;

test('GET lists the user-viewable variables with the values, and the command with them in place', async () => {
  const id = await newServer({ PORT: '25000' });
  const expected = {
    startup: './game --port 25000 --motd hi --mode survival --secret {{SECRET}} --memory {{SERVER_MEMORY}}',
    variables: [
      { key: 'PORT', name: 'Port', description: 'Where players connect', default: '27015', rules: 'required|integer|between:1024,65535', userEditable: true, value: '25000' },
      { key: 'MOTD', name: 'Message', description: '', default: 'hi', rules: 'nullable|string|max:16', userEditable: false, value: 'hi' },
      { key: 'MODE', name: 'MODE', description: '', default: 'survival', rules: 'required|in:survival,creative', userEditable: true, value: 'survival' },
    ],
  };
  // the owner, an administrator and a subuser with startup.read see the same: never the hidden SECRET
  for (const token of [owner.token, admin, await subuser(id, ['startup.read'])]) {
    const r = await p.request('GET', startup(id), { token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ data: expected });
    expect(r.text).not.toContain('hunter2');
  }
});

test('PUT sets user-editable variables, keeps the others, answers like GET and records server:startup.edit', async () => {
  const id = await newServer();
  const r = await put(id, { PORT: '30000', MODE: 'creative' });
  expect(r.status).toBe(200);
  expect(r.body.data.startup).toBe('./game --port 30000 --motd hi --mode creative --secret {{SECRET}} --memory {{SERVER_MEMORY}}');
  expect(r.body).toEqual(await p.request('GET', startup(id), { token: owner.token }).then((g) => g.body));
  expect(await stored(id)).toEqual({ PORT: '30000', MOTD: 'hi', SECRET: 'hunter2', MODE: 'creative' });

  const log = await p.request('GET', `/api/v1/servers/${id}/activity?event=server:startup`, { token: owner.token });
  expect(log.body.data).toHaveLength(1);
  expect(log.body.data[0]).toMatchObject({ event: 'server:startup.edit', serverId: id, actor: { id: owner.user.id }, properties: { variables: ['PORT', 'MODE'] } });
  expect(JSON.stringify(log.body.data[0])).not.toContain('30000'); // keys only, never values

  // nothing named: nothing changes, nothing is recorded
  expect((await put(id, {})).status).toBe(200);
  expect((await p.request('GET', `/api/v1/servers/${id}/activity?event=server:startup`, { token: owner.token })).body.data).toHaveLength(1);
});

test('values that break their rules: 422 naming each variable, and nothing is saved', async () => {
  const id = await newServer();
  const r = await put(id, { PORT: '80', MODE: 'hardcore' });
  expectError(r, 422, 'VALIDATION_ERROR');
  expect(r.body.error.details.fields).toEqual({ 'variables.PORT': 'must be between 1024 and 65535', 'variables.MODE': 'must be one of survival,creative' });
  // one good value beside a bad one is not saved either
  expectError(await put(id, { PORT: '30000', MODE: '' }), 422, 'VALIDATION_ERROR');
  expect(await stored(id)).toEqual({ PORT: '27015', MOTD: 'hi', SECRET: 'hunter2', MODE: 'survival' });
  expectError(await put(id, { PORT: 30000 }), 422, 'VALIDATION_ERROR'); // values are strings
  expectError(await p.request('PUT', startup(id), { token: owner.token, body: {} }), 422, 'VALIDATION_ERROR'); // `variables` is required
});

test('read-only, hidden and unknown keys: 422 naming the key, for administrators too', async () => {
  const id = await newServer();
  for (const token of [owner.token, admin]) {
    const r = await put(id, { MOTD: 'changed', SECRET: 'x', NOPE: '1', PORT: '30000' }, token);
    expectError(r, 422, 'VALIDATION_ERROR');
    expect(r.body.error.details.fields).toEqual({
      'variables.MOTD': 'is read-only: ask an administrator to change it',
      'variables.SECRET': 'is not a startup variable of this server',
      'variables.NOPE': 'is not a startup variable of this server',
    });
  }
  expect(await stored(id)).toEqual({ PORT: '27015', MOTD: 'hi', SECRET: 'hunter2', MODE: 'survival' });
  // the administrator changes the others through the server's update
  expect((await p.request('PATCH', `/api/v1/servers/${id}`, { token: admin, body: { variables: { MOTD: 'by admin' } } })).status).toBe(200);
  expect((await p.request('GET', startup(id), { token: owner.token })).body.data.variables[1].value).toBe('by admin');
});

test('every variable read and sent back, read-only ones included, is no change: 200, nothing saved or recorded', async () => {
  // the read-only variable's current value was refused here, while PATCH /servers/:id took it
  const id = await newServer();
  const read = (await p.request('GET', startup(id), { token: owner.token })).body.data;
  const asRead = Object.fromEntries(read.variables.map((v: any) => [v.key, v.value]));
  expect(Object.keys(asRead)).toContain('MOTD');
  const r = await put(id, asRead);
  expect([r.status, r.body]).toEqual([200, { data: read }]);
  expect((await p.request('GET', `/api/v1/servers/${id}/activity?event=server:startup`, { token: owner.token })).body.data).toHaveLength(0);
  // with a change beside them, only the change is recorded
  expect((await put(id, { ...asRead, PORT: '30001' })).status).toBe(200);
  const log = await p.request('GET', `/api/v1/servers/${id}/activity?event=server:startup`, { token: owner.token });
  expect(log.body.data.map((e: any) => e.properties)).toEqual([{ variables: ['PORT'] }]);
  expect(await stored(id)).toEqual({ PORT: '30001', MOTD: 'hi', SECRET: 'hunter2', MODE: 'survival' });
});

test('subusers need startup.read to see and startup.update to change; strangers get 404', async () => {
  const id = await newServer();
  const reader = await subuser(id, ['startup.read']);
  const writer = await subuser(id, ['startup.update']);
  const none = await subuser(id, []);
  expectError(await put(id, { PORT: '30000' }, reader), 403, 'FORBIDDEN');
  expectError(await p.request('GET', startup(id), { token: writer }), 403, 'FORBIDDEN');
  expectError(await p.request('GET', startup(id), { token: none }), 403, 'FORBIDDEN');
  expectError(await put(id, { PORT: '30000' }, none), 403, 'FORBIDDEN');
  expectError(await p.request('GET', startup(id), { token: stranger.token }), 404, 'NOT_FOUND');
  expectError(await put(id, { PORT: '30000' }, stranger.token), 404, 'NOT_FOUND');
  expectError(await p.request('GET', startup(id)), 401, 'UNAUTHORIZED');
  expect(await stored(id)).toMatchObject({ PORT: '27015' });

  const r = await put(id, { PORT: '31000' }, writer);
  expect(r.status).toBe(200);
  expect(await stored(id)).toMatchObject({ PORT: '31000' });
  // without startup.read the answer holds what was sent and the template, not the other values
  // (a change of nothing answered every value: a read through the write key)
  for (const sent of [{ PORT: '31000' }, {}]) {
    const answer = await put(id, sent, writer);
    expect(answer.status).toBe(200);
    expect(answer.body.data.startup).toBe('./game --port {{PORT}} --motd {{MOTD}} --mode {{MODE}} --secret {{SECRET}} --memory {{SERVER_MEMORY}}');
    expect(answer.body.data.variables.map((v: any) => [v.key, v.value])).toEqual(Object.entries(sent));
  }
  const gqlAnswer = await gql(p, 'mutation($id: ID!) { updateServerStartup(serverId: $id, variables: {}) { startup variables { key value } } }', { id }, { token: writer });
  expect(expectData(gqlAnswer).updateServerStartup.variables).toEqual([]);
  const log = await p.request('GET', `/api/v1/servers/${id}/activity?event=server:startup`, { token: owner.token });
  expect(log.body.data[0].actor.id).not.toBe(owner.user.id); // the subuser's entry
});

test('GraphQL: serverStartup and updateServerStartup answer as REST does', async () => {
  const id = await newServer();
  const query = 'query($id: ID!) { serverStartup(serverId: $id) { startup variables { key name description default rules userEditable value } } }';
  const got = expectData(await gql(p, query, { id }, { token: owner.token }));
  expect(got.serverStartup).toEqual((await p.request('GET', startup(id), { token: owner.token })).body.data);

  const mutation = 'mutation($id: ID!, $v: JSONObject!) { updateServerStartup(serverId: $id, variables: $v) { startup variables { key value } } }';
  const changed = expectData(await gql(p, mutation, { id, v: { PORT: '40000' } }, { token: owner.token }));
  expect(changed.updateServerStartup.variables[0]).toEqual({ key: 'PORT', value: '40000' });
  expect(await stored(id)).toMatchObject({ PORT: '40000' });

  const refused = await gql(p, mutation, { id, v: { PORT: 'x', MOTD: 'y' } }, { token: owner.token });
  expect(refused.body.errors![0]!.extensions).toMatchObject({
    code: 'VALIDATION_ERROR',
    details: { fields: { 'variables.PORT': 'must be an integer', 'variables.MOTD': 'is read-only: ask an administrator to change it' } },
  });
  const forbidden = await gql(p, query, { id }, { token: await subuser(id, ['startup.update']) });
  expect(forbidden.body.errors![0]!.extensions.code).toBe('FORBIDDEN');
});

/** The rules of PORT and MODE written out again, apart from the code: the test's oracle. */
function allowed(key: 'PORT' | 'MODE', value: string): boolean {
  if (key === 'MODE') return value === 'survival' || value === 'creative';
  return /^-?\d+$/.test(value) && Number(value) >= 1024 && Number(value) <= 65535;
}

test('property: a random value either passes its rules and round-trips, or is a 422 that changes nothing', async () => {
  const id = await newServer();
  const value = fc.oneof(
    fc.integer({ min: -100, max: 100_000 }).map(String),
    fc.constantFrom('survival', 'creative', 'Survival', ' creative', '', '01024', '65535', '65536', '1e4', '2000.0'),
    fc.string({ maxLength: 12 }),
  );
  await fc.assert(
    fc.asyncProperty(fc.constantFrom('PORT' as const, 'MODE' as const), value, async (key, v) => {
      const before = await stored(id);
      const r = await put(id, { [key]: v });
      if (allowed(key, v)) {
        expect(r.status).toBe(200);
        expect(r.body.data.variables.find((x: any) => x.key === key).value).toBe(v);
        expect(await stored(id)).toEqual({ ...before, [key]: v });
      } else {
        expectError(r, 422, 'VALIDATION_ERROR');
        expect(Object.keys(r.body.error.details.fields)).toEqual([`variables.${key}`]);
        expect(await stored(id)).toEqual(before);
      }
    }),
    { numRuns: 60 },
  );
}, 60_000);

test("the node runs the server with the new value (the demo game's message of the day)", async () => {
  const id = await createLocalDemoServer(p, admin, owner.token, 'startup demo');
  const motd = `motd-${Date.now()}`;
  expect((await put(id, { MOTD: motd })).status).toBe(200);
  expect((await p.request('GET', startup(id), { token: owner.token })).body.data.startup).toContain(`--motd ${motd} `);
  expect((await p.request('POST', `/api/v1/servers/${id}/start`, { token: owner.token })).status).toBe(200);
  await waitForStatus(p, owner.token, id, 'running');
  const ticket = (await p.request('GET', `/api/v1/servers/${id}/console-token`, { token: owner.token })).body.data;
  const c = await ConsoleClient.connect(ticket.socket, ticket.token);
  try {
    await c.waitFor((m) => m.type === 'console_output' && String(m.data.line).includes(`Message of the day: ${motd}`));
  } finally {
    c.ws.close();
    await p.request('POST', `/api/v1/servers/${id}/kill`, { token: owner.token });
  }
}, 60_000);

describe("server create and update follow the blueprint's visibility (only administrators set or see what it hides)", () => {
  const patch = (id: string, variables: unknown, token = owner.token) => p.request('PATCH', `/api/v1/servers/${id}`, { token, body: { variables } });

  test('the owner may not create a server with a read-only or a hidden value; an administrator may', async () => {
    const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'locked', nodeId, blueprintId, memory: 64, cpu: 10, disk: 128, variables: { MOTD: 'mine', SECRET: 'x' } } });
    expectError(r, 422, 'VALIDATION_ERROR');
    expect(r.body.error.details.fields).toEqual({
      'variables.MOTD': 'is read-only: ask an administrator to change it',
      'variables.SECRET': 'is not a variable of this blueprint',
    });
    const byAdmin = await p.request('POST', '/api/v1/servers', { token: admin, body: { name: 'locked', ownerId: owner.user.id, nodeId, blueprintId, memory: 64, cpu: 10, disk: 128, variables: { MOTD: 'set', SECRET: 'x' } } });
    expect(byAdmin.status).toBe(201);
    expect(await stored(byAdmin.body.data.id)).toEqual({ PORT: '27015', MOTD: 'set', SECRET: 'x', MODE: 'survival' });
  });

  test('PATCH /servers/:id: the owner changes editable values, sends read-only ones back unchanged, and cannot guess a hidden one', async () => {
    const id = await newServer();
    const record = (await p.request('GET', `/api/v1/servers/${id}`, { token: owner.token })).body.data;
    // the record as read, sent back: nothing refused
    const same = await patch(id, { ...record.variables, PORT: '26000' });
    expect(same.status).toBe(200);
    const locked = await patch(id, { MOTD: 'changed' });
    expectError(locked, 422, 'VALIDATION_ERROR');
    expect(locked.body.error.details.fields).toEqual({ 'variables.MOTD': 'is read-only: ask an administrator to change it' });
    // the hidden value's right guess is refused like a wrong one: the answer tells nothing
    for (const guess of ['hunter2', 'wrong']) {
      const r = await patch(id, { SECRET: guess });
      expectError(r, 422, 'VALIDATION_ERROR');
      expect(r.body.error.details.fields).toEqual({ 'variables.SECRET': 'is not a variable of this blueprint' });
    }
    expect(await stored(id)).toEqual({ PORT: '26000', MOTD: 'hi', SECRET: 'hunter2', MODE: 'survival' });
    expect((await patch(id, { SECRET: 'by admin', MOTD: 'by admin' }, admin)).status).toBe(200);
    expect(await stored(id)).toEqual({ PORT: '26000', MOTD: 'by admin', SECRET: 'by admin', MODE: 'survival' });
  });

  test('server records show hidden variables to administrators only, and values to subusers with startup.read only (REST list and read, GraphQL, the answers of create and update)', async () => {
    const created = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'records', nodeId, blueprintId, memory: 64, cpu: 10, disk: 128 } });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const shown = { PORT: '27015', MOTD: 'hi', MODE: 'survival' };
    expect(created.body.data.variables).toEqual(shown);
    expect((await patch(id, { PORT: '27016' })).body.data.variables).toEqual({ ...shown, PORT: '27016' });
    const sub = await subuser(id, ['control.console', 'startup.read']);
    // without startup.read a subuser reads no values (they can be secrets); they were in every record
    const blind = await subuser(id, ['control.console']);
    expect((await p.request('GET', `/api/v1/servers/${id}`, { token: blind })).body.data.variables).toEqual({});
    expect((await p.request('GET', '/api/v1/servers?limit=100', { token: blind })).body.data.find((s: any) => s.id === id).variables).toEqual({});
    expect(expectData(await gql(p, 'query ($id: ID!) { server(id: $id) { variables } }', { id }, { token: blind })).server.variables).toEqual({});
    for (const token of [owner.token, sub]) {
      expect((await p.request('GET', `/api/v1/servers/${id}`, { token })).body.data.variables).toEqual({ ...shown, PORT: '27016' });
      const list = await p.request('GET', '/api/v1/servers?limit=100', { token });
      expect(list.body.data.find((s: any) => s.id === id).variables).toEqual({ ...shown, PORT: '27016' });
      expect(list.text).not.toContain('hunter2');
      const q = expectData(await gql(p, 'query ($id: ID!) { server(id: $id) { variables } servers(limit: 100) { items { id variables } } }', { id }, { token }));
      expect(q.server.variables).toEqual({ ...shown, PORT: '27016' });
      expect(q.servers.items.find((s: any) => s.id === id).variables).toEqual({ ...shown, PORT: '27016' });
    }
    const asAdmin = { ...shown, PORT: '27016', SECRET: 'hunter2' };
    expect((await p.request('GET', `/api/v1/servers/${id}`, { token: admin })).body.data.variables).toEqual(asAdmin);
    const list = await p.request('GET', '/api/v1/servers?limit=100', { token: admin });
    expect(list.body.data.find((s: any) => s.id === id).variables).toEqual(asAdmin);
    expect(expectData(await gql(p, 'query ($id: ID!) { server(id: $id) { variables } }', { id }, { token: admin })).server.variables).toEqual(asAdmin);
  });

  test("blueprints show hidden variables to administrators only (REST list and read, GraphQL blueprint, blueprints and a server's blueprint)", async () => {
    const id = await newServer();
    const keysOf = (variables: { key: string }[]) => variables.map((v) => v.key);
    const VARIABLES = 'variables { key default userViewable }';
    const query = `query ($b: ID!, $s: ID!) { blueprint(id: $b) { ${VARIABLES} } blueprints(limit: 100) { items { id ${VARIABLES} } } server(id: $s) { blueprint { ${VARIABLES} } } }`;
    const read = async (token: string) => {
      const one = await p.request('GET', `/api/v1/blueprints/${blueprintId}`, { token });
      const list = await p.request('GET', '/api/v1/blueprints?limit=100', { token });
      const q = expectData(await gql(p, query, { b: blueprintId, s: id }, { token }));
      return {
        texts: [one.text, list.text, JSON.stringify(q)],
        keys: [one.body.data.variables, list.body.data.find((b: any) => b.id === blueprintId).variables, q.blueprint.variables, q.blueprints.items.find((b: any) => b.id === blueprintId).variables, q.server.blueprint.variables].map(keysOf),
      };
    };
    const user = await read(owner.token);
    for (const keys of user.keys) expect(keys).toEqual(['PORT', 'MOTD', 'MODE']);
    for (const text of user.texts) expect(text).not.toContain('hunter2');
    const byAdmin = await read(admin);
    for (const keys of byAdmin.keys) expect(keys).toEqual(['PORT', 'MOTD', 'SECRET', 'MODE']);
  });
});

test('a value kept under a key the blueprint no longer declares is for administrators only', async () => {
  // the hidden variables were a deny-list of the keys the blueprint declares hidden: once an
  // administrator renamed a hidden variable, its stored value showed to the owner and startup.read subusers
  const bp = await p.request('POST', '/api/v1/admin/blueprints', {
    token: admin,
    body: { key: 'startup-stale', name: 'stale', startup: './x {{PORT}}', stop: 'stop', variables: [
      { key: 'PORT', default: '1', rules: 'required|string' },
      { key: 'ADMIN_TOKEN', default: 'x', rules: 'required|string', userViewable: false, userEditable: false },
    ] },
  });
  expect(bp.status).toBe(201);
  const made = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'stale', nodeId, blueprintId: bp.body.data.id, memory: 64, cpu: 10, disk: 128 } });
  const id: string = made.body.data.id;
  expect((await p.request('PATCH', `/api/v1/servers/${id}`, { token: admin, body: { variables: { ADMIN_TOKEN: 'tok-admin-only' } } })).status).toBe(200);
  const renamed = [{ key: 'PORT', default: '1', rules: 'required|string' }, { key: 'API_TOKEN', default: 'x', rules: 'required|string', userViewable: false, userEditable: false }];
  expect((await p.request('PATCH', `/api/v1/admin/blueprints/${bp.body.data.id}`, { token: admin, body: { variables: renamed } })).status).toBe(200);
  const reader = await subuser(id, ['startup.read']);
  for (const token of [owner.token, reader]) {
    expect((await p.request('GET', `/api/v1/servers/${id}`, { token })).body.data.variables).toEqual({ PORT: '1' });
    const listed = (await p.request('GET', '/api/v1/servers?limit=100', { token })).body.data.find((s: any) => s.id === id);
    expect(listed.variables).toEqual({ PORT: '1' });
    expect(expectData(await gql(p, 'query($id: ID!) { server(id: $id) { variables } }', { id }, { token })).server.variables).toEqual({ PORT: '1' });
  }
  expect((await p.request('GET', `/api/v1/servers/${id}`, { token: admin })).body.data.variables).toMatchObject({ ADMIN_TOKEN: 'tok-admin-only' });
});
