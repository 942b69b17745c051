/**
 * Downloading a backup of many files (a real agent, real files): the `.tar.gz` holds every entry, and
 * the agent (in this process) opens the stored files one at a time. It opened a descriptor for every
 * file of the backup at once (3,000 files: some 2,500 descriptors; 25,000: EMFILE, and the download
 * was cut off).
 */
import { readdirSync } from 'node:fs';
import { Readable } from 'node:stream';
import { list as tarList } from 'tar';
import { signRequest } from '../../src/shared/node-protocol';
import type { Harness } from './helpers';
import { backupWorld } from './backup-world';

jest.setTimeout(120_000);

const w = backupWorld(256);
const { backup, asServer } = w;
let h: Harness;
const id = w.id;
beforeAll(() => {
  ({ h } = w);
});

/** How many entries a `.tar.gz` holds. */
async function tarCount(gz: Buffer): Promise<number> {
  let n = 0;
  await new Promise<void>((resolve, reject) => {
    const parser = tarList({ onReadEntry: () => void n++ });
    parser.on('end', resolve).on('error', reject);
    Readable.from([gz]).pipe(parser as unknown as NodeJS.WritableStream);
  });
  return n;
}

const openFds = () => readdirSync('/proc/self/fd').length;

test('a backup of 3,000 files downloads whole, its stored files opened one at a time', async () => {
  await asServer('mkdir -p many && cd many && for i in $(seq 1 3000); do echo "file $i" > e$i; done');
  expect(await backup('many')).toMatchObject({ status: 'completed', files: 3000 });
  const before = openFds();
  const url = `/api/servers/${id}/backups/many/download`;
  const res = await fetch(h.base + url, { headers: { authorization: signRequest(h.nodeId, h.nodeKey, 'GET', url, '') } });
  expect(res.status).toBe(200);
  const chunks: Buffer[] = [];
  let most = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    chunks.push(Buffer.from(chunk));
    most = Math.max(most, openFds() - before);
  }
  // the folder and its 3,000 files
  expect(await tarCount(Buffer.concat(chunks))).toBe(3001);
  expect(most).toBeLessThan(50);
});
