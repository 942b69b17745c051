'use strict';
/**
 * Backups: a server of about `sizeMiB` MiB of mixed files (large random files, which do not
 * compress, and many small text files, which do) backed up through the panel and its local node
 * agent, against `tar czf` of the same tree in the same run; then a second backup of the unchanged
 * tree (what it adds to the store), and a restore of the first (the server offline).
 */
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { sleep } = require('./util');

const MIB = 1024 * 1024;
const seconds = (t0) => Number(process.hrtime.bigint() - t0) / 1e9;

/** Fills `dir` with ~sizeMiB MiB: 80% in 4 MiB random files, 20% in 40 KiB text files. */
function makeTree(dir, sizeMiB) {
  const big = Math.max(1, Math.round((sizeMiB * 0.8) / 4));
  const small = Math.max(1, Math.round((sizeMiB * 0.2 * 1024) / 40));
  fs.mkdirSync(path.join(dir, 'world', 'region'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'plugins', 'config'), { recursive: true });
  for (let i = 0; i < big; i++) fs.writeFileSync(path.join(dir, 'world', 'region', `r.${i}.mca`), crypto.randomBytes(4 * MIB));
  const line = 'motd=A Minecraft server; max-players=20; view-distance=10; spawn-protection=16\n';
  const text = line.repeat(Math.ceil((40 * 1024) / line.length)).slice(0, 40 * 1024);
  for (let i = 0; i < small; i++) fs.writeFileSync(path.join(dir, 'plugins', 'config', `c${i}.yml`), `# ${i}\n${text}`);
  return { big, small };
}

function storeBytes(dir) {
  let total = 0;
  const blobs = path.join(dir, 'blobs');
  if (!fs.existsSync(blobs)) return 0;
  for (const p of fs.readdirSync(blobs)) for (const f of fs.readdirSync(path.join(blobs, p))) total += fs.statSync(path.join(blobs, p, f)).size;
  return total;
}

async function api(panelUrl, token, method, p, body) {
  const res = await fetch(panelUrl + p, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p} → ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

async function backup(panelUrl, token, serverId, name) {
  const t0 = process.hrtime.bigint();
  const made = (await api(panelUrl, token, 'POST', `/api/v1/servers/${serverId}/backups`, { name })).data;
  for (;;) {
    const b = (await api(panelUrl, token, 'GET', `/api/v1/servers/${serverId}/backups/${made.id}`)).data;
    if (b.status === 'failed') throw new Error(`backup failed: ${b.error}`);
    if (b.status === 'completed') return { seconds: seconds(t0), backup: b };
    await sleep(50);
  }
}

async function runBackupsScenario({ panelUrl, userToken, serverId, serverDir, storeDir, sizeMiB = 1024, log }) {
  log(`  backups: writing a ${sizeMiB} MiB tree of mixed files`);
  const made = makeTree(serverDir, sizeMiB);
  const { uid, gid } = fs.statSync(serverDir);
  execFileSync('chown', ['-R', `${uid}:${gid}`, serverDir]);
  execFileSync('sync');
  const treeBytes = Number(execFileSync('du', ['-sb', serverDir]).toString().split(/\s/)[0]);
  const treeMiB = treeBytes / MIB;

  log('  backups: tar czf of the same tree (baseline)');
  const tgz = path.join(serverDir, '..', '..', `bench-${Date.now()}.tgz`); // the same disk, outside the tree
  let t0 = process.hrtime.bigint();
  execFileSync('tar', ['czf', tgz, '-C', serverDir, '.']);
  execFileSync('sync');
  const tarSeconds = seconds(t0);
  const tarBytes = fs.statSync(tgz).size;
  fs.rmSync(tgz);

  await sleep(2_500); // the tree is older than the first backup by more than its racy window
  log('  backups: first backup through the panel');
  const first = await backup(panelUrl, userToken, serverId, 'first');
  execFileSync('sync');
  const afterFirst = storeBytes(storeDir);
  await sleep(2_500);
  log('  backups: second backup of the unchanged tree');
  const second = await backup(panelUrl, userToken, serverId, 'second');
  const afterSecond = storeBytes(storeDir);

  log('  backups: restore of the first (after deleting the region files)');
  fs.rmSync(path.join(serverDir, 'world'), { recursive: true, force: true });
  t0 = process.hrtime.bigint();
  await api(panelUrl, userToken, 'POST', `/api/v1/servers/${serverId}/backups/${first.backup.id}/restore`, { truncate: true });
  for (;;) {
    const log = (await api(panelUrl, userToken, 'GET', `/api/v1/servers/${serverId}/activity?event=server:backup.restore-`)).data;
    if (log.length) {
      if (log[0].event.endsWith('fail')) throw new Error(`restore failed: ${JSON.stringify(log[0].properties)}`);
      break;
    }
    await sleep(50);
  }
  execFileSync('sync');
  const restoreSeconds = seconds(t0);
  if (fs.readdirSync(path.join(serverDir, 'world', 'region')).length !== made.big) throw new Error('the restore did not bring every file back');

  const rate = (s) => Math.round((treeMiB / s) * 10) / 10;
  const ratio = (s) => Math.round((tarSeconds / s) * 100) / 100;
  const result = {
    tree: { mib: Math.round(treeMiB), bigFiles: made.big, smallFiles: made.small },
    tar: { seconds: tarSeconds, mibPerSec: rate(tarSeconds), archiveMiB: Math.round(tarBytes / MIB) },
    first: { seconds: first.seconds, mibPerSec: rate(first.seconds), ratio: ratio(first.seconds), storeMiB: Math.round(afterFirst / MIB) },
    second: { seconds: second.seconds, mibPerSec: rate(second.seconds), ratio: ratio(second.seconds), addedBytes: afterSecond - afterFirst, addedPercent: Math.round(((afterSecond - afterFirst) / afterFirst) * 10000) / 100 },
    restore: { seconds: restoreSeconds, mibPerSec: rate(restoreSeconds), ratio: ratio(restoreSeconds) },
  };
  log(`  backups: tar czf ${result.tar.mibPerSec} MiB/s; first backup ${result.first.mibPerSec} MiB/s (${result.first.ratio}x), second ${result.second.mibPerSec} MiB/s adding ${result.second.addedBytes} bytes, restore ${result.restore.mibPerSec} MiB/s (${result.restore.ratio}x)`);
  return result;
}

module.exports = { runBackupsScenario };
