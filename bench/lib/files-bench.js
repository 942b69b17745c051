'use strict';
/**
 * The file manager's throughput: a 512 MiB file uploaded (multipart, POST /files/upload) and
 * downloaded (GET /files/download) through the panel and its node agent, against a plain copy of the
 * same file on the same disk (`cp`) in the same run, with the panel's RSS sampled during each; the
 * same file up and down over the node's SFTP server (the ssh2 client's fastPut/fastGet, 64 requests
 * of 32 KiB in flight as OpenSSH's sftp has); and listing a folder of 10,000 files (p50/p99 of the
 * page of 1,000 the API gives at most).
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { pipeline } = require('node:stream/promises');
const { rssMiB, Histogram, sleep } = require('./util');

const MIB = 1024 * 1024;

/** Samples the RSS of `pid` every 100 ms until stopped; returns { beforeMiB, peakMiB }. */
function sampleRss(pid) {
  const beforeMiB = rssMiB(pid);
  let peakMiB = beforeMiB;
  const t = setInterval(() => (peakMiB = Math.max(peakMiB, rssMiB(pid) ?? 0)), 100);
  return () => (clearInterval(t), { beforeMiB, peakMiB });
}

/** Writes `mib` MiB of incompressible bytes to `file`. */
function makeFile(file, mib) {
  const fd = fs.openSync(file, 'w');
  const block = require('node:crypto').randomBytes(MIB);
  for (let i = 0; i < mib; i++) fs.writeSync(fd, block);
  fs.closeSync(fd);
}

const seconds = (t0) => Number(process.hrtime.bigint() - t0) / 1e9;

/** Streams `file` as one multipart part to the upload route; resolves with the status. */
function upload(panelUrl, token, serverId, file) {
  const boundary = 'hostpanelbench' + Date.now();
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const size = fs.statSync(file).size;
  const url = new URL(`/api/v1/servers/${serverId}/files/upload?path=/`, panelUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + size + tail.length } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => (res.statusCode === 201 ? resolve() : reject(new Error(`upload → ${res.statusCode}: ${text.slice(0, 300)}`))));
    });
    req.on('error', reject);
    req.write(head);
    const rs = fs.createReadStream(file, { highWaterMark: MIB });
    rs.on('error', reject);
    rs.pipe(req, { end: false });
    rs.on('end', () => req.end(tail));
  });
}

/** Downloads into `out` with node:http (the client's own cost kept low: fetch's web streams are slower than the panel). */
function download(panelUrl, token, serverId, out) {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(`/api/v1/servers/${serverId}/files/download?path=/big.bin`, panelUrl), { headers: { authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`download → ${res.statusCode}`));
      pipeline(res, fs.createWriteStream(out, { highWaterMark: MIB })).then(resolve, reject);
    });
    req.on('error', reject);
  });
}

/** Runs `fn(sftp)` on an SFTP session of `login` ({ port, username, password }). */
function withSftp(login, fn) {
  const { Client } = require('ssh2');
  const client = new Client();
  return new Promise((resolve, reject) => {
    client.once('error', reject);
    client.once('ready', () =>
      client.sftp((err, sftp) => {
        if (err) return reject(err);
        Promise.resolve(fn(sftp)).then(resolve, reject).finally(() => client.end());
      }),
    );
    client.connect({ host: '127.0.0.1', port: login.port, username: login.username, password: login.password, hostVerifier: () => true });
  });
}

const sftpCall = (fn) => new Promise((resolve, reject) => fn((err) => (err ? reject(err) : resolve())));

/** Up and down over SFTP: seconds of each. */
async function sftpTransfer(login, src, out, log) {
  log('  files: upload over SFTP');
  let t0 = process.hrtime.bigint();
  await withSftp(login, (sftp) => sftpCall((cb) => sftp.fastPut(src, '/sftp.bin', { concurrency: 64, chunkSize: 32 * 1024 }, cb)));
  const up = seconds(t0);
  log('  files: download over SFTP');
  t0 = process.hrtime.bigint();
  await withSftp(login, (sftp) => sftpCall((cb) => sftp.fastGet('/sftp.bin', out, { concurrency: 64, chunkSize: 32 * 1024 }, cb)));
  execFileSync('sync');
  const down = seconds(t0);
  if (fs.statSync(out).size !== fs.statSync(src).size) throw new Error('the SFTP download is not the size of the upload');
  await withSftp(login, (sftp) => sftpCall((cb) => sftp.unlink('/sftp.bin', cb)));
  return { up, down };
}

