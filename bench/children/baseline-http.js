'use strict';
/**
 * Baseline for scenario 1: a bare Express 5 + pg handler serving the same page of servers from the
 * same database (page ordered by created_at, id; limit 20; plus count(*); JSON out in the same shape),
 * with the same pool size as the panel (10). No auth, no rate limit, no ORM.
 */
const express = require('express');
const { Pool } = require('pg');

const pool = new Pool({ connectionString: process.env.BENCH_DATABASE_URL, max: 10 });
const app = express();
app.disable('x-powered-by');

const COLUMNS = `id, name, description, owner_id, node_id, blueprint_id, memory, cpu, disk, status, variables,
  auto_restart, last_exit_code, last_crash_at, last_stop_reason, crash_count, created_at, updated_at`;

app.get('/api/v1/servers', async (req, res) => {
  const limit = Math.min(100, Math.max(1, Number.parseInt(req.query.limit, 10) || 20));
  const page = Math.max(1, Number.parseInt(req.query.page, 10) || 1);
  try {
    const [rows, count] = await Promise.all([
      pool.query(`select ${COLUMNS} from servers order by created_at asc, id asc limit $1 offset $2`, [limit, (page - 1) * limit]),
      pool.query('select count(*)::int as n from servers'),
    ]);
    res.json({
      data: rows.rows.map((s) => ({
        id: s.id,
        name: s.name,
        description: s.description,
        ownerId: s.owner_id,
        nodeId: s.node_id,
        blueprintId: s.blueprint_id,
        memory: s.memory,
        cpu: s.cpu,
        disk: s.disk,
        status: s.status,
        variables: s.variables,
        autoRestart: s.auto_restart,
        lastExitCode: s.last_exit_code,
        lastCrashAt: s.last_crash_at,
        lastStopReason: s.last_stop_reason,
        crashCount: s.crash_count,
        createdAt: s.created_at,
        updatedAt: s.updated_at,
      })),
      meta: { total: count.rows[0].n, page, limit },
    });
  } catch (err) {
    res.status(500).json({ error: { code: 'INTERNAL_ERROR', message: String(err.message) } });
  }
});

const server = app.listen(0, '127.0.0.1', () => {
  process.send({ type: 'ready', url: `http://127.0.0.1:${server.address().port}`, pid: process.pid });
});
const close = () => {
  server.closeAllConnections();
  server.close(() => pool.end().finally(() => process.exit(0)));
  setTimeout(() => process.exit(0), 5000).unref();
};
process.on('message', (m) => m?.type === 'close' && close());
process.on('disconnect', close);
