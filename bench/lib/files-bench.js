'use strict';
/**
 * The file manager's throughput: a 512 MiB file uploaded (multipart, POST /files/upload) and
 * downloaded (GET /files/download) through the panel and its node agent by curl, against a plain copy
 * of the same file on the same disk (`cp`) in rounds of the same run (see transferRounds), with the
 * panel's RSS and the CPU of each process sampled during each; the
 * same file up and down over the node's SFTP server (the ssh2 client's fastPut/fastGet, 64 requests
 * of 32 KiB in flight as OpenSSH's sftp has); and listing a folder of 10,000 files (p50/p99 of the
 * page of 1,000 the API gives at most).
 */
const { execFile, execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { rssMiB, Histogram, sleep, procCpuSplitMs } = require('./util');

const MIB = 1024 * 1024;

/** Samples the RSS of `pid` every 100 ms until stopped; returns { beforeMiB, peakMiB }. */
function sampleRss(pid) {
  const beforeMiB = rssMiB(pid);
  let peakMiB = beforeMiB;
  const t = setInterval(() => (peakMiB = Math.max(peakMiB, rssMiB(pid) ?? 0)), 100);
  return () => (clearInterval(t), { beforeMiB, peakMiB });
}

/** The processes below `pid` (the panel's file workers), from /proc. */
function childPids(pid) {
  const out = [];
  try {
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      for (const c of fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean)) out.push(Number(c), ...childPids(Number(c)));
    }
  } catch {
    // gone
  }
  return out;
}

/**
 * CPU (user and kernel, ms) that the panel (with its agent), its file worker and the client use
 * during `fn` (a timed transfer, whose value is the client's CPU): the cost of a transfer, which the
 * machine's load changes far less than it changes MiB/s. `withChildren` false: the process alone.
 */
async function measureCpu(panelPid, fn, withChildren = true) {
  const read = () => {
    const pids = [panelPid, ...(withChildren ? childPids(panelPid) : [])];
    return { each: Object.fromEntries(pids.map((p) => [p, procCpuSplitMs(p) ?? { user: 0, sys: 0 }])) };
  };
  const a = read();
  const { seconds: elapsed, value } = await fn();
  const b = read();
  const sum = (pick) => Object.keys(b.each).filter(pick).reduce((acc, p) => ({ user: acc.user + b.each[p].user - (a.each[p]?.user ?? 0), sys: acc.sys + b.each[p].sys - (a.each[p]?.sys ?? 0) }), { user: 0, sys: 0 });
  const cpu = {
    panel: sum((p) => Number(p) === panelPid),
    worker: sum((p) => Number(p) !== panelPid),
    client: value,
  };
  return { seconds: elapsed, cpu };
}

/** Writes `mib` MiB of incompressible bytes to `file`. */
function makeFile(file, mib) {
  const fd = fs.openSync(file, 'w');
  const block = require('node:crypto').randomBytes(MIB);
  for (let i = 0; i < mib; i++) fs.writeSync(fd, block);
  fs.closeSync(fd);
}

const seconds = (t0) => Number(process.hrtime.bigint() - t0) / 1e9;

/**
 * Runs curl with `args` (the client of the HTTP transfers: a lean C client, as a user's would be,
 * where a Node client cost this machine's two shared cores more CPU than the panel, 1.3 s of user time
 * for a 512 MiB download); resolves with curl's output and its CPU ({ user, sys } ms, from bash's
 * `times`).
 */
function curl(args) {
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', 'curl "$@" && times', 'curl', ...args], { maxBuffer: 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`curl: ${err.message} ${stderr.slice(0, 300)}`));
      const lines = stdout.trimEnd().split('\n');
      const ms = (t) => {
        const m = /(\d+)m([\d.]+)s/.exec(t);
        return m ? Math.round((Number(m[1]) * 60 + Number(m[2])) * 1000) : 0;
      };
      const [user, sys] = lines.pop().trim().split(/\s+/).map(ms); // the children's line
      lines.pop(); // the shell's own
      resolve({ output: lines.join('\n'), cpu: { user, sys } });
    });
  });
}

