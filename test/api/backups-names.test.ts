/**
 * The names in a backup's download, through the panel with the local node agent and real files: every
 * member is named exactly as the file is (its path less the leading `/`). Linux names may hold a
 * backslash or start with `word:`; archiver's name sanitizing turned `d/..\..\..\evil.txt` into
 * `d/../../../evil.txt` (a member that leads out of the extraction folder), `back\slash` into
 * `back/slash`, and `minecraft:stone.json` into `stone.json` (two members of one name).
 */
import { Readable } from 'node:stream';
import { list as tarList } from 'tar';
import { blueprintsByKey, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

jest.setTimeout(90_000);

let p: TestPlatform;
let owner: { token: string; user: any; email: string; password: string };
let sid: string;
const B = (sub = '') => `/api/v1/servers/${sid}/backups${sub}`;
const F = (sub = '', q = '') => `/api/v1/servers/${sid}/files${sub}${q ? `?${q}` : ''}`;
const put = (file: string, text: string) => p.request('PUT', F('/contents', `path=${encodeURIComponent(file)}`), { token: owner.token, raw: text, headers: { 'content-type': 'text/plain' } });

async function download(id: string): Promise<Buffer> {
  const res = await fetch(p.url + B(`/${id}/download`), { headers: { authorization: `Bearer ${owner.token}` } });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

/** The archive's members in order: the name its header holds, its type, and a file's contents. */
async function members(tgz: Buffer): Promise<{ name: string; type: string; text: string }[]> {
  const out: { name: string; type: string; text: string }[] = [];
  await new Promise<void>((resolve, reject) =>
    Readable.from(tgz)
      .pipe(
        tarList({
          onentry: (e: any) => {
            const m = { name: e.header?.path ?? e.path, type: e.type, text: '' };
            out.push(m);
            e.on('data', (c: Buffer) => (m.text += c.toString('utf8')));
          },
        }),
      )
      .on('finish', resolve)
      .on('error', reject),
  );
  return out;
}

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, backupLimitDefault: 5 });
  const admin = await p.admin();
  owner = await p.newUser('owner');
  const nodeId = await localNodeId(p, admin.token);
  const bps = await blueprintsByKey(p, owner.token);
  const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'names', nodeId, blueprintId: bps['shell-command'].id, memory: 128, cpu: 50, disk: 128, variables: { COMMAND: 'echo ready; exec sleep 600' } } });
  expect(r.status).toBe(201);
  sid = r.body.data.id;
  await waitForStatus(p, owner.token, sid, 'offline');
}, 120_000);
afterAll(async () => {
  await p?.stop();
}, 60_000);

test('the download names every member exactly as its file: backslashes, `word:` prefixes and long names kept, nothing leading out', async () => {
  const long = `deep/${'n'.repeat(150)}/${'é'.repeat(60)}.txt`;
  for (const dir of ['/d', '/deep', `/deep/${'n'.repeat(150)}`]) expect((await p.request('POST', F('/directory'), { token: owner.token, body: { path: dir } })).status).toBe(201);
  for (const [file, text] of [
    ['/d/..\\..\\..\\evil.txt', 'pwned'],
    ['/back\\slash', 'one name'],
    ['/minecraft:stone.json', 'namespaced'],
    ['/stone.json', 'plain'],
    [`/${long}`, 'long'],
  ]) {
    expect((await put(file, text)).status).toBeLessThan(300);
  }
  const c = await p.request('POST', B(), { token: owner.token, body: { name: 'names' } });
  expect(c.status).toBe(201);
  const done = await until(async () => {
    const b = (await p.request('GET', B(`/${c.body.data.id}`), { token: owner.token })).body.data;
    return b?.status !== 'pending' ? b : null;
  }, 30_000, 'backup');
  expect(done.status).toBe('completed');

  const tgz = await download(done.id);
  const list = await members(tgz);
  const names = list.map((m) => m.name);
  // no member has `..` as a part of its name, and none starts at the root
  expect(names.filter((n) => n.split('/').includes('..') || n.startsWith('/'))).toEqual([]);
  // each file is one member, named as the file is, with its contents
  const file = (name: string) => list.filter((m) => m.name === name);
  expect(file('d/..\\..\\..\\evil.txt')).toEqual([{ name: 'd/..\\..\\..\\evil.txt', type: 'File', text: 'pwned' }]);
  expect(file('back\\slash')).toEqual([{ name: 'back\\slash', type: 'File', text: 'one name' }]);
  expect(file('minecraft:stone.json')).toEqual([{ name: 'minecraft:stone.json', type: 'File', text: 'namespaced' }]);
  expect(file('stone.json')).toEqual([{ name: 'stone.json', type: 'File', text: 'plain' }]);
  expect(file(long)).toEqual([{ name: long, type: 'File', text: 'long' }]);
  expect(names).not.toContain('back/slash');
  expect(names).toContain('d/');
  // two downloads of one backup are the same bytes
  expect((await download(done.id)).equals(tgz)).toBe(true);
});
