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

  test('the rules eggs use: a regex anywhere in the list, numbers, characters, sizes, URLs', () => {
    // Rust's RCON_PASS: the regex is not last
    expect(validateVariable('required|regex:/^[\\w.-]*$/|max:64', 'abc.def')).toBeNull();
    expect(validateVariable('required|regex:/^[\\w.-]*$/|max:64', 'a b')).toMatch(/format/);
    expect(validateVariable('required|regex:/^[\\w.-]*$/|max:64', 'a'.repeat(65))).toMatch(/at most 64 characters/);
    expect(validateVariable('required|regex:^(a|b)$|max:1', 'b')).toBeNull();
    expect(validateVariable('required|numeric', '27.5')).toBeNull();
    expect(validateVariable('required|numeric', '27a')).toMatch(/number/);
    expect(validateVariable('required|numeric|max:100', '101')).toMatch(/at most 100$/);
    expect(validateVariable('required|alpha_dash|between:1,100', 'de_dust-2')).toBeNull();
    expect(validateVariable('required|alpha_dash', 'de dust')).toMatch(/letters, digits, dashes/);
    expect(validateVariable('required|alpha_num|between:1,6', 'latest')).toBeNull();
    expect(validateVariable('required|alpha_num', 'lat-est')).toMatch(/letters and digits/);
    expect(validateVariable('required|string|alpha_num|size:32', 'A'.repeat(32))).toBeNull();
    expect(validateVariable('required|string|alpha_num|size:32', 'A'.repeat(31))).toMatch(/exactly 32/);
    expect(validateVariable('required|numeric|digits_between:1,5', '123456')).toMatch(/between 1 and 5 digits/);
    expect(validateVariable('nullable|url', 'http://pterodactyl.io')).toBeNull();
    expect(validateVariable('nullable|url', 'pterodactyl.io')).toMatch(/URL/);
    expect(validateVariable('nullable|url', '')).toBeNull();
    expect(validateVariable('required|ip', '0.0.0.0')).toBeNull();
    expect(validateVariable('not_in:a,b', 'a')).toMatch(/not be one of/);
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
