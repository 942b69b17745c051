/**
 * Server uids: one per server, never shared, kept across agent restarts (the agent runs as root here).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SERVER_UID_BASE, SERVER_UID_SPAN } from '../../src/agent/environment/isolation';
import { createServer, newId, specFor, startHarness, waitFor, type Harness } from './helpers';

const asRoot = process.getuid?.() === 0;
const maybe = asRoot ? test : test.skip;

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** uid per server id, as saved in state.json. */
function savedUids(): Map<string, number> {
  const state = JSON.parse(readFileSync(path.join(h.dataDir, 'agent', 'state.json'), 'utf8')) as { servers: Record<string, { uid?: number }> };
  return new Map(Object.entries(state.servers).map(([id, s]) => [id, s.uid as number]));
}

/** Two server ids that land on the same uid with the old hash (2,000,000 + sha256 mod 1,000,000). */
function hashTwins(): [string, string] {
  const seen = new Map<number, string>();
  for (;;) {
    const id = newId();
    const n = createHash('sha256').update(id).digest().readUInt32BE(0) % SERVER_UID_SPAN;
    const twin = seen.get(n);
    if (twin) return [twin, id];
    seen.set(n, id);
  }
}

maybe('every server gets a uid of its own, saved with it and kept when the agent restarts', async () => {
  const ids = [...hashTwins(), ...Array.from({ length: 30 }, () => newId())];
  // created all at once: allocation must not hand one uid out twice
  await Promise.all(ids.map((id) => createServer(h, specFor('shell-command', id, { install: null }, { COMMAND: 'id -u' }))));
  const uids = await waitFor(() => {
    const m = savedUids();
    return ids.every((id) => typeof m.get(id) === 'number') ? m : null;
  }, 'state.json with every server');
  const mine = ids.map((id) => uids.get(id)!);
  expect(new Set(mine).size).toBe(ids.length);
  for (const uid of mine) {
    expect(uid).toBeGreaterThanOrEqual(SERVER_UID_BASE);
    expect(uid).toBeLessThan(SERVER_UID_BASE + SERVER_UID_SPAN);
  }
  h.panel.servers = ids.map((id) => ({ spec: specFor('shell-command', id, { install: null }, { COMMAND: 'id -u' }), status: 'offline' }));
  await h.restartAgent(true);
  // a new server after the restart does not take one of the kept uids
  const late = newId();
  await createServer(h, specFor('shell-command', late, { install: null }, { COMMAND: 'id -u' }));
  const after = await waitFor(() => {
    const m = savedUids();
    return typeof m.get(late) === 'number' ? m : null;
  }, 'state.json with the new server');
  expect(ids.map((id) => after.get(id))).toEqual(mine);
  expect(mine).not.toContain(after.get(late));
}, 60_000);
