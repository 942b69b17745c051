/**
 * The two-command start, for real: `node dist/src/main.js` (what `npm start` runs after building)
 * with no DATABASE_URL, so it brings up its embedded PostgreSQL in DATA_DIR. Stopping and starting
 * again must keep the accounts. (`npm test` builds dist/ before jest runs.)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'pg';
import { freePort, sleep } from '../support/wait.js';

const MAIN = path.resolve(__dirname, '../../dist/src/main.js');


interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/**
 * Starts `node dist/src/main.js`. The ports of `env` were free when freePort() looked, but another
 * test running meanwhile may have bound one since (its own listener, or the ephemeral port of an
 * outgoing connection): when the platform says AGENT_PORT or SFTP_PORT is taken, that port is
 * replaced in `env` (kept for later restarts) and the start tried again, twice at most.
 */
async function start(env: Record<string, string>): Promise<Started> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(env);
    } catch (err) {
      const taken = /\b(AGENT_PORT|SFTP_PORT) \d+ is already in use/.exec((err as Error).message);
      if (!taken || attempt === 3) throw err;
      env[taken[1]!] = String(await freePort());
    }
  }
}

function startOnce(env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no "Panel:" line within 90 s:\n' + out)), 90_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /Panel:\s+(http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, output: () => out });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d) => (out += d.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening:\n${out}`));
    });
  });
}

function stop(s: Started): Promise<number | null> {
  return new Promise((resolve) => {
    s.child.removeAllListeners('exit');
    s.child.on('exit', (code) => resolve(code));
    s.child.kill('SIGTERM');
  });
}

/** A new data folder (0700, like `mktemp -d`: the platform must still reach its data) and the environment of a start on it. */
async function freshStart(prefix: string) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), prefix));
  chmodSync(dataDir, 0o700);
  const env = {
    DATA_DIR: path.join(dataDir, 'data'),
    PORT: '0',
    HOST: '127.0.0.1',
    EMBEDDED_PG_PORT: String(await freePort()),
    AGENT_PORT: String(await freePort()),
    SFTP_PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
  };
  return { dataDir, env };
}

const hasBuild = existsSync(MAIN);
const maybe = hasBuild ? test : test.skip;
if (!hasBuild) console.warn(`skipped: ${MAIN} is missing; run the suite with \`npm test\` (it builds first)`);

maybe('npm start on a fresh data dir: embedded PostgreSQL, first admin, restart keeps accounts', async () => {
  const { dataDir, env } = await freshStart('hostpanel-start-');
  try {
    const first = await start(env);
    const out = first.output();
    const creds = /Sign in as (\S+) with password (\S+)/.exec(out);
    expect(creds).not.toBeNull();
    // the local node's address users are given is localhost: the banner says how to give another
    expect(out).toMatch(/console ws:\/\/localhost:\d+\/console, SFTP localhost:\d+/);
    expect(out).toContain('set PANEL_URL to its public address');
    const [, email, password] = creds!;
    expect((await fetch(first.url + '/health')).status).toBe(200);
    const signin = await fetch(first.url + '/api/v1/auth/signin', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    expect(signin.status).toBe(200);
    const signup = await fetch(first.url + '/api/v1/auth/signup', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'kept@example.com', password: 'kept-password', name: 'Kept' }),
    });
    expect(signup.status).toBe(201);
    // the embedded PostgreSQL listens on TCP only: no Unix socket in /tmp, which its user may not be
    // allowed to write to (a /tmp without its sticky 1777 mode stopped it from starting)
    const pgCreds = JSON.parse(readFileSync(path.join(env.DATA_DIR, 'postgres-credentials.json'), 'utf8')) as { password: string; port: number };
    const pg = new Client({ host: '127.0.0.1', port: pgCreds.port, user: 'postgres', password: pgCreds.password, database: 'hostpanel' });
    await pg.connect();
    expect((await pg.query('show unix_socket_directories')).rows[0].unix_socket_directories).toBe('');
    // and on the IPv4 loopback only, the address whose port the start checks: a PostgreSQL that lost
    // 127.0.0.1 to another program fails to start (and tries another port) instead of running on ::1 alone
    expect((await pg.query('show listen_addresses')).rows[0].listen_addresses).toBe('127.0.0.1');
    await pg.end();
    expect(await stop(first)).toBe(0);

    const second = await start(env);
    expect(second.output()).not.toContain(password!); // the generated password is printed once only
    const again = await fetch(second.url + '/api/v1/auth/signin', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'kept@example.com', password: 'kept-password' }),
    });
    expect(again.status).toBe(200);
    expect(await stop(second)).toBe(0);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 180_000);

