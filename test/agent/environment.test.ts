import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { diskUsage, MIN_ENTRY_BYTES } from '../../src/agent/environment/proc';
import { buildArgv, splitTemplate, TemplateError } from '../../src/agent/environment/template';
import { childEnv, templateVariablesFor } from '../../src/agent/environment/env';
import { variableNameProblem } from '../../src/shared/variable-names';
import { LineSplitter } from '../../src/agent/environment/line-splitter';
import { isWellFormed } from '../../src/validation/common';
import { ConsoleBuffer } from '../../src/agent/server/console-buffer';
import { FloodNotices, TokenBucket } from '../../src/agent/server/line-budget';
import { parseStop } from '../../src/agent/server/power';
import { enforcedLimits } from '../../src/agent';
import { configFromEnv } from '../../src/agent/main';
import type { ServerSpec } from '../../src/shared/node-protocol';

const spec = (vars: Record<string, string>): ServerSpec => ({
  id: 'srv-1',
  name: 'x',
  startup: '',
  stop: 'stop',
  ready: null,
  install: null,
  variables: vars,
  memory: 128,
  cpu: 50,
  disk: 256,
  autoRestart: false,
});

describe('startup templates', () => {
  test('split first, then substitute: values never add arguments', () => {
    const evil = 'a b; rm -rf / $(id) `id` "q" \'s\' --flag';
    const argv = buildArgv('{{NODE}} game.js --motd {{MOTD}} --port={{SERVER_PORT}} "two words {{X}}"', {
      NODE: '/usr/bin/node',
      MOTD: evil,
      SERVER_PORT: '25565',
      X: 'y z',
    });
    expect(argv).toEqual(['/usr/bin/node', 'game.js', '--motd', evil, '--port=25565', 'two words y z']);
  });

  test('quotes and escapes in the template; unknown vars → empty; errors', () => {
    expect(splitTemplate(`a 'b c' "d \\"e\\"" f\\ g`)).toEqual(['a', 'b c', 'd "e"', 'f g']);
    expect(buildArgv('x {{NOPE}}', {})).toEqual(['x', '']);
    expect(() => splitTemplate('a "b')).toThrow(TemplateError);
    expect(() => buildArgv('{{EMPTY}}', {})).toThrow(TemplateError);
  });

  test('a real spawn keeps the value as one argv element', () => {
    const argv = buildArgv('{{NODE}} -e "console.log(JSON.stringify(process.argv.slice(1)))" {{V}}', { NODE: process.execPath, V: 'a b;c $(d)' });
    const out = spawnSync(argv[0]!, argv.slice(1), { shell: false, encoding: 'utf8' });
    expect(JSON.parse(out.stdout)).toEqual(['a b;c $(d)']);
  });

  test('built-ins win over user variables', () => {
    const vars = templateVariablesFor(spec({ NODE: '/bin/evil', MOTD: 'm' }), '/srv/x');
    expect(vars.NODE).toBe(process.execPath);
    expect(vars.MOTD).toBe('m');
    expect(vars.ASSETS_DIR).toMatch(/assets$/);
    expect(vars.SERVER_MEMORY).toBe('128');
  });
});

describe('child environment', () => {
  test('no agent secrets leak; HOME is the server dir; reserved names ignored', () => {
    process.env.NODE_TOKEN = 'hpn_secret';
    process.env.DATABASE_URL = 'postgres://secret';
    try {
      const env = childEnv(spec({ MOTD: 'hi', LD_PRELOAD: '/x.so', NODE_OPTIONS: '--require /x', PATH: '/evil' }), '/srv/x');
      expect(env.NODE_TOKEN).toBeUndefined();
      expect(env.DATABASE_URL).toBeUndefined();
      expect(Object.values(env).join(' ')).not.toContain('secret');
      expect(env.HOME).toBe('/srv/x');
      expect(env.MOTD).toBe('hi');
      expect(env.SERVER_MEMORY).toBe('128');
      expect(env.LD_PRELOAD).toBeUndefined();
      expect(env.NODE_OPTIONS).toBeUndefined();
      expect(env.PATH).not.toBe('/evil');
    } finally {
      delete process.env.NODE_TOKEN;
      delete process.env.DATABASE_URL;
    }
  });

  test('the names glibc distrusts in a setuid program are reserved too (GLIBC_TUNABLES: CVE-2023-4911)', () => {
    const names = ['GLIBC_TUNABLES', 'GCONV_PATH', 'GETCONF_DIR', 'HOSTALIASES', 'LOCALDOMAIN', 'LOCPATH', 'MALLOC_TRACE', 'NIS_PATH', 'NLSPATH', 'RESOLV_HOST_CONF', 'RES_OPTIONS'];
    const env = childEnv(spec({ MOTD: 'hi', ...Object.fromEntries(names.map((n) => [n, 'x'])) }), '/srv/x');
    expect(names.filter((n) => n in env)).toEqual([]);
    expect(names.filter((n) => variableNameProblem(n) === null)).toEqual([]);
    expect(['HOSTNAME', 'TMPDIR', 'SERVER_PORT'].map(variableNameProblem)).toEqual([null, null, null]);
  });
});

