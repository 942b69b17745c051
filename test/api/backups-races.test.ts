/**
 * Backups when things happen at once, through the panel with the local node agent and real files:
 * a backup made while an older one is deleted, a backup deleted while it runs, a lock and a delete of
 * the same backup together, and a download of a backup whose stored copy of a file went missing.
 */
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { list as tarList } from 'tar';
import { blueprintsByKey, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

jest.setTimeout(240_000);

const FILES = 1500;
let p: TestPlatform;
let token: string;
let serverId: string;
let smallId: string;
const B = (id: string, sub = '') => `/api/v1/servers/${id}/backups${sub}`;
const store = (id: string, sub: string) => path.join(p.config.dataDir, 'agent', 'backups', id, sub);
/** The files in a folder of the node's backup store (blobs are one folder deeper). */
const stored = (id: string, sub: 'manifests' | 'blobs'): string[] => {
  const top = (() => {
    try {
      return readdirSync(store(id, sub));
    } catch {
      return [];
    }
  })();
  return sub === 'manifests' ? top : top.flatMap((prefix) => readdirSync(path.join(store(id, sub), prefix)));
};

async function settled(server: string, id: string): Promise<any> {
  return until(async () => {
    const b = (await p.request('GET', B(server, `/${id}`), { token })).body.data;
    return b?.status !== 'pending' ? b : null;
  }, 120_000, `backup ${id}`);
}

async function backup(server: string): Promise<string> {
  const r = await p.request('POST', B(server), { token, body: {} });
  expect(r.status).toBe(201);
  return r.body.data.id;
}

/**
 * Starts the server, whose command writes FILES files of new random contents, and waits until it has.
 * The last run's `done` goes first: the command removes it too, but a wait that saw it before the
 * command's first step stopped the server halfway (a backup of 1,500 files, not 1,501).
 */
async function rewriteFiles(): Promise<void> {
  rmSync(path.join(p.config.dataDir, 'agent', 'servers', serverId, 'done'), { force: true });
  expect((await p.request('POST', `/api/v1/servers/${serverId}/start`, { token })).status).toBe(200);
  await until(async () => (await p.request('GET', `/api/v1/servers/${serverId}`, { token })).body.data.status === 'running' && readdirSync(path.join(p.config.dataDir, 'agent', 'servers', serverId)).includes('done'), 30_000, 'the files written');
  expect((await p.request('POST', `/api/v1/servers/${serverId}/stop`, { token })).status).toBe(200);
  await waitForStatus(p, token, serverId, 'offline');
}

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, backupLimitDefault: 10, rateLimits: { general: 100_000, auth: 100_000, admin: 100_000 } });
  const admin = await p.admin();
  token = (await p.newUser('owner')).token;
  const [nodeId, bps] = await Promise.all([localNodeId(p, admin.token), blueprintsByKey(p, token)]);
  const make = async (name: string, command: string) => {
    const r = await p.request('POST', '/api/v1/servers', { token, body: { name, nodeId, blueprintId: bps['shell-command'].id, memory: 128, cpu: 50, disk: 256, variables: { COMMAND: command } } });
    await waitForStatus(p, token, r.body.data.id, 'offline');
    return r.body.data.id as string;
  };
  serverId = await make('many files', `rm -f done; for i in $(seq 1 ${FILES}); do echo "$i $RANDOM $RANDOM $RANDOM" > f$i.txt; done; touch done; echo ready; exec sleep 600`);
  smallId = await make('small', 'exec sleep 600');
  await p.request('PUT', `/api/v1/servers/${smallId}/files/contents?path=/a.txt`, { token, raw: 'a', headers: { 'content-type': 'text/plain' } });
}, 120_000);
afterAll(async () => {
  await p?.stop();
}, 60_000);

test('a backup made while an older one is deleted keeps a copy of every file: it downloads and restores whole', async () => {
  // the delete's cleanup removed the stored copies no finished backup named: the new backup's,
  // some of which it had found already stored, so it completed without them
  await rewriteFiles();
  const older = await backup(serverId);
  expect((await settled(serverId, older)).status).toBe('completed');
  await rewriteFiles();
  const [newer, deleted] = await Promise.all([backup(serverId), p.request('DELETE', B(serverId, `/${older}`), { token })]);
  expect(deleted.status).toBe(204);
  expect(await settled(serverId, newer)).toMatchObject({ status: 'completed', files: FILES + 1 });
  const download = await fetch(`${p.url}${B(serverId, `/${newer}/download`)}`, { headers: { authorization: `Bearer ${token}` } });
  expect([download.status, download.status === 200 ? '' : await download.text()]).toEqual([200, '']);
  const names: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const parser = tarList({ onReadEntry: (e) => void names.push(e.path) });
    parser.on('end', resolve).on('error', reject);
    download.arrayBuffer().then((b) => Readable.from([Buffer.from(b)]).pipe(parser as unknown as NodeJS.WritableStream), reject);
  });
  expect(names.filter((n) => /^f\d+\.txt$/.test(n))).toHaveLength(FILES);
  expect((await p.request('POST', B(serverId, `/${newer}/restore`), { token, body: {} })).status).toBe(200);
  // a backup asked for during the restore is refused before a record is made (a failed one stayed)
  const during = await p.request('POST', B(serverId), { token, body: {} });
  expect([during.status, during.body.error?.code]).toEqual([422, 'INVALID_STATE']);
  expect((await p.request('GET', B(serverId), { token })).body.data.map((b: any) => b.status)).not.toContain('failed');
  await until(async () => {
    const log = await p.request('GET', `/api/v1/servers/${serverId}/activity?event=server:backup.restore`, { token });
    return log.body.data.find((e: any) => e.properties.backupId === newer && e.event !== 'server:backup.restore');
  }, 60_000, 'the restore to end').then((e: any) => expect([e.event, e.properties.error]).toEqual(['server:backup.restore-complete', undefined]));
  expect((await p.request('DELETE', B(serverId, `/${newer}`), { token })).status).toBe(204);
});

