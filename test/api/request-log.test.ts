/**
 * The request log: one pino line per request with its id, method, URL, status and time, at the level
 * its status calls for, and nothing at all for a line the level leaves out. Real HTTP against an
 * Express app with the middleware, and a real pino logger writing to a stream this test reads.
 */
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import pino from 'pino';
import { requestLog } from '../../src/http/request-log.js';

interface Line {
  level: number;
  msg: string;
  req: { id: string; method: string; url: string };
  res: { statusCode: number };
  responseTime: number;
}

async function serve(level: string) {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Line);
      cb();
    },
  });
  const app = express();
  app.use(requestLog(pino({ level }, sink)));
  const api = express.Router();
  api.get('/ok', (_req, res) => {
    res.json({ ok: true });
  });
  api.get('/missing', (_req, res) => {
    res.status(404).json({ error: 'no' });
  });
  api.get('/broken', (_req, res) => {
    res.status(500).json({ error: 'broken' });
  });
  api.get('/slow', () => {
    // never answers: the client goes away
  });
  app.use('/api', api);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => new Promise((r) => (server.closeAllConnections(), server.close(r)));
  return { base, lines, close };
}

/** A request the client gives up on before the answer. */
function abandon(url: string): Promise<void> {
  return new Promise((resolve) => {
    const req = http.get(url);
    req.on('error', () => resolve());
    setTimeout(() => req.destroy(), 100);
  });
}

/** Waits until `lines` holds `n` lines (at most 5 s). */
async function linesAtLeast(lines: unknown[], n: number): Promise<void> {
  for (let i = 0; i < 500 && lines.length < n; i++) await new Promise((r) => setTimeout(r, 10));
}

test('each request logs one line with its id, method, full URL, status and time (aborted ones too); the id is echoed', async () => {
  const s = await serve('debug');
  try {
    const res = await fetch(`${s.base}/api/ok?x=1`, { headers: { 'x-request-id': 'client-chosen-id-1' } });
    expect(res.headers.get('x-request-id')).toBe('client-chosen-id-1');
    const own = await fetch(`${s.base}/api/missing`);
    const ownId = own.headers.get('x-request-id');
    expect(ownId).toMatch(/^[0-9a-f-]{36}$/);
    await fetch(`${s.base}/api/broken`);
    await abandon(`${s.base}/api/slow`);
    await linesAtLeast(s.lines, 4);
    expect(s.lines.map((l) => [l.level, l.msg, l.req.id, l.req.method, l.req.url, l.res.statusCode])).toEqual([
      [20, 'request completed', 'client-chosen-id-1', 'GET', '/api/ok?x=1', 200],
      [30, 'request completed', ownId, 'GET', '/api/missing', 404],
      [50, 'request errored', expect.any(String), 'GET', '/api/broken', 500],
      [20, 'request aborted', expect.any(String), 'GET', '/api/slow', 200],
    ]);
    for (const l of s.lines) expect(l.responseTime).toBeGreaterThanOrEqual(0);
  } finally {
    await s.close();
  }
});

test('a level above the line writes nothing for it', async () => {
  const s = await serve('info');
  try {
    await fetch(`${s.base}/api/ok`);
    await fetch(`${s.base}/api/missing`);
    await abandon(`${s.base}/api/slow`);
    await fetch(`${s.base}/api/broken`);
    await linesAtLeast(s.lines, 2);
    expect(s.lines.map((l) => [l.msg, l.req.url, l.res.statusCode])).toEqual([
      ['request completed', '/api/missing', 404],
      ['request errored', '/api/broken', 500],
    ]);
  } finally {
    await s.close();
  }
});

/**
 * The real wiring in a process of its own (the process-wide logger writes to its standard output):
 * a route that throws, the API's error handler and the request log.
 */
const FAILING_APP = `
const express = require('express');
const { logger } = require(${JSON.stringify(path.resolve(__dirname, '../../dist/src/logger.js'))});
const { requestLog } = require(${JSON.stringify(path.resolve(__dirname, '../../dist/src/http/request-log.js'))});
const { apiErrorHandler } = require(${JSON.stringify(path.resolve(__dirname, '../../dist/src/http/errors.js'))});
const app = express();
app.use(requestLog(logger.child({ component: 'http' })));
app.get('/api/fails', () => { throw new Error('the disk is on fire'); });
app.get('/api/fails-late', (_req, res, next) => { res.status(200).write('partial'); next(new Error('the stream broke')); });
app.use(apiErrorHandler);
const server = app.listen(0, '127.0.0.1', async () => {
  const base = 'http://127.0.0.1:' + server.address().port;
  await fetch(base + '/api/fails').then((r) => r.text());
  await fetch(base + '/api/fails-late').then((r) => r.text()).catch(() => undefined);
  setTimeout(() => server.close(() => process.exit(0)), 200);
});
`;

test('a failed request is logged once, with its cause: a 5xx, and an error after the status was sent', async () => {
  const out = execFileSync(process.execPath, ['-e', FAILING_APP], { env: { ...process.env, LOG_LEVEL: 'info' }, encoding: 'utf8', timeout: 30_000 });
  const lines = out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line & { err?: { message: string }; component?: string });
  const errors = lines.filter((l) => l.level >= 50);
  expect(errors.map((l) => [l.msg, l.req?.url, l.res?.statusCode, l.err?.message])).toEqual([
    ['request errored', '/api/fails', 500, 'the disk is on fire'],
    ['request errored', '/api/fails-late', 200, 'the stream broke'],
  ]);
}, 60_000);