maybe('two starts at once on different DATA_DIRs and the same embedded PostgreSQL port: both come up and answer /health', async () => {
  const a = await freshStart('hostpanel-twin-a-');
  const b = await freshStart('hostpanel-twin-b-');
  // as two `npm start` with the default port: both find it free, then only one can bind it
  b.env.EMBEDDED_PG_PORT = a.env.EMBEDDED_PG_PORT;
  const started = await Promise.allSettled([start(a.env), start(b.env)]);
  try {
    expect(started.map((s) => (s.status === 'fulfilled' ? 'started' : String(s.reason)))).toEqual(['started', 'started']);
    const [sa, sb] = started.map((s) => (s as PromiseFulfilledResult<Started>).value) as [Started, Started];
    expect((await fetch(sa.url + '/health')).status).toBe(200);
    expect((await fetch(sb.url + '/health')).status).toBe(200);
    const portOf = (dir: string) => (JSON.parse(readFileSync(path.join(dir, 'postgres-credentials.json'), 'utf8')) as { port: number }).port;
    expect(portOf(a.env.DATA_DIR)).not.toBe(portOf(b.env.DATA_DIR));
  } finally {
    for (const s of started) if (s.status === 'fulfilled') await stop(s.value);
    rmSync(a.dataDir, { recursive: true, force: true });
    rmSync(b.dataDir, { recursive: true, force: true });
  }
}, 180_000);

maybe('SIGTERM with a request under way: the request is answered, then the database stops, and the exit code is 0', async () => {
  const { dataDir, env } = await freshStart('hostpanel-stop-');
  try {
    const s = await start(env);
    const { hostname, port } = new URL(s.url);
    // a request whose body has not all arrived: it is under way for the whole grace period
    const socket = net.connect(Number(port), hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    const body = JSON.stringify({ email: 'nobody@example.com', password: 'wrong-password' });
    socket.write(`POST /api/v1/auth/signin HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
    let reply = '';
    socket.on('data', (d) => (reply += d.toString()));
    socket.on('error', () => undefined);
    await sleep(300);
    const exited = stop(s);
    // the rest of the body arrives after the stop signal: the request still gets its answer
    await sleep(1000);
    socket.write(body.slice(10));
    expect(await exited).toBe(0);
    expect(reply).toMatch(/^HTTP\/1\.1 401 /);
    socket.destroy();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 180_000);

maybe('SIGTERM as soon as /health answers (the start not quite done): exit code 0, and the next start on the same data works', async () => {
  const { dataDir, env } = await freshStart('hostpanel-early-stop-');
  const port = await freePort();
  const health = `http://127.0.0.1:${port}/health`;
  const spawnMain = () => spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) }, stdio: 'ignore' });
  const exitOf = (child: ChildProcess) => new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    for (let run = 0; run < 2; run++) {
      const child = spawnMain();
      const exited = exitOf(child);
      // the signal goes out on the first 200, as a supervisor's health-checked restart would send it
      for (;;) {
        const ok = await fetch(health).then((r) => r.status === 200, () => false);
        if (ok) break;
        if (child.exitCode !== null) throw new Error(`run ${run + 1}: main.js exited (${child.exitCode}) before it was healthy`);
        await sleep(10);
      }
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 180_000);

maybe('an embedded PostgreSQL that cannot start: npm start exits 1 and shows PostgreSQL\'s own reason', async () => {
  const { dataDir, env } = await freshStart('hostpanel-pgfail-');
  try {
    expect(await stop(await start(env))).toBe(0);
    appendFileSync(path.join(env.DATA_DIR, 'postgres', 'postgresql.conf'), '\nthis line is not a setting\n');
    const failed = await start(env).then(
      () => 'started',
      (err: Error) => err.message,
    );
    expect(failed).toMatch(/exited with 1 before listening/);
    expect(failed).toMatch(/the embedded PostgreSQL did not start/);
    expect(failed).toMatch(/syntax error/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 180_000);

maybe('after the platform is killed (SIGKILL), the next start stops the orphaned embedded PostgreSQL and comes up on the same data', async () => {
  const { dataDir, env } = await freshStart('hostpanel-sigkill-');
  try {
    const first = await start(env);
    const creds = /Sign in as (\S+) with password (\S+)/.exec(first.output())!;
    first.child.removeAllListeners('exit');
    const killed = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL'); // its PostgreSQL keeps running, holding the data directory and the port
    await killed;

    const second = await start(env);
    expect(second.output()).toMatch(/still running on the data directory; stopping it/);
    const signin = await fetch(second.url + '/api/v1/auth/signin', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: creds[1], password: creds[2] }),
    });
    expect(signin.status).toBe(200);
    expect(await stop(second)).toBe(0);
  } finally {
    spawnSync('pkill', ['-f', `postgres -D ${dataDir}`]); // should the test fail, no orphan is left behind
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 180_000);
