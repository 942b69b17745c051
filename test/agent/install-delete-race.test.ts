/**
 * A DELETE right after the PUT that creates (and installs) a server: the PUT answers 200 or 404, never
 * 500, and nothing of the server stays (its folder, its install log). The install went on after the
 * delete had renamed the folder away, and failed on it (ENOENT, answered 500).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openInstallLog, removeInstallLog } from '../../src/agent/server/install';
import { newId, sleep, specFor, startHarness, type Harness } from './helpers';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  expect(await h.close()).toEqual([]);
});

test('a DELETE racing the PUT that installs a new server: the PUT is 200 or 404, and nothing of the server stays', async () => {
  const answers: string[] = [];
  for (let i = 0; i < 12; i++) {
    const id = newId();
    const spec = specFor('shell-command', id, { install: `echo install-${i}; exec sleep 300` }, { COMMAND: 'sleep 1000' });
    const put = h.request('PUT', `/api/servers/${id}`, spec);
    await sleep(i % 4);
    const del = await h.request('DELETE', `/api/servers/${id}`);
    const created = await put;
    answers.push(`${created.status} ${del.status}`);
    expect([200, 404]).toContain(created.status);
    expect(del.status).toBe(204);
    await sleep(200);
    expect(existsSync(path.join(h.dataDir, 'agent', 'servers', id))).toBe(false);
    expect(existsSync(path.join(h.dataDir, 'agent', 'install-logs', `${id}.log`))).toBe(false);
  }
}, 120_000);

test('an install log removed right after it was opened stays removed (the delete of a server during its install)', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'hostpanel-install-log-'));
  try {
    for (let i = 0; i < 200; i++) {
      const log = await openInstallLog(dir, `srv-${i}`);
      log.destroy();
      await removeInstallLog(dir, `srv-${i}`);
    }
    await sleep(100);
    expect(await readdir(dir)).toEqual([]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
