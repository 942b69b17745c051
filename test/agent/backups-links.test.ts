/**
 * Links come back from a restore as the server had them (a real agent, real files): their targets
 * byte for byte, absolute ones and ones leading out of the server included. They were rewritten as
 * links made over SFTP are (`/home/container/data` came back `home/container/data`, `/etc` came back
 * `etc`) and one leading out (`../../..`) was left out without a word. A link leading out is still
 * never followed.
 */
import { lstatSync, readlinkSync, rmSync } from 'node:fs';
import path from 'node:path';
import { signRequest } from '../../src/shared/node-protocol';
import type { Harness } from './helpers';
import { backupWorld } from './backup-world';

jest.setTimeout(120_000);

const w = backupWorld(64);
const { backup, restore, asServer } = w;
let h: Harness;
let dir: string;
const id = w.id;
beforeAll(() => {
  ({ h, dir } = w);
});

const LINKS: Record<string, string> = {
  etc: '/etc',
  container: '/home/container/data',
  host: '', // the server's own folder by its path on the node (set below)
  up: '../../..',
  odd: 'data/../data/./f',
  inside: 'data/f',
};

test('a restore puts back every link with its target as it was; one leading out is still not followed', async () => {
  LINKS.host = path.join(dir, 'data');
  const links = Object.keys(LINKS);
  await asServer(`mkdir -p data && echo x > data/f && ${links.map((l) => `ln -s '${LINKS[l]}' ${l}`).join(' && ')}`);
  expect((await backup('links')).status).toBe('completed');
  for (const l of links) rmSync(path.join(dir, l));
  expect(await restore('links', false)).toMatchObject({ status: 'completed' });
  const target = (l: string) => (lstatSync(path.join(dir, l), { throwIfNoEntry: false }) ? readlinkSync(path.join(dir, l)) : null);
  expect(Object.fromEntries(links.map((l) => [l, target(l)]))).toEqual(LINKS);
  for (const l of links) expect([l, lstatSync(path.join(dir, l)).uid]).toEqual([l, lstatSync(dir).uid]);
  const get = async (sub: string, p: string) => {
    const url = `/api/servers/${id}/files${sub}?path=${encodeURIComponent(p)}`;
    return (await fetch(h.base + url, { headers: { authorization: signRequest(h.nodeId, h.nodeKey, 'GET', url) } })).status;
  };
  expect(await get('/contents', '/etc/passwd')).toBe(422);
  expect(await get('', '/up')).toBe(422);
  expect(await get('/contents', '/inside')).toBe(200);
});