/** Uploads `file` as one multipart part named `name` to the upload route; resolves with curl's CPU. */
async function upload(panelUrl, token, serverId, file, name = 'big.bin') {
  const url = new URL(`/api/v1/servers/${serverId}/files/upload?path=/`, panelUrl);
  // (no `Expect: 100-continue`: the body goes at once, as a browser's does)
  const { output, cpu } = await curl(['-sS', '-o', '/dev/null', '-w', '%{http_code}\n', '-H', `authorization: Bearer ${token}`, '-H', 'expect:', '-F', `file=@${file};filename=${name};type=application/octet-stream`, String(url)]);
  if (output.trim() !== '201') throw new Error(`upload → ${output.trim()}`);
  return cpu;
}

/** Sends `file` as the raw body of a PUT to `url` (the panel's PUT /files/contents, or the bare server); resolves with curl's CPU. */
async function putRaw(url, token, file) {
  const { output, cpu } = await curl(['-sS', '-o', '/dev/null', '-w', '%{http_code}\n', '-H', `authorization: Bearer ${token}`, '-H', 'expect:', '-T', file, String(url)]);
  if (!/^20[01]$/.test(output.trim())) throw new Error(`PUT ${url} → ${output.trim()}`);
  return cpu;
}

/** Deletes `file` from the server through the API (untimed: the rounds' uploads each write a new file, as cp does). */
async function removeFile(panelUrl, token, serverId, file) {
  const res = await fetch(new URL(`/api/v1/servers/${serverId}/files/delete`, panelUrl), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ paths: [file] }) });
  if (res.status !== 204) throw new Error(`delete ${file} → ${res.status} ${await res.text()}`);
}

