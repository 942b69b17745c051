import { BUILTIN_BLUEPRINTS, validateVariable } from '../../src/blueprints/builtin';
import { createServer, logs, newId, power, specFor, startHarness, startRunning, waitStatus, type Harness } from './helpers';
import { sleep } from '../support/wait.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  expect(await h?.close()).toEqual([]);
});

describe('built-in blueprints', () => {
  test('shape: unique keys, defaults, variables with rules', () => {
    expect(BUILTIN_BLUEPRINTS.length).toBeGreaterThanOrEqual(3);
    expect(new Set(BUILTIN_BLUEPRINTS.map((b) => b.key)).size).toBe(BUILTIN_BLUEPRINTS.length);
    for (const b of BUILTIN_BLUEPRINTS) {
      expect(b.defaults.memory).toBeGreaterThanOrEqual(64);
      expect(b.defaults.disk).toBeGreaterThanOrEqual(128);
      for (const v of b.variables) expect(validateVariable(v.rules, v.default)).toBeNull();
    }
  });

  test('variable rules', () => {
    expect(validateVariable('required|integer|between:1,10', '5')).toBeNull();
    expect(validateVariable('required|integer|between:1,10', '11')).toMatch(/between/);
    expect(validateVariable('required|integer', 'x')).toMatch(/integer/);
    expect(validateVariable('required|string|max:3', 'abcd')).toMatch(/at most/);
    expect(validateVariable('required|string', '')).toMatch(/required/);
    expect(validateVariable('nullable|string', '')).toBeNull();
    expect(validateVariable('in:a,b', 'c')).toMatch(/one of/);
    expect(validateVariable('required|regex:/^[a-z]+(x|y)$/', 'abx')).toBeNull();
    expect(validateVariable('required|regex:/^[a-z]+(x|y)$/', 'ab1')).toMatch(/format/);
    const script = BUILTIN_BLUEPRINTS.find((b) => b.key === 'nodejs-script')!.variables[0]!;
    expect(validateVariable(script.rules, '--eval=1')).not.toBeNull();
    expect(validateVariable(script.rules, 'bot/main.js')).toBeNull();
  });

  test.each(BUILTIN_BLUEPRINTS.map((b) => [b.key]))('%s: install, start to running, command, stop', async (key) => {
    const id = newId();
    await createServer(h, specFor(key, id));
    await startRunning(h, id);
    if (key !== 'demo-game') {
      await h.request('POST', `/api/servers/${id}/commands`, { command: 'ping-42' });
      await waitStatus(h, id, 'running');
      const deadline = Date.now() + 5000;
      while (!(await logs(h, id)).some((l) => l.includes('ping-42')) && Date.now() < deadline) await sleep(50);
      expect((await logs(h, id)).some((l) => l.includes('ping-42') && !l.startsWith('[panel]'))).toBe(true);
    } else {
      await h.request('POST', `/api/servers/${id}/commands`, { command: 'help' });
    }
    const r = await power(h, id, 'stop');
    expect(r.status).toBe(200);
    const st = await waitStatus(h, id, 'offline');
    expect(st.reason).toBe('stopped');
  });
});
