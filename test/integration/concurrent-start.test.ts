/**
 * Several gateway instances starting at the same moment on one database (a first start of a
 * deployment with two replicas, or an upgrade that ships a migration): every instance comes up, the
 * migrations, the built-in blueprints and the first administrator are written once, and only the
 * instance that created the administrator shows a generated password (it is the right one).
 * The start-up step runs under one PostgreSQL advisory lock (src/db/startup-lock.ts).
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { openDatabase } from '../../src/db/orm.js';
import { MIGRATIONS } from '../../src/migrations/index.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

const started: TestPlatform[] = [];
const databases: string[] = [];

function urlOf(db: string): string {
  const u = new URL(process.env.TEST_PG_ADMIN_URL!);
  u.pathname = '/' + db;
  return u.toString();
}

async function query<R extends Record<string, unknown>>(url: string, sql: string): Promise<R[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<R>(sql)).rows;
  } finally {
    await c.end();
  }
}

async function freshDatabase(): Promise<string> {
  const db = 'tstart_' + randomBytes(5).toString('hex');
  databases.push(db);
  await query(process.env.TEST_PG_ADMIN_URL!, `create database ${db}`);
  return db;
}

/** Two instances started together on `db`: both must come up (a failed start fails the test with its error). */
async function startTwo(db: string, overrides: Parameters<typeof startTestPlatform>[0] = {}): Promise<[TestPlatform, TestPlatform]> {
  const env = { MASTER_KEY: randomBytes(32).toString('base64') };
  const results = await Promise.allSettled([startTestPlatform(overrides, env, { database: db }), startTestPlatform(overrides, env, { database: db })]);
  for (const r of results) if (r.status === 'fulfilled') started.push(r.value);
  const errors = results.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error)?.message ?? r.reason)] : []));
  expect(errors).toEqual([]);
  return [(results[0] as PromiseFulfilledResult<TestPlatform>).value, (results[1] as PromiseFulfilledResult<TestPlatform>).value];
}

async function stopAll(): Promise<void> {
  for (let p = started.pop(); p; p = started.pop()) await p.stop().catch(() => undefined);
}

afterEach(stopAll, 60_000);
afterAll(async () => {
  await stopAll();
  for (const db of databases) await query(process.env.TEST_PG_ADMIN_URL!, `drop database if exists ${db} with (force)`).catch(() => undefined);
}, 60_000);

for (let round = 1; round <= 3; round++) {
  test(`empty database, round ${round}: both instances come up; one administrator, created once`, async () => {
    const db = await freshDatabase();
    const [a, b] = await startTwo(db);
    expect([a.firstAdmin.created, b.firstAdmin.created].sort()).toEqual([false, true]);
    // ADMIN_PASSWORD is set (by the harness): neither shows a password
    expect([a.firstAdmin.password, b.firstAdmin.password]).toEqual([null, null]);
    expect(await query(urlOf(db), `select email from users where role = 'admin'`)).toHaveLength(1);
    // the migrations are recorded once each, the built-in blueprints exist once each
    expect(await query(urlOf(db), `select name from mikro_orm_migrations group by name having count(*) > 1`)).toEqual([]);
    expect(await query(urlOf(db), `select key from blueprints group by key having count(*) > 1`)).toEqual([]);
    // both serve the same administrator
    for (const p of [a, b]) expect((await p.admin()).user.role).toBe('admin');
  }, 60_000);
}

for (let round = 1; round <= 2; round++) {
  test(`empty database without ADMIN_PASSWORD, round ${round}: exactly one instance shows the generated password, and it is the right one`, async () => {
    const db = await freshDatabase();
    const [a, b] = await startTwo(db, { adminPassword: undefined });
    const shown = [a, b].filter((p) => p.firstAdmin.password !== null);
    expect(shown).toHaveLength(1);
    expect([a.firstAdmin.created, b.firstAdmin.created].sort()).toEqual([false, true]);
    expect(shown[0]!.firstAdmin.created).toBe(true);
    expect(await query(urlOf(db), `select email from users where role = 'admin'`)).toHaveLength(1);
    // the password shown signs in on either instance
    for (const p of [a, b]) {
      const r = await p.request('POST', '/api/v1/auth/signin', { body: { email: shown[0]!.firstAdmin.email, password: shown[0]!.firstAdmin.password } });
      expect(r.status).toBe(200);
    }
  }, 60_000);
}

/** A database one instance has set up, then stopped. */
async function setUpDatabase(): Promise<string> {
  const db = await freshDatabase();
  const first = await startTestPlatform({}, { MASTER_KEY: randomBytes(32).toString('base64') }, { database: db });
  await first.stop();
  return db;
}

test('migrated database without an administrator: both instances come up, one administrator', async () => {
  const db = await setUpDatabase();
  await query(urlOf(db), `delete from activity`);
  await query(urlOf(db), `delete from users`);
  const [a, b] = await startTwo(db);
  expect([a.firstAdmin.created, b.firstAdmin.created].sort()).toEqual([false, true]);
  expect(await query(urlOf(db), `select email from users where role = 'admin'`)).toHaveLength(1);
}, 60_000);

test('an upgrade that ships a migration: both instances come up, the migration is applied once', async () => {
  const db = await setUpDatabase();
  // the newest migration undone: as if both instances were a release newer than the database
  const orm = await openDatabase(urlOf(db), { poolMax: 1 });
  try {
    await orm.getMigrator().down();
  } finally {
    await orm.close(true);
  }
  const newest = MIGRATIONS[MIGRATIONS.length - 1]!.name;
  expect(await query(urlOf(db), `select name from mikro_orm_migrations where name = '${newest}'`)).toEqual([]);
  const [a, b] = await startTwo(db);
  expect([a.firstAdmin.created, b.firstAdmin.created]).toEqual([false, false]);
  expect(await query(urlOf(db), `select name from mikro_orm_migrations where name = '${newest}'`)).toHaveLength(1);
}, 60_000);
