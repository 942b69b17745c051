/**
 * A restore and a delete of the same backup, asked for together (a real agent, real files): one of
 * them is refused, and a restore that is accepted completes. The restore read the backup's manifest
 * before it claimed the server, and the delete looked for a restore only at its start: both were
 * accepted, the delete freed the stored files, and the restore failed partway ("The backup's copy
 * of /d/f1 is missing").
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { RestoreReport } from '../../src/shared/node-protocol';
import { waitFor, waitStatus, type Harness } from './helpers';
import { backupWorld } from './backup-world';

jest.setTimeout(120_000);

const w = backupWorld(64);
const { backup, asServer, events } = w;
let h: Harness;
const id = w.id;
beforeAll(() => {
  ({ h } = w);
});

/** 200 files of new random contents: no other backup holds them. */
const scramble = () => asServer('mkdir -p d && for i in $(seq 1 200); do head -c 20000 /dev/urandom > d/f$i; done');

test('a restore and a delete of one backup at once: never both accepted, and an accepted restore completes', async () => {
  await scramble();
  const outcomes: string[] = [];
  for (let k = 0; k < 6; k++) {
    const b = `rd${k}`;
    expect((await backup(b)).status).toBe('completed');
    await scramble();
    const [restore, remove] = await Promise.all([h.request('POST', `/api/servers/${id}/backups/${b}/restore`, { truncate: true }), h.request('DELETE', `/api/servers/${id}/backups/${b}`)]);
    const end = restore.status === 200 ? await waitFor(() => events(b).find((e): e is RestoreReport => e.kind === 'restore'), 'the restore', 60_000) : null;
    outcomes.push(`restore ${restore.status} ${end ? `${end.status} ${end.error ?? ''}` : restore.body?.error?.code} / delete ${remove.status}`);
    expect(existsSync(path.join(h.dataDir, 'agent', 'backups', id, 'manifests', `${b}.json`))).toBe(remove.status !== 204);
    await waitStatus(h, id, 'offline');
  }
  // one of the two is accepted, and a restore accepted completes
  const ok = (o: string) => /^restore 200 completed .*delete 422$|^restore (404|422) .*delete 204$/.test(o);
  expect(outcomes.filter((o) => !ok(o))).toEqual([]);
});