async function runFilesScenario({ panelUrl, panelPid, userToken, serverId, serverDir, sftp = null, sizeMiB = 512, listFiles = 10_000, listRequests = 100, log }) {
  const work = fs.mkdtempSync(path.join(path.dirname(serverDir), '..', 'bench-files-'));
  const result = {};
  try {
    const src = path.join(work, 'big.bin');
    log(`  files: writing a ${sizeMiB} MiB file`);
    makeFile(src, sizeMiB);

    // the plain copy: the same bytes read and written on the same disk (its page cache warm, as for the upload)
    let t0 = process.hrtime.bigint();
    execFileSync('cp', ['--reflink=never', src, path.join(work, 'copy.bin')]);
    execFileSync('sync');
    const copySeconds = seconds(t0);
    fs.rmSync(path.join(work, 'copy.bin'));

    log('  files: upload through the panel');
    let stop = sampleRss(panelPid);
    t0 = process.hrtime.bigint();
    await upload(panelUrl, userToken, serverId, src);
    const uploadSeconds = seconds(t0);
    const uploadRss = stop();

    log('  files: download through the panel');
    stop = sampleRss(panelPid);
    t0 = process.hrtime.bigint();
    await download(panelUrl, userToken, serverId, path.join(work, 'down.bin'));
    execFileSync('sync');
    const downloadSeconds = seconds(t0);
    const downloadRss = stop();
    if (fs.statSync(path.join(work, 'down.bin')).size !== sizeMiB * MIB) throw new Error('the download is not the size of the upload');

    const mbps = (s) => Math.round((sizeMiB / s) * 10) / 10;
    result.transfer = {
      sizeMiB,
      copy: { seconds: copySeconds, mibPerSec: mbps(copySeconds) },
      upload: { seconds: uploadSeconds, mibPerSec: mbps(uploadSeconds), rss: uploadRss, ratio: Math.round((copySeconds / uploadSeconds) * 100) / 100 },
      download: { seconds: downloadSeconds, mibPerSec: mbps(downloadSeconds), rss: downloadRss, ratio: Math.round((copySeconds / downloadSeconds) * 100) / 100 },
    };
    log(`  files: copy ${mbps(copySeconds)} MiB/s, upload ${mbps(uploadSeconds)} MiB/s (${result.transfer.upload.ratio}x), download ${mbps(downloadSeconds)} MiB/s (${result.transfer.download.ratio}x)`);
    fs.rmSync(path.join(work, 'down.bin'));

    if (sftp) {
      const agentPid = panelPid; // the local agent runs in the panel's process
      stop = sampleRss(agentPid);
      const { up, down } = await sftpTransfer(sftp, src, path.join(work, 'sftp-down.bin'), log);
      const rss = stop();
      const ratio = (s) => Math.round((copySeconds / s) * 100) / 100;
      result.sftp = { upload: { seconds: up, mibPerSec: mbps(up), ratio: ratio(up) }, download: { seconds: down, mibPerSec: mbps(down), ratio: ratio(down) }, rss };
      log(`  files: SFTP upload ${mbps(up)} MiB/s (${ratio(up)}x cp), download ${mbps(down)} MiB/s (${ratio(down)}x cp)`);
    }

    // a folder of 10,000 files, made by the server's own user as its processes would
    const many = path.join(serverDir, 'many');
    fs.mkdirSync(many);
    for (let i = 0; i < listFiles; i++) fs.writeFileSync(path.join(many, `file-${String(i).padStart(5, '0')}.txt`), 'x');
    const { uid, gid } = fs.statSync(serverDir);
    execFileSync('chown', ['-R', `${uid}:${gid}`, many]);
    const hist = new Histogram();
    const url = `${panelUrl}/api/v1/servers/${serverId}/files?path=/many&limit=1000`;
    for (let i = 0; i < listRequests + 5; i++) {
      const t = process.hrtime.bigint();
      const res = await fetch(url, { headers: { authorization: `Bearer ${userToken}` } });
      const body = await res.json();
      if (res.status !== 200 || body.meta.total !== listFiles) throw new Error(`list → ${res.status}`);
      if (i >= 5) hist.add(Number(process.hrtime.bigint() - t) / 1e6);
    }
    result.list = { files: listFiles, pageSize: 1000, latencyMs: hist.summary() };
    log(`  files: listing ${listFiles} files p50 ${result.list.latencyMs.p50} ms, p99 ${result.list.latencyMs.p99} ms`);
    fs.rmSync(many, { recursive: true, force: true });
    await sleep(100);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  result.machine = { freeMemMiB: Math.round(os.freemem() / MIB) };
  return result;
}

module.exports = { runFilesScenario };