test('a backup deleted while it runs stops, and nothing of it stays on the node', async () => {
  // it went on and wrote its manifest after the delete: a backup the panel no longer knew, whose
  // stored files nothing ever freed
  const id = await backup(serverId);
  await until(() => stored(serverId, 'blobs').length > 0, 30_000, 'the backup under way');
  expect((await p.request('DELETE', B(serverId, `/${id}`), { token })).status).toBe(204);
  // (the node deletes what the backup stored before it answers; a loaded machine gets time anyway)
  await until(() => stored(serverId, 'manifests').length + stored(serverId, 'blobs').length === 0, 30_000, 'the stopped backup\u2019s files to go').catch(() => undefined);
  expect([stored(serverId, 'manifests'), stored(serverId, 'blobs')]).toEqual([[], []]);
  // and the next backup is whole
  const next = await backup(serverId);
  expect(await settled(serverId, next)).toMatchObject({ status: 'completed', files: FILES + 1 });
  expect(stored(serverId, 'manifests')).toEqual([`${next}.json`]);
  expect((await p.request('DELETE', B(serverId, `/${next}`), { token })).status).toBe(204);
});

test('a lock and a delete of one backup at once, or three deletes, end as one order of them would', async () => {
  for (let round = 0; round < 5; round++) {
    const id = await backup(smallId);
    expect((await settled(smallId, id)).status).toBe('completed');
    const [lock, del] = await Promise.all([p.request('POST', B(smallId, `/${id}/lock`), { token }), p.request('DELETE', B(smallId, `/${id}`), { token })]);
    const after = await p.request('GET', B(smallId, `/${id}`), { token });
    // the lock first: the delete refuses; the delete first: the lock finds nothing
    if (del.status === 204) expect([lock.status, after.status]).toEqual([404, 404]);
    else expect([lock.status, del.status, del.body.error.code, after.body.data.locked]).toEqual([200, 422, 'INVALID_STATE', true]);
    if (after.status === 200) expect((await p.request('POST', B(smallId, `/${id}/unlock`), { token })).status).toBe(200);
    if (after.status === 200) expect((await p.request('DELETE', B(smallId, `/${id}`), { token })).status).toBe(204);
  }
  const id = await backup(smallId);
  expect((await settled(smallId, id)).status).toBe('completed');
  const deletes = await Promise.all([1, 2, 3].map(() => p.request('DELETE', B(smallId, `/${id}`), { token })));
  expect(deletes.map((r) => r.status).sort()).toEqual([204, 404, 404]);
  const log = await p.request('GET', `/api/v1/servers/${smallId}/activity?event=server:backup.delete&limit=100`, { token });
  expect(log.body.data.filter((e: any) => e.properties.backupId === id)).toHaveLength(1);
});

test('a backup whose stored copy of a file is missing: the download is refused with the reason, and the node goes on', async () => {
  // archiver read the missing copy only when its turn came: the error was uncaught (the agent, and
  // every server on it, went down) or the download hung
  const id = await backup(smallId);
  expect((await settled(smallId, id)).status).toBe('completed');
  for (const prefix of readdirSync(store(smallId, 'blobs'))) rmSync(path.join(store(smallId, 'blobs'), prefix), { recursive: true });
  const r = await p.request('GET', B(smallId, `/${id}/download`), { token });
  expect([r.status, r.body.error.code, r.body.error.message]).toEqual([422, 'INVALID_STATE', 'The backup\u2019s copy of /a.txt is missing: this backup cannot be downloaded or restored whole. Make a new backup.']);
  expect((await p.request('GET', `/api/v1/servers/${smallId}/files?path=/`, { token })).status).toBe(200);
  // a restore that needs it (the file changed since) fails naming the file, without the node's own
  // paths (users read it in the activity log)
  expect((await p.request('PUT', `/api/v1/servers/${smallId}/files/contents?path=/a.txt`, { token, raw: 'changed', headers: { 'content-type': 'text/plain' } })).status).toBe(200);
  expect((await p.request('POST', B(smallId, `/${id}/restore`), { token, body: {} })).status).toBe(200);
  const failed = await until(async () => {
    const log = await p.request('GET', `/api/v1/servers/${smallId}/activity?event=server:backup.restore-fail`, { token });
    return log.body.data.find((e: any) => e.properties.backupId === id);
  }, 30_000, 'the restore to fail');
  expect(failed.properties.error).toBe('The backup\u2019s copy of /a.txt is missing: that file was not restored. Make a new backup.');
});
