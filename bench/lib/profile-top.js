'use strict';
/**
 * Prints the top self-time functions, top inclusive by file and by function of a .cpuprofile:
 *   node bench/lib/profile-top.js <file> [n] [last-seconds] [skip-last-seconds]
 * `last-seconds` keeps only the samples of the profile's final seconds (e.g. 11 for the GraphQL
 * phase, the last one of scenario 2), and leaves out idle time; `skip-last-seconds` ends the window
 * that long before the end (e.g. 12 11 for the REST phase before it).
 */
const fs = require('node:fs');

function top(file, n = 25, lastSeconds = 0, skipLastSeconds = 0) {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byId = new Map(prof.nodes.map((x) => [x.id, x]));
  const self = new Map();
  const dt = prof.timeDeltas;
  const counts = new Map();
  const t = [];
  let now = 0;
  for (let i = 0; i < prof.samples.length; i++) t.push((now += dt[i] ?? 0));
  const to = now - skipLastSeconds * 1e6;
  const from = lastSeconds > 0 ? to - lastSeconds * 1e6 : -Infinity;
  prof.samples.forEach((id, i) => {
    if (t[i] < from || t[i] > to) return;
    const node = byId.get(id);
    if (lastSeconds > 0 && node.callFrame.functionName === '(idle)') return;
    counts.set(id, (counts.get(id) ?? 0) + (dt[i] ?? 0));
  });
  let total = 0;
  for (const [id, us] of counts) {
    const node = byId.get(id);
    const cf = node.callFrame;
    const key = `${cf.functionName || '(anonymous)'} ${cf.url.replace(/^.*node_modules\//, 'nm/').replace(/^file:\/\/.*\/main\//, '')}:${cf.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + us);
    total += us;
  }
  // inclusive time per package / file
  const parent = new Map();
  for (const x of prof.nodes) for (const c of x.children ?? []) parent.set(c, x.id);
  const incl = new Map();
  const inclFn = new Map();
  for (const [id, us] of counts) {
    const seenFn = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur).callFrame;
      const k = `${cf.functionName || '(anonymous)'} ${cf.url.replace(/^.*node_modules\//, 'nm/').replace(/^file:\/\/.*\/main\//, '')}:${cf.lineNumber + 1}`;
      if (!seenFn.has(k)) {
        seenFn.add(k);
        inclFn.set(k, (inclFn.get(k) ?? 0) + us);
      }
    }
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const url = byId.get(cur).callFrame.url;
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
      const k = m ? m[1] : url.includes('/dist/') ? 'dist/' + url.split('/dist/')[1] : null;
      if (k && !seen.has(k)) {
        seen.add(k);
        incl.set(k, (incl.get(k) ?? 0) + us);
      }
    }
  }
  const pct = (us) => ((us / total) * 100).toFixed(1).padStart(5) + '%';
  console.log(`total sampled ${(total / 1e6).toFixed(2)} s`);
  console.log('--- self time');
  for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(pct(us), k);
  console.log('--- inclusive by package/file');
  for (const [k, us] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(pct(us), k);
  console.log('--- inclusive by function');
  for (const [k, us] of [...inclFn].sort((a, b) => b[1] - a[1]).slice(0, n * 2)) console.log(pct(us), k);
}

if (require.main === module) top(process.argv[2], Number(process.argv[3] ?? 25), Number(process.argv[4] ?? 0), Number(process.argv[5] ?? 0));
module.exports = { top };