describe('small pieces', () => {
  test('line splitter: CRLF, partial chunks, truncation', () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l), 10);
    s.push(Buffer.from('ab'));
    s.push(Buffer.from('c\r\nde'));
    s.push(Buffer.from('f\n' + 'x'.repeat(25)));
    s.push(Buffer.from('yyy\nok\n'));
    s.end();
    expect(lines).toEqual(['abc', 'def', 'xxxxxxxxxx …[truncated]', 'ok']);
    const multi: string[] = [];
    const m = new LineSplitter((l) => multi.push(l));
    const euro = Buffer.from('€\n');
    m.push(euro.subarray(0, 1));
    m.push(euro.subarray(1));
    expect(multi).toEqual(['€']);
  });

  test('line splitter, any text in any chunks: a line of the cap or less arrives whole (the CR of CRLF not counted); a cut line is well-formed', () => {
    const max = 8;
    const piece = fc.constantFrom('a', 'é', '😀', '\r', '\n', '\r\n');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 6 }), (parts, cutsAt) => {
        const bytes = Buffer.from(parts.join('') + '\n');
        const cuts = [...new Set(cutsAt.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const lines: string[] = [];
        const s = new LineSplitter((l) => lines.push(l), max);
        let from = 0;
        for (const c of [...cuts, bytes.length]) {
          s.push(bytes.subarray(from, c));
          from = c;
        }
        s.end();
        const expected = (parts.join('') + '\n').split('\n').slice(0, -1).map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
        expect(lines).toHaveLength(expected.length);
        lines.forEach((line, i) => {
          expect(isWellFormed(line)).toBe(true);
          if (expected[i]!.length <= max) expect(line).toBe(expected[i]);
          else expect(line).toBe(expected[i]!.slice(0, line.length - ' …[truncated]'.length) + ' …[truncated]');
        });
      }),
    );
  });

  test('ring buffer keeps the last N', () => {
    const b = new ConsoleBuffer(3);
    for (let i = 1; i <= 5; i++) b.push({ line: String(i), stream: 'stdout', ts: '', kind: 'console', seq: i });
    expect(b.lines()).toEqual(['3', '4', '5']);
  });

  test('line budget: a token bucket of one second, refilled continuously', () => {
    const b = new TokenBucket(4, 1000);
    // a burst of one second's worth passes whole, the next line does not
    expect([b.take(1000), b.take(1000), b.take(1000), b.take(1000), b.take(1000)]).toEqual([true, true, true, true, false]);
    // 250 ms refill one line; 10 s refill no more than the bucket holds
    expect([b.take(1250), b.take(1250)]).toEqual([true, false]);
    expect([1, 2, 3, 4, 5].map(() => b.take(11_250))).toEqual([true, true, true, true, false]);
  });

  test('flood notices: one per episode (drops less than 1 s apart), at most one per 10 s', () => {
    const n = new FloodNotices();
    // one episode: the first drop earns the notice, the rest of it none
    expect([0, 500, 1400, 2300].map((t) => n.dropped(t))).toEqual([true, false, false, false]);
    // a new episode within 10 s of the notice: none; after 10 s: one
    expect([5000, 12_000, 12_100].map((t) => n.dropped(t))).toEqual([false, true, false]);
  });

  test('stop methods', () => {
    expect(parseStop('stop')).toEqual({ kind: 'stdin', line: 'stop' });
    expect(parseStop('SIGTERM')).toEqual({ kind: 'signal', signal: 'SIGTERM' });
    expect(parseStop('^C')).toEqual({ kind: 'signal', signal: 'SIGINT' });
    expect(parseStop('^D')).toEqual({ kind: 'eof' });
    expect(parseStop('')).toEqual({ kind: 'signal', signal: 'SIGTERM' });
  });

  test('enforcedLimits describes memory, disk and cpu', () => {
    const e = enforcedLimits();
    expect(e.memory).toMatch(/enforced/);
    expect(e.disk).toMatch(/enforced/);
    expect(['cgroup-v1', 'cgroup-v2', 'none']).toContain(e.cpuMechanism);
  });

  test('CLI configuration validation', () => {
    expect(configFromEnv({}).errors).toEqual(expect.arrayContaining(['PANEL_URL is required', 'NODE_ID is required', 'NODE_TOKEN is required']));
    expect(configFromEnv({ PANEL_URL: 'ftp://x', NODE_ID: 'n', NODE_TOKEN: 'hpn_x', AGENT_PORT: 'abc' }).errors.join('\n')).toMatch(/PANEL_URL.*\n.*AGENT_PORT/s);
    const ok = configFromEnv({ PANEL_URL: 'http://panel:8080', NODE_ID: 'n', NODE_TOKEN: 'hpn_x', DATA_DIR: '/tmp/d' });
    expect(ok.options).toMatchObject({ port: 5000, stopGraceSeconds: 30, dataDir: '/tmp/d', heartbeatSeconds: 10 });
    expect(ok.options).toMatchObject({ allowUnisolatedServers: false, serverPidsMax: 512, tuning: { consoleMaxLinesPerSecond: 2000 } });
    expect(configFromEnv({ PANEL_URL: 'http://panel:8080', NODE_ID: 'n', NODE_TOKEN: 'hpn_x', CONSOLE_MAX_LINES_PER_SECOND: '500' }).options?.tuning).toEqual({ consoleMaxLinesPerSecond: 500 });
    expect(configFromEnv({ PANEL_URL: 'http://panel:8080', NODE_ID: 'n', NODE_TOKEN: 'hpn_x', CONSOLE_MAX_LINES_PER_SECOND: '0' }).errors.join('\n')).toMatch(/CONSOLE_MAX_LINES_PER_SECOND must be an integer/);
    const base = { PANEL_URL: 'http://panel:8080', NODE_ID: 'n', NODE_TOKEN: 'hpn_x' };
    expect(configFromEnv({ ...base, ALLOW_UNISOLATED_SERVERS: 'true', SERVER_PIDS_MAX: '64' }).options).toMatchObject({ allowUnisolatedServers: true, serverPidsMax: 64 });
    const bad = configFromEnv({ ...base, ALLOW_UNISOLATED_SERVERS: 'maybe', SERVER_PIDS_MAX: '3' }).errors;
    expect(bad).toEqual(expect.arrayContaining([expect.stringMatching(/ALLOW_UNISOLATED_SERVERS must be true or false/), expect.stringMatching(/SERVER_PIDS_MAX must be an integer/)]));
  });
});

