/**
 * The node's record of console rights taken back (src/agent/http/revocations.ts): a token issued at or
 * before the latest change of its (server, user) pair, or of the user on every server, is refused,
 * whatever order the changes reached the node in, and after the agent restarts (the file).
 */
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Revocations } from '../../src/agent/http/revocations';

const SERVER = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';
const USER = '33333333-3333-4333-8333-333333333333';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'revocations-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('changes in any order: the latest time stands, for one server and for every server, and after a restart', () => {
  const now = Date.now();
  fc.assert(
    fc.property(fc.array(fc.record({ every: fc.boolean(), ago: fc.integer({ min: 0, max: 60_000 }) }), { minLength: 1, maxLength: 6 }), fc.integer({ min: 0, max: 61_000 }), (changes, issuedAgo) => {
      const file = path.join(dir, `r-${Math.random().toString(36).slice(2)}.json`);
      const r = new Revocations(file);
      for (const c of changes) r.record(c.every ? null : SERVER, USER, now - c.ago);
      const latest = (pred: (c: { every: boolean }) => boolean) => Math.max(...changes.filter(pred).map((c) => now - c.ago), -Infinity);
      const issuedAt = now - issuedAgo;
      const here = issuedAt <= latest(() => true);
      const elsewhere = issuedAt <= latest((c) => c.every);
      for (const x of [r, new Revocations(file)]) {
        expect(x.revoked(SERVER, USER, issuedAt)).toBe(here);
        expect(x.revoked(OTHER, USER, issuedAt)).toBe(elsewhere);
        expect(x.revoked(SERVER, OTHER, issuedAt)).toBe(false);
      }
    }),
  );
});
