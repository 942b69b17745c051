/**
 * Ignore patterns cannot hold the agent (a real agent, real files): a pattern past the limits
 * (wildcards, length) fails the backup naming it, and patterns within them that still take too long
 * on the server's names fail it once a batch of names has taken BATCH_MS. Either way the agent's event
 * loop (the test's own: the agent runs in this process) goes on.
 */
import { lchownSync, lstatSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { backupWorld } from './backup-world';

jest.setTimeout(120_000);

const w = backupWorld(64);
const { backup } = w;
let dir: string;
beforeAll(() => {
  ({ dir } = w);
});

/** Writes a file of the server, as its own process would. */
function put(name: string, text: string): void {
  const at = path.join(dir, name);
  writeFileSync(at, text);
  lchownSync(at, lstatSync(dir).uid, lstatSync(dir).gid);
}

/** Runs `fn`; returns what it gave and the longest the event loop stalled meanwhile (ms). */
async function stallDuring<T>(fn: () => Promise<T>): Promise<{ result: T; worst: number }> {
  let last = Date.now();
  let worst = 0;
  const tick = setInterval(() => {
    worst = Math.max(worst, Date.now() - last);
    last = Date.now();
  }, 20);
  try {
    return { result: await fn(), worst };
  } finally {
    clearInterval(tick);
  }
}

test('a .hostpanelignore pattern with too many wildcards fails the backup at once, naming it', async () => {
  // `*a*a*a*a*a*b` and a name of 115 `a`s held the agent's event loop 6 s (130: 28 s)
  put('.hostpanelignore', '# the server wrote this\n*a*a*a*a*a*b\n');
  put('a'.repeat(115), 'x');
  const { result, worst } = await stallDuring(() => backup('wild'));
  expect(worst).toBeLessThan(1000);
  expect([result.status, result.error]).toEqual(['failed', 'The ignore pattern "*a*a*a*a*a*b" has more than 4 wildcards (*, **, ?): simplify it and try again.']);
});

test('patterns within the limits that take too long on the server\u2019s names fail the backup, the agent going on', async () => {
  put('.hostpanelignore', '');
  put('a'.repeat(255), 'x');
  // each takes about 0.3 s on that name, all of them together some 10 s
  const slow = [...'bcdefghijklmnopqrstuvwxyz0123456789'].map((c) => `*a*a*a*a${c}`);
  const { result, worst } = await stallDuring(() => backup('slow', slow));
  expect(worst).toBeLessThan(1000);
  expect([result.status, result.error]).toEqual(['failed', expect.stringMatching(/^The ignore patterns take too long to match the server\u2019s files \(more than 250 ms for \d+ names, from .*\): use fewer wildcards\.$/)]);
});

test('a pattern longer than 255 characters fails the backup; ordinary patterns still leave out what they match', async () => {
  const long = await backup('long', [`${'x'.repeat(256)}`]);
  expect([long.status, long.error]).toEqual(['failed', expect.stringMatching(/^The ignore pattern "x{80}\u2026" is longer than 255 characters/)]);
  put('keep.txt', 'kept');
  put('drop.log', 'dropped');
  const done = await backup('plain', ['*.log', 'a*']);
  expect(done.status).toBe('completed');
  expect(done.files).toBe(2); // keep.txt and .hostpanelignore
});
