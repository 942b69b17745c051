/**
 * The late-line drop rule (src/shared/paced-queue.ts) counts the readers a line goes to one by one:
 * batch sessions take their lines from the server's batcher, which counts as one reader however many
 * sessions it serves (docs/node-channel.md). A flood that a lone per-line reader's hand-out cannot keep
 * up with drops nothing, with or without batch sessions beside it.
 */
import { ConsoleClient, createServer, newId, specFor, startHarness, waitFor, waitStatus, type Harness } from './helpers';
import { WIDE_FANOUT } from '../../src/shared/paced-queue';

const LINES = 30_000; // a few pipe reads' worth: far more than one slice of the hand-out takes
let h: Harness;
beforeAll(async () => {
  // no output budget and room for a reader that falls behind: only the hand-out's width decides
  h = await startHarness({ consoleMaxLinesPerSecond: 1_000_000, consoleMaxBufferedBytes: 512 * 1024 * 1024, consoleSendBudgetBytes: 1024 * 1024 * 1024 });
}, 60_000);
afterAll(async () => {
  expect(await h?.close()).toEqual([]);
});

async function batchReader(id: string): Promise<ConsoleClient> {
  const c = await h.console(id);
  c.send({ type: 'options', data: { batch: true } });
  await c.next('options');
  return c;
}

test(`${WIDE_FANOUT} batch sessions and one per-line reader: a flood reaches the per-line reader whole`, async () => {
  const id = newId();
  await createServer(h, specFor('shell-command', id, {}, { COMMAND: `sleep 1; seq 1 ${LINES}; sleep 600` }));
  const batches = await Promise.all(Array.from({ length: WIDE_FANOUT }, () => batchReader(id)));
  const perLine = await h.console(id);
  let last = 0;
  let inOrder = true;
  let skipped = 0;
  perLine.ws.on('message', (d) => {
    const m = JSON.parse(d.toString()) as { type: string; data: any };
    if (m.type === 'console_skipped') skipped += m.data.skipped;
    if (m.type !== 'console_output' || !/^\d+$/.test(m.data.line)) return;
    const n = Number(m.data.line);
    if (n !== last + 1) inOrder = false;
    last = n;
  });
  perLine.send({ type: 'power', data: 'start' });
  await waitStatus(h, id, 'running');
  await waitFor(() => last === LINES || skipped > 0 || null, 'the flood to be read', 90_000);
  expect({ last, skipped, inOrder }).toEqual({ last: LINES, skipped: 0, inOrder: true });
  for (const c of [...batches, perLine]) c.close();
}, 120_000);
