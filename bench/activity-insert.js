#!/usr/bin/env node
'use strict';
/**
 * `node bench/activity-insert.js`: the two ways of writing a batch of activity entries, side by side on
 * one connection to a scratch database (embedded PostgreSQL, or DATABASE_URL) with the activity table
 * and its indexes: the multi-row `INSERT … VALUES ($1, …), (…)` sent unnamed (parsed and planned for
 * every batch), and the prepared `INSERT … SELECT FROM unnest($1::uuid[], …)` (one text whatever the
 * batch's size, what src/services/activity.service.ts sends). Alternating blocks of batches, for
 * batches of 1 entry (a quiet panel) and of 16 (a busy one); reports the median CPU per entry of the
 * PostgreSQL backend and of this process (the client side: building and encoding the statement).
 * SYNCHRONOUS_COMMIT=off runs the same with commits that do not wait for the WAL's flush.
 */
const { randomUUID } = require('node:crypto');
const fs = require('node:fs');
const { Client } = require('pg');
const { openBenchDatabase } = require('./lib/database');
const { spread } = require('./lib/activity-bench');

const COLUMNS = 'id, event, server_id, actor_id, actor_email, api_token_id, ip, properties, created_at';
const UNNEST = `insert into activity (${COLUMNS}) select * from unnest($1::uuid[], $2::text[], $3::uuid[], $4::uuid[], $5::text[], $6::uuid[], $7::text[], $8::jsonb[], $9::timestamptz[])`;
const BLOCK_ENTRIES = Number(process.env.BLOCK_ENTRIES || 1600);
const PAIRS = Number(process.env.PAIRS || 8);

const entry = (serverId, actorId) => ({
  id: randomUUID(),
  event: 'server:power.start',
  serverId,
  actorId,
  actorEmail: 'owner@example.com',
  apiTokenId: null,
  ip: '127.0.0.1',
  properties: {},
  createdAt: new Date(),
});

const ways = {
  values: (rows) => {
    const values = [];
    const tuples = rows.map((r, i) => {
      values.push(r.id, r.event, r.serverId, r.actorId, r.actorEmail, r.apiTokenId, r.ip, JSON.stringify(r.properties), r.createdAt);
      const b = i * 9;
      return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6}, $${b + 7}, $${b + 8}::jsonb, $${b + 9})`;
    });
    return { text: `insert into activity (${COLUMNS}) values ${tuples.join(', ')}`, values };
  },
  unnest: (rows) => ({
    name: 'activity_unnest',
    text: UNNEST,
    values: [
      rows.map((r) => r.id),
      rows.map((r) => r.event),
      rows.map((r) => r.serverId),
      rows.map((r) => r.actorId),
      rows.map((r) => r.actorEmail),
      rows.map((r) => r.apiTokenId),
      rows.map((r) => r.ip),
      rows.map((r) => JSON.stringify(r.properties)),
      rows.map((r) => r.createdAt),
    ],
  }),
};

/** CPU (ms) a process has used so far, from /proc (10 ms ticks). */
const procCpuMs = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};

async function block(c, backendPid, way, batch) {
  const serverId = randomUUID();
  const actorId = randomUUID();
  const pg0 = procCpuMs(backendPid);
  const self0 = process.cpuUsage();
  for (let n = 0; n < BLOCK_ENTRIES; n += batch) {
    const rows = Array.from({ length: batch }, () => entry(serverId, actorId));
    await c.query(ways[way](rows));
  }
  const self = process.cpuUsage(self0);
  return { postgresUs: ((procCpuMs(backendPid) - pg0) * 1000) / BLOCK_ENTRIES, clientUs: (self.user + self.system) / BLOCK_ENTRIES };
}

async function main() {
  const db = await openBenchDatabase();
  const c = new Client({ connectionString: db.url });
  try {
    await c.connect();
    await c.query(`create table activity (id uuid not null, event varchar(64) not null, server_id uuid null, actor_id uuid null, actor_email varchar(254) null, api_token_id uuid null,
      ip varchar(64) null, properties jsonb not null, created_at timestamptz not null, constraint activity_pkey primary key (id))`);
    await c.query('create index on activity (created_at, id)');
    await c.query('create index on activity (server_id, created_at)');
    await c.query('create index on activity (actor_id, created_at)');
    await c.query('set plan_cache_mode = force_generic_plan'); // as src/db/read-rows.ts does for its named statements
    // SYNCHRONOUS_COMMIT=off: what the commits cost when they do not wait for the WAL to reach the disk
    if (process.env.SYNCHRONOUS_COMMIT === 'off') await c.query('set synchronous_commit = off');
    const backendPid = (await c.query('select pg_backend_pid() as pid')).rows[0].pid;
    const out = {};
    for (const batch of [1, 16]) {
      for (const way of Object.keys(ways)) await block(c, backendPid, way, batch); // warm-up
      const got = { values: [], unnest: [] };
      for (let i = 0; i < PAIRS; i++) {
        const order = i % 2 === 0 ? ['values', 'unnest'] : ['unnest', 'values'];
        for (const way of order) got[way].push(await block(c, backendPid, way, batch));
      }
      out[batch] = {};
      for (const way of Object.keys(got)) {
        out[batch][way] = { postgresUsPerEntry: spread(got[way].map((x) => x.postgresUs)), clientUsPerEntry: spread(got[way].map((x) => x.clientUs)) };
        const r = out[batch][way];
        console.log(
          `batches of ${batch}, ${way}: PostgreSQL ${r.postgresUsPerEntry.median} µs per entry [${r.postgresUsPerEntry.p25}–${r.postgresUsPerEntry.p75}], ` +
            `client ${r.clientUsPerEntry.median} µs [${r.clientUsPerEntry.p25}–${r.clientUsPerEntry.p75}]`,
        );
      }
    }
    console.log(JSON.stringify({ blockEntries: BLOCK_ENTRIES, pairs: PAIRS, results: out }));
  } finally {
    await c.end().catch(() => undefined);
    await db.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
