/**
 * The node's console sockets share one budget of unsent data: several stalled readers are each
 * dropped (4408) once they hold more than their share of the total, far below their own limit, so
 * hundreds of readers falling behind at once cannot take the agent's memory; a reader that reads
 * goes on. Real agent, real demo server, real sockets.
 */
import { createServer, demoSpec, getState, newId, startHarness, startRunning, type Harness } from './helpers';
import { sleep } from '../support/wait.js';

const STALLED = 4;
let h: Harness;
let id: string;
beforeAll(async () => {
  // each socket alone may hold 256 MiB; all of them together 1 MiB
  h = await startHarness({ consoleMaxLinesPerSecond: 3000, consoleMaxBufferedBytes: 256 * 1024 * 1024, consoleSendBudgetBytes: 1024 * 1024 });
  id = newId();
  await createServer(h, demoSpec(id));
  await startRunning(h, id);
}, 60_000);
afterAll(async () => {
  expect(await h?.close()).toEqual([]);
});

test('stalled readers are dropped at their share of the shared budget; a reading one goes on', async () => {
  const stalled = await Promise.all(Array.from({ length: STALLED }, () => h.console(id)));
  for (const c of stalled) (c.ws as unknown as { _socket: { pause(): void } })._socket.pause();
  const reading = await h.console(id);
  // about 40 MB of output to each, far below 256 MiB and past what the kernel's buffers of a loopback
  // connection can take (a receive buffer may grow to tcp_rmem's maximum, 32 MiB here)
  for (let i = 0; i < 40; i++) {
    await h.request('POST', `/api/servers/${id}/commands`, { command: 'spam 250 4000' });
    await sleep(150);
  }
  for (const c of stalled) (c.ws as unknown as { _socket: { resume(): void } })._socket.resume();
  const codes = await Promise.all(stalled.map((c) => c.waitClosed(20_000).then((x) => x.code)));
  for (const code of codes) expect([4408, 1006]).toContain(code);
  reading.send({ type: 'command', data: 'say still-reading' });
  await reading.next('console_output', (m) => m.data.line.endsWith('[Server] still-reading'));
  reading.close();
  expect((await getState(h, id)).status).toBe('running');
}, 90_000);
