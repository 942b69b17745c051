'use strict';
/**
 * Baseline for scenario 6, in a process of its own (in the bench's process its timers and samplers
 * slowed it): a bare Node HTTP server. GET sends the file `BENCH_FILE` (one read stream of 1 MiB chunks
 * piped to the response, Content-Length set); PUT writes the body to `BENCH_UPLOAD_TO` in writes of
 * 1 MiB, then fsyncs it, as the file worker does (a write stream's 64 KiB writes, one at a time, took
 * twice as long). With `BENCH_RELAY_TO` (another such server's URL) it is a bare relay instead: both
 * methods are passed on to that server over HTTP (the body piped, chunked) and its answer piped back,
 * which gives the two hops (client → relay → writer in its own process) that the file worker's own
 * process makes the least the panel can do. Prints its port on stdout.
 */
const fs = require('node:fs');
const fsp = require('node:fs/promises');
const http = require('node:http');
const { pipeline } = require('node:stream/promises');

const file = process.env.BENCH_FILE;
const uploadTo = process.env.BENCH_UPLOAD_TO;
const relayTo = process.env.BENCH_RELAY_TO;

function relay(req, res) {
  const headers = req.method === 'PUT' ? { 'transfer-encoding': 'chunked' } : {};
  const next = http.request(relayTo, { method: req.method, headers }, (answer) => {
    res.writeHead(answer.statusCode, answer.headers);
    pipeline(answer, res).catch(() => res.destroy());
  });
  next.on('error', () => res.destroy());
  pipeline(req, next).catch(() => res.destroy());
}

async function receive(req, res) {
  const out = await fsp.open(uploadTo, 'w');
  let batch = [];
  let batched = 0;
  for await (const chunk of req) {
    batch.push(chunk);
    batched += chunk.length;
    if (batched < 1024 * 1024) continue;
    await out.writev(batch);
    batch = [];
    batched = 0;
  }
  if (batch.length) await out.writev(batch);
  await out.sync();
  await out.close();
  res.writeHead(201).end();
}

const server = http.createServer((req, res) => {
  if (relayTo) return relay(req, res);
  if (req.method === 'PUT') return void receive(req, res).catch(() => res.destroy());
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': fs.statSync(file).size });
  pipeline(fs.createReadStream(file, { highWaterMark: 1024 * 1024 }), res).catch(() => res.destroy());
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
