/**
 * Importing one egg several times at once (a double-clicked Import, a script importing in parallel):
 * every import is a blueprint of its own (`paper`, `paper-2`, …), as one after the other.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { EGGS_DIR } from '../support/eggs.js';

let p: TestPlatform;
let admin: string;
beforeAll(async () => {
  p = await startTestPlatform();
  admin = (await p.admin()).token;
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

(EGGS_DIR ? test : test.skip)('five imports of one egg at once make five blueprints with five keys', async () => {
  const egg = JSON.parse(readFileSync(path.join(EGGS_DIR!, 'egg-paper.json'), 'utf8'));
  const replies = await Promise.all(Array.from({ length: 5 }, () => p.request('POST', '/api/v1/admin/blueprints/import', { token: admin, body: egg })));
  // all but one were 422 ALREADY_EXISTS on `key`, a field the administrator never gave
  expect(replies.map((r) => [r.status, r.body?.error?.code])).toEqual(replies.map(() => [201, undefined]));
  expect(replies.map((r) => r.body.data.key).sort()).toEqual(['paper', 'paper-2', 'paper-3', 'paper-4', 'paper-5']);
});
