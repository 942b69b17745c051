/**
 * What a node-channel viewer sees for odd output (a line at the cap, CRLF, NUL, invalid UTF-8, lone
 * CR), a restart while connected, and commands at the edges.
 */
import { createHash } from 'node:crypto';
import { isWellFormed } from '../../src/validation/common';
import { createServer, newId, power, specFor, startHarness, waitStatus, type Harness, type Msg } from '../agent/helpers';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ consoleMaxLinesPerSecond: 100_000 });
}, 60_000);
afterAll(async () => {
  expect(await h?.close()).toEqual([]);
});

const lineOf = (m: Msg): string => m.data.line as string;

async function shellServer(command: string): Promise<string> {
  const id = newId();
  await createServer(h, specFor('shell-command', id, {}, { COMMAND: command }));
  await waitStatus(h, id, 'offline');
  return id;
}

describe('odd output', () => {
  let out: string[];
  beforeAll(async () => {
    const id = await shellServer(
      [
        // 4095 a's and an emoji: the cap (4096) falls inside the emoji's surrogate pair
        "printf '%4095s' '' | tr ' ' a; printf '\\360\\237\\230\\200tail\\n'",
        // exactly 4096 characters, CRLF line ending: nothing is lost
        "printf '%4096s' '' | tr ' ' b; printf '\\r\\n'",
        "printf 'nul\\000byte\\n'",
        "printf 'bad\\377\\376utf\\n'",
        "printf '10%%\\r50%%\\r100%%\\n'",
        "echo end-marker",
        'exec sleep 1000',
      ].join('; '),
    );
    const c = await h.console(id);
    expect((await power(h, id, 'start')).status).toBeLessThan(300);
    await c.next('console_output', (m) => lineOf(m) === 'end-marker', 15_000);
    out = c.messages.filter((m) => m.type === 'console_output' && m.data.stream === 'stdout').map(lineOf);
    c.close();
    await power(h, id, 'kill');
  }, 60_000);

  test('a line cut at the cap is still well-formed text (no half of a surrogate pair)', () => {
    const cut = out.find((l) => l.startsWith('aaaa'))!;
    expect(cut).toMatch(/…\[truncated\]$/);
    expect(isWellFormed(cut)).toBe(true);
  });

  test('a line of exactly the cap ending in CRLF arrives whole, not marked truncated', () => {
    const b = out.find((l) => l.startsWith('bbbb'))!;
    expect({ length: b.length, onlyB: /^b+$/.test(b) }).toEqual({ length: 4096, onlyB: true });
  });

  test('NUL, invalid UTF-8 and lone CR pass as text', () => {
    expect(out).toContain('nul\u0000byte');
    expect(out).toContain('bad\ufffd\ufffdutf');
    expect(out).toContain('10%\r50%\r100%');
  });
});

describe('restart with a viewer connected', () => {
  test('the viewer sees the new run after a marker, with seq increasing and no line twice', async () => {
    const id = await shellServer('echo "run-start $$"; exec sleep 1000');
    expect((await power(h, id, 'start')).status).toBeLessThan(300);
    await waitStatus(h, id, 'running');
    const c = await h.console(id);
    await c.next('console_output', (m) => lineOf(m).startsWith('run-start'));
    const before = c.messages.length;
    expect((await power(h, id, 'restart')).status).toBeLessThan(300);
    await c.waitFor((m) => m.type === 'console_output' && lineOf(m).startsWith('run-start'), 20_000, before);
    await c.waitFor((m) => m.type === 'status' && m.data.status === 'running', 20_000, before);
    const lines = c.messages.filter((m) => m.type === 'console_output');
    const seqs = lines.map((m) => m.data.seq as number);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const after = c.messages.slice(before).filter((m) => m.type === 'console_output').map(lineOf);
    expect(after.some((l) => /^\[panel\] Server marked as starting/.test(l))).toBe(true);
    expect(after.filter((l) => l.startsWith('run-start'))).toHaveLength(1);
    c.close();
    await power(h, id, 'kill');
  }, 60_000);
});

describe('commands at the edges', () => {
  let id: string;
  beforeAll(async () => {
    id = await shellServer("while IFS= read -r l; do printf '%s' \"$l\" | md5sum | cut -c1-32; done");
  }, 30_000);

  test('a command while offline is refused with INVALID_STATE', async () => {
    const c = await h.console(id);
    c.send({ type: 'command', data: 'hello' });
    const e = await c.next('error');
    expect(e.data.code).toBe('INVALID_STATE');
    expect(e.data.message).toMatch(/not running/);
    c.close();
  });

  test('a unicode command of exactly 4096 UTF-16 units reaches stdin intact; 4097 is refused', async () => {
    expect((await power(h, id, 'start')).status).toBeLessThan(300);
    await waitStatus(h, id, 'running');
    const c = await h.console(id);
    const cmd = 'é😀ü'.repeat(1024); // 4 units each
    expect(cmd.length).toBe(4096);
    c.send({ type: 'command', data: cmd });
    const md5 = createHash('md5').update(cmd, 'utf8').digest('hex');
    await c.next('console_output', (m) => lineOf(m) === md5);
    c.send({ type: 'command', data: cmd + 'x' });
    const e = await c.next('error');
    expect(e.data.code).toBe('BAD_REQUEST');
    c.close();
    await power(h, id, 'kill');
  }, 30_000);
});
