'use strict';
/**
 * Baseline for scenario 6, in a process of its own (in the bench's process its timers and samplers
 * slowed it): a bare Node HTTP server. GET sends the file `BENCH_FILE` (one read stream of 1 MiB chunks
 * piped to the response, Content-Length set); PUT writes the body to `BENCH_UPLOAD_TO` (a write
 * stream, then fsync, as the file worker does before it answers). Prints its port on stdout.
 */
const fs = require('node:fs');
const http = require('node:http');
const { pipeline } = require('node:stream/promises');

const file = process.env.BENCH_FILE;
const uploadTo = process.env.BENCH_UPLOAD_TO;

async function receive(req, res) {
  await pipeline(req, fs.createWriteStream(uploadTo));
  const fd = fs.openSync(uploadTo, 'r+');
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  res.writeHead(201).end();
}

const server = http.createServer((req, res) => {
  if (req.method === 'PUT') return void receive(req, res).catch(() => res.destroy());
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': fs.statSync(file).size });
  pipeline(fs.createReadStream(file, { highWaterMark: 1024 * 1024 }), res).catch(() => res.destroy());
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