/** Downloads into `out` (from the panel, or from `url` when given); resolves with curl's CPU. */
async function download(panelUrl, token, serverId, out, url = new URL(`/api/v1/servers/${serverId}/files/download?path=/big.bin`, panelUrl)) {
  const { output, cpu } = await curl(['-sS', '-o', out, '-w', '%{http_code}\n', '-H', `authorization: Bearer ${token}`, String(url)]);
  if (output.trim() !== '200') throw new Error(`download → ${output.trim()}`);
  return cpu;
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

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round2 = (x) => Math.round(x * 100) / 100;

/** One timed step: `sync` first (untimed, so that nothing written before is flushed inside it), then `fn` and, when `syncAfter`, a timed `sync`. */
async function timed(fn, syncAfter) {
  execFileSync('sync');
  const t0 = process.hrtime.bigint();
  const value = await fn();
  if (syncAfter) execFileSync('sync');
  return { seconds: seconds(t0), value };
}

/**
 * The bare Node HTTP server of bench/children/baseline-files.js, in a process of its own: the one-hop
 * download of `file` and upload to `uploadTo` that the panel's four hops are measured against, beside
 * cp; resolves with its URL, its pid and a close function.
 */
function bareFileServer(file, uploadTo, relayTo = '') {
  const child = spawn(process.execPath, [path.join(__dirname, '..', 'children', 'baseline-files.js')], { env: { ...process.env, BENCH_FILE: file, BENCH_UPLOAD_TO: uploadTo, BENCH_RELAY_TO: relayTo }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the bare file server exited (${code})`)));
    child.stdout.once('data', (d) => resolve({ url: `http://127.0.0.1:${String(d).trim()}/`, pid: child.pid, close: () => child.kill() }));
  });
}

/**
 * `rounds` rounds of cp, the bare server's download (bareFileServer) straight and through a bare relay,
 * download, the bare server's upload straight and through the relay, upload (multipart), raw PUT (each download and cp followed by `sync` in its time, each
 * upload synced by its writer before it answers): the disk is shared and cp's own speed varies by a
 * third between runs, so each round's transfers are compared with that round's cp, and the figure
 * given is the median of the per-round ratios with their spread (min, max). Every upload writes a new
 * file, as cp does, which is deleted after it untimed (writing over the 512 MiB file the downloads
 * read made the worker's rename free its blocks inside the upload's time: 0.4 s of kernel time more).
 * MiB/s are the medians of the rounds; the RSS is the panel's before the first round and its peak
 * over all of them.
 */
async function transferRounds({ panelUrl, panelPid, userToken, serverId, src, work, sizeMiB, rounds, log }) {
  const mbps = (s) => Math.round((sizeMiB / s) * 10) / 10;
  const copy = [];
  const bare = [];
  const bareCpu = [];
  const server = await bareFileServer(src, path.join(work, 'bare-up.bin'));
  // two hops: curl → a bare relay → the bare server, each in its own process
  const relay = await bareFileServer(src, '', server.url);
  const relayDown = [];
  const relayUp = [];
  const bareUp = [];
  const bareUpCpu = [];
  const raw = [];
  const rawCpu = [];
  const up = [];
  const down = [];
  const upRss = [];
  const downRss = [];
  const upCpu = [];
  const downCpu = [];
  try {
    for (let i = 0; i < rounds; i++) {
      // the plain copy: the same bytes read and written on the same disk (its page cache warm, as for the upload)
      copy.push((await timed(() => execFileSync('cp', ['--reflink=never', src, path.join(work, 'copy.bin')]), true)).seconds);
      fs.rmSync(path.join(work, 'copy.bin'));

      let m = await measureCpu(server.pid, () => timed(() => download(panelUrl, userToken, serverId, path.join(work, 'down.bin'), server.url), true), false);
      bare.push(m.seconds);
      bareCpu.push(m.cpu);
      fs.rmSync(path.join(work, 'down.bin'));
      relayDown.push((await timed(() => download(panelUrl, userToken, serverId, path.join(work, 'down.bin'), relay.url), true)).seconds);
      fs.rmSync(path.join(work, 'down.bin'));

      let stop = sampleRss(panelPid);
      m = await measureCpu(panelPid, () => timed(() => download(panelUrl, userToken, serverId, path.join(work, 'down.bin')), true));
      down.push(m.seconds);
      downCpu.push(m.cpu);
      downRss.push(stop());
      if (fs.statSync(path.join(work, 'down.bin')).size !== sizeMiB * MIB) throw new Error('the download is not the size of the upload');
      fs.rmSync(path.join(work, 'down.bin'));

      m = await measureCpu(server.pid, () => timed(() => putRaw(server.url, userToken, src), false), false);
      bareUp.push(m.seconds);
      bareUpCpu.push(m.cpu);
      fs.rmSync(path.join(work, 'bare-up.bin'));
      relayUp.push((await timed(() => putRaw(relay.url, userToken, src), false)).seconds);
      fs.rmSync(path.join(work, 'bare-up.bin'));

      stop = sampleRss(panelPid);
      m = await measureCpu(panelPid, () => timed(() => upload(panelUrl, userToken, serverId, src, 'up.bin'), false));
      up.push(m.seconds);
      upCpu.push(m.cpu);
      await removeFile(panelUrl, userToken, serverId, '/up.bin');
      m = await measureCpu(panelPid, () => timed(() => putRaw(new URL(`/api/v1/servers/${serverId}/files/contents?path=/up.bin`, panelUrl), userToken, src), false));
      raw.push(m.seconds);
      rawCpu.push(m.cpu);
      upRss.push(stop());
      await removeFile(panelUrl, userToken, serverId, '/up.bin');
      const x = (t) => `${mbps(t)} MiB/s (${round2(copy[i] / t)}x)`;
      log(`  files: round ${i + 1}: cp ${mbps(copy[i])} MiB/s; download: bare server ${x(bare[i])}, through a bare relay ${x(relayDown[i])}, panel ${x(down[i])}; upload: bare server ${x(bareUp[i])}, through a bare relay ${x(relayUp[i])}, panel ${x(up[i])}, raw PUT ${x(raw[i])}`);
    }
  } finally {
    // the bare servers are processes of their own: they go whatever happened
    server.close();
    relay.close();
  }
  const rss = (all) => ({ beforeMiB: all[0].beforeMiB, peakMiB: Math.max(...all.map((r) => r.peakMiB)) });
  const summary = (times) => {
    const ratios = times.map((t, i) => round2(copy[i] / t));
    return { seconds: median(times), mibPerSec: mbps(median(times)), ratio: round2(median(ratios)), ratios, ratioMin: Math.min(...ratios), ratioMax: Math.max(...ratios), secondsByRound: times };
  };
  // the median round's CPU of each process, user + kernel
  const cpuMedian = (all) => Object.fromEntries(['panel', 'worker', 'client'].map((k) => [k, { user: Math.round(median(all.map((c) => c[k].user))), sys: Math.round(median(all.map((c) => c[k].sys))) }]));
  const transfer = {
    sizeMiB,
    rounds,
    copy: { seconds: median(copy), mibPerSec: mbps(median(copy)), secondsByRound: copy, mibPerSecMin: mbps(Math.max(...copy)), mibPerSecMax: mbps(Math.min(...copy)) },
    upload: { ...summary(up), rss: rss(upRss), cpuMs: cpuMedian(upCpu) },
    download: { ...summary(down), rss: rss(downRss), cpuMs: cpuMedian(downCpu) },
    bare: { ...summary(bare), cpuMs: cpuMedian(bareCpu) },
    bareUpload: { ...summary(bareUp), cpuMs: cpuMedian(bareUpCpu) },
    rawUpload: { ...summary(raw), cpuMs: cpuMedian(rawCpu) },
    relayDownload: summary(relayDown),
    relayUpload: summary(relayUp),
  };
  log(`  files: median of ${rounds} rounds: cp ${transfer.copy.mibPerSec} MiB/s, upload ${transfer.upload.mibPerSec} MiB/s (${transfer.upload.ratio}x, ${transfer.upload.ratioMin}–${transfer.upload.ratioMax}), download ${transfer.download.mibPerSec} MiB/s (${transfer.download.ratio}x, ${transfer.download.ratioMin}–${transfer.download.ratioMax}), bare server ${transfer.bare.mibPerSec} MiB/s (${transfer.bare.ratio}x, ${transfer.bare.ratioMin}–${transfer.bare.ratioMax}); upload to the bare server ${transfer.bareUpload.mibPerSec} MiB/s (${transfer.bareUpload.ratio}x), raw PUT ${transfer.rawUpload.mibPerSec} MiB/s (${transfer.rawUpload.ratio}x); through a bare relay: download ${transfer.relayDownload.mibPerSec} MiB/s (${transfer.relayDownload.ratio}x), upload ${transfer.relayUpload.mibPerSec} MiB/s (${transfer.relayUpload.ratio}x)`);
  const cpuText = (c) => ['panel', 'worker', 'client'].map((k) => `${k} ${c[k].user}+${c[k].sys}`).join(', ');
  log(`  files: CPU ms (user+kernel) of the median round: download ${cpuText(transfer.download.cpuMs)}; upload ${cpuText(transfer.upload.cpuMs)}; raw PUT ${cpuText(transfer.rawUpload.cpuMs)}; bare server (as panel) download ${cpuText(transfer.bare.cpuMs)}, upload ${cpuText(transfer.bareUpload.cpuMs)}`);
  return transfer;
}

async function runFilesScenario({ panelUrl, panelPid, userToken, serverId, serverDir, sftp = null, sizeMiB = 512, rounds = 3, listFiles = 10_000, listRequests = 100, log }) {
  const work = fs.mkdtempSync(path.join(path.dirname(serverDir), '..', 'bench-files-'));
  const result = {};
  try {
    const src = path.join(work, 'big.bin');
    log(`  files: writing a ${sizeMiB} MiB file`);
    makeFile(src, sizeMiB);

    // the first upload puts the file on the server (the downloads read it); not counted
    log('  files: first upload (not counted)');
    await upload(panelUrl, userToken, serverId, src);
    result.transfer = await transferRounds({ panelUrl, panelPid, userToken, serverId, src, work, sizeMiB, rounds, log });
    const copySeconds = result.transfer.copy.seconds;
    const mbps = (s) => Math.round((sizeMiB / s) * 10) / 10;

    if (sftp) {
      const agentPid = panelPid; // the local agent runs in the panel's process
      const stop = sampleRss(agentPid);
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