describe('diskUsage (the disk limit)', () => {
  test('counts allocated blocks, every entry at least 4 KiB, in directories of many files too; symlinks count as links', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'hp-size-'));
    try {
      for (let d = 0; d < 3; d++) {
        mkdirSync(path.join(root, `d${d}`, 'deep', 'er'), { recursive: true });
        // more files in one directory than the measurement looks at in one go
        for (let i = 0; i < 300; i++) writeFileSync(path.join(root, `d${d}`, 'deep', 'er', `f${i}`), 'x'.repeat(i % 11));
      }
      const entries = 3 * (3 + 300);
      expect(await diskUsage(root)).toBe(entries * MIN_ENTRY_BYTES);
      // a sparse file counts what is written, not its apparent size
      writeFileSync(path.join(root, 'sparse.bin'), '');
      truncateSync(path.join(root, 'sparse.bin'), 100 * 1024 * 1024);
      expect(await diskUsage(root)).toBe((entries + 1) * MIN_ENTRY_BYTES);
      // a real 1 MiB file counts its blocks
      writeFileSync(path.join(root, 'full.bin'), Buffer.alloc(1024 * 1024, 1));
      const withFull = await diskUsage(root);
      expect(withFull).toBeGreaterThanOrEqual((entries + 1) * MIN_ENTRY_BYTES + 1024 * 1024);
      const big = path.join(os.tmpdir(), `hp-size-outside-${process.pid}`);
      writeFileSync(big, Buffer.alloc(100_000, 1));
      symlinkSync(big, path.join(root, 'link'));
      expect(await diskUsage(root)).toBe(withFull + MIN_ENTRY_BYTES); // the link, not its 100 kB target
      expect(await diskUsage(path.join(root, 'missing'))).toBe(0);
      rmSync(big);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
