/**
 * SFTP's activity entries carry the types of the file manager's entries of the same events (numbers as
 * numbers, lists as arrays), and the panel checks what a node reports: bounded, typed, and junk refused.
 */
import { randomUUID } from 'node:crypto';
import { deriveNodeKey, signRequest } from '../../src/shared/node-protocol.js';
import { blueprintsByKey, createLocalDemoServer, createNode } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { connectSftp } from '../support/sftp-client.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
let admin: string;
let owner: { token: string; email: string; password: string; user: any };

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0 });
  admin = (await p.admin()).token;
  owner = await p.newUser('Owner');
}, 120_000);
afterAll(async () => {
  await p?.stop();
}, 60_000);

const entriesOf = async (serverId: string, event: string): Promise<any[]> =>
  (await p.request('GET', `/api/v1/servers/${serverId}/activity?event=${event}&limit=100`, { token: owner.token })).body.data;

describe('over SFTP and over the file manager', () => {
  let serverId: string;
  beforeAll(async () => {
    serverId = await createLocalDemoServer(p, admin, owner.token, 'Typed');
  }, 60_000);

  const put = (file: string) =>
    p.request('PUT', `/api/v1/servers/${serverId}/files/contents?path=${encodeURIComponent(file)}`, { token: owner.token, raw: 'x', headers: { 'content-type': 'text/plain' } });

  test('uploads, deletes and renames have the same property types', async () => {
    for (const f of ['/a.txt', '/b.txt', '/c.txt', '/d.txt', '/r1.txt']) expect((await put(f)).status).toBe(200);
    expect((await p.request('POST', `/api/v1/servers/${serverId}/files/delete`, { token: owner.token, body: { paths: ['/a.txt', '/b.txt'] } })).status).toBe(204);
    expect((await p.request('POST', `/api/v1/servers/${serverId}/files/rename`, { token: owner.token, body: { from: '/r1.txt', to: '/r2.txt' } })).status).toBeLessThan(300);
    const { port } = (await p.request('GET', `/api/v1/servers/${serverId}/sftp`, { token: owner.token })).body.data;
    const username = `${owner.email}.${serverId.slice(0, 8)}`;
    // one session: two deletes, one rename, one upload (each a batch of its kind)
    const c = await connectSftp({ port, username, password: owner.password });
    try {
      await c.unlink('/c.txt');
      await c.unlink('/d.txt');
      await c.rename('/r2.txt', '/r3.txt');
      await c.writeFile('/up.txt', 'hello');
    } finally {
      c.end();
    }
    // another: three uploads
    const c2 = await connectSftp({ port, username, password: owner.password });
    try {
      for (const f of ['/m1.txt', '/m2.txt', '/m3.txt']) await c2.writeFile(f, 'x');
    } finally {
      c2.end();
    }
    const deletes = await until(async () => ((await entriesOf(serverId, 'server:file.delete')).length >= 2 ? entriesOf(serverId, 'server:file.delete') : null), 15_000, 'the deletes');
    const renames = await until(async () => ((await entriesOf(serverId, 'server:file.rename')).length >= 2 ? entriesOf(serverId, 'server:file.rename') : null), 15_000, 'the renames');
    const uploads = await until(async () => ((await entriesOf(serverId, 'server:file.upload')).filter((e) => e.properties.via === 'sftp').length >= 2 ? entriesOf(serverId, 'server:file.upload') : null), 15_000, 'the uploads');
    const sftp = (list: any[]) => list.filter((e) => e.properties.via === 'sftp').map((e) => e.properties);
    const rest = (list: any[]) => list.filter((e) => e.properties.via === undefined).map((e) => e.properties);

    expect(rest(deletes)).toEqual([{ count: 2, paths: ['/a.txt', '/b.txt'] }]);
    expect(sftp(deletes)).toEqual([{ via: 'sftp', count: 2, paths: ['/c.txt', '/d.txt'] }]);

    expect(rest(renames)).toEqual([{ from: '/r1.txt', to: '/r2.txt' }]);
    expect(sftp(renames)).toEqual([{ via: 'sftp', count: 1, from: '/r2.txt', to: '/r3.txt', renames: [{ from: '/r2.txt', to: '/r3.txt' }] }]);

    // the file manager's upload names the file; SFTP's of one file does too, with the count and list
    expect(sftp(uploads)).toEqual(
      expect.arrayContaining([
        { via: 'sftp', count: 1, path: '/up.txt', paths: ['/up.txt'] },
        { via: 'sftp', count: 3, paths: ['/m1.txt', '/m2.txt', '/m3.txt'] },
      ]),
    );
    for (const props of [...sftp(deletes), ...sftp(renames), ...sftp(uploads)]) {
      expect(typeof props.count).toBe('number');
      expect(Array.isArray(props.paths ?? props.renames)).toBe(true);
    }
  }, 60_000);
});

describe("the panel's intake of a node's reports", () => {
  let node: { id: string; token: string };
  let serverId: string;
  beforeAll(async () => {
    node = await createNode(p, admin);
    const blueprints = await blueprintsByKey(p, owner.token);
    const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'Reported', nodeId: node.id, blueprintId: blueprints['demo-game'].id, memory: 64, cpu: 10, disk: 128 } });
    expect(r.status).toBe(201);
    serverId = r.body.data.id;
  });

  const send = (events: unknown[]) => {
    const raw = JSON.stringify({ events });
    const authorization = signRequest(node.id, deriveNodeKey(node.token), 'POST', '/api/agent/v1/events', raw);
    return p.request('POST', '/api/agent/v1/events', { raw, headers: { authorization, 'content-type': 'application/json' } });
  };
  const report = (event: string, properties: unknown) => ({ kind: 'activity', serverId, userId: owner.user.id, event, properties, ip: '198.51.100.7', at: new Date().toISOString() });

  test('typed SFTP reports are recorded as sent', async () => {
    const r = await send([
      report('server:file.delete', { via: 'sftp', count: 120, paths: ['/x/1', '/x/2'] }),
      report('server:file.rename', { via: 'sftp', count: 2, renames: [{ from: '/p', to: '/q' }, { from: '/s', to: '/t' }] }),
      report('server:file.create-directory', { via: 'sftp', count: 1, paths: ['/new'], path: '/new' }),
      report('server:file.chmod', { via: 'sftp', count: 3, paths: ['/m1', '/m2', '/m3'] }),
    ]);
    expect(r.status).toBe(204);
    expect((await entriesOf(serverId, 'server:file.create-directory')).find((e) => e.properties.via === 'sftp')?.properties).toEqual({ via: 'sftp', count: 1, paths: ['/new'], path: '/new' });
    expect((await entriesOf(serverId, 'server:file.chmod')).find((e) => e.properties.count === 3)?.properties).toEqual({ via: 'sftp', count: 3, paths: ['/m1', '/m2', '/m3'] });
    const del = (await entriesOf(serverId, 'server:file.delete')).find((e) => e.properties.count === 120);
    expect(del?.properties).toEqual({ via: 'sftp', count: 120, paths: ['/x/1', '/x/2'] });
    const ren = (await entriesOf(serverId, 'server:file.rename')).find((e) => e.properties.count === 2);
    expect(ren?.properties).toEqual({ via: 'sftp', count: 2, renames: [{ from: '/p', to: '/q' }, { from: '/s', to: '/t' }] });
  });

  test("an older agent's text properties (still in its queue file) are recorded with the types", async () => {
    const r = await send([
      report('server:file.delete', { via: 'sftp', count: '3', paths: '/old/1\n/old/2\n/old/3' }),
      report('server:file.rename', { via: 'sftp', count: '1', paths: '/old/a -> /old/b' }),
    ]);
    expect(r.status).toBe(204);
    const del = (await entriesOf(serverId, 'server:file.delete')).find((e) => e.properties.count === 3);
    expect(del?.properties).toEqual({ via: 'sftp', count: 3, paths: ['/old/1', '/old/2', '/old/3'] });
    const ren = (await entriesOf(serverId, 'server:file.rename')).find((e) => e.properties.count === 1);
    expect(ren?.properties).toEqual({ via: 'sftp', count: 1, renames: [{ from: '/old/a', to: '/old/b' }] });
  });

  test('a crash the node sends twice (killed before it dropped the acknowledged batch) is counted once; the next crash counts', async () => {
    const crash = (at: string) => ({ serverId, status: 'offline', reason: 'crashed', exitCode: 1, at });
    const first = new Date().toISOString();
    expect((await send([crash(first)])).status).toBe(204);
    expect((await send([crash(first)])).status).toBe(204);
    const once = (await p.request('GET', `/api/v1/servers/${serverId}`, { token: owner.token })).body.data;
    expect({ crashes: once.crashCount, at: once.lastCrashAt }).toEqual({ crashes: 1, at: first });
    const second = new Date(Date.parse(first) + 5000).toISOString();
    expect((await send([crash(second)])).status).toBe(204);
    const twice = (await p.request('GET', `/api/v1/servers/${serverId}`, { token: owner.token })).body.data;
    expect({ crashes: twice.crashCount, at: twice.lastCrashAt }).toEqual({ crashes: 2, at: second });
  });

  test('a report the node sends twice (its request timed out while the panel wrote it) is recorded once, by its id', async () => {
    const again = { ...report('server:console.command', { command: 'say once' }), id: randomUUID() };
    expect((await send([again])).status).toBe(204);
    expect((await send([again, again])).status).toBe(204);
    const other = { ...again, id: randomUUID() };
    expect((await send([other])).status).toBe(204);
    const entries = (await entriesOf(serverId, 'server:console.command')).filter((e) => e.properties.command === 'say once');
    expect(entries.map((e) => e.id).sort()).toEqual([again.id, other.id].sort());
  });

  test('a malformed report costs only itself: the rest of its batch is recorded, and the answer names it', async () => {
    const r = await send([
      report('server:console.command', { command: 'say before' }),
      report('server:file.delete', { via: 'sftp', count: 'many', paths: ['/a'] }),
      report('server:console.command', { command: 'say after' }),
    ]);
    const said = (await entriesOf(serverId, 'server:console.command')).map((e) => e.properties.command);
    expect(said).toEqual(expect.arrayContaining(['say before', 'say after']));
    expect([r.status, r.body.error.code]).toEqual([422, 'VALIDATION_ERROR']);
    expect(Object.keys(r.body.error.details.fields)).toEqual(['events.1.properties.count']);
  });

  test.each([
    ['a count that is not a whole number', 'server:file.delete', { via: 'sftp', count: 1.5, paths: ['/a'] }],
    ['a count that is text', 'server:file.delete', { via: 'sftp', count: 'many', paths: ['/a'] }],
    ['a list of paths that is not a list', 'server:file.upload', { via: 'sftp', count: 1, paths: { a: 1 } }],
    ['more paths than an entry names', 'server:file.delete', { via: 'sftp', count: 60, paths: Array.from({ length: 51 }, (_, i) => `/f${i}`) }],
    ['a path over 4096 characters', 'server:file.delete', { via: 'sftp', count: 1, paths: ['/' + 'a'.repeat(5000)] }],
    ['paths over the total', 'server:file.delete', { via: 'sftp', count: 5, paths: Array.from({ length: 5 }, () => '/' + 'b'.repeat(4000)) }],
    ['an unknown property', 'server:file.delete', { via: 'sftp', count: 1, paths: ['/a'], extra: 'x' }],
    ['a rename that is not from/to', 'server:file.rename', { via: 'sftp', count: 1, renames: [{ from: '/a', to: '/b', evil: 1 }] }],
    ['a file report not from SFTP', 'server:file.delete', { via: 'console', count: 1, paths: ['/a'] }],
    ['a console report with a list', 'server:console.command', { command: ['say', 'hi'] }],
    ['a console report with a number', 'server:power.start', { count: 2 }],
    ['an event the node does not report', 'server:file.compress', { via: 'sftp', count: 1, paths: ['/a'] }],
  ])('junk is refused: %s', async (_what, event, properties) => {
    const before = (await p.request('GET', `/api/v1/servers/${serverId}/activity?limit=100`, { token: owner.token })).body.data.length;
    const r = await send([report(event, properties)]);
    expect([r.status, r.body?.error?.code]).toEqual([422, 'VALIDATION_ERROR']);
    expect((await p.request('GET', `/api/v1/servers/${serverId}/activity?limit=100`, { token: owner.token })).body.data.length).toBe(before);
  });
});
