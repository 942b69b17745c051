import { ENTRY_BYTES } from '../filesystem/footprint';
import { promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';

const PAGE_SIZE = 4096;
const CLK_TCK = 100;

interface ProcStat {
  pid: number;
  ppid: number;
  pgrp: number;
  utime: number;
  stime: number;
  starttime: number;
  rssPages: number;
}

function parseStat(text: string): ProcStat | null {
  // pid (comm) state ppid pgrp ... ; comm may contain spaces/parens, so split after the last ')'.
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const pid = Number(text.slice(0, text.indexOf(' ')));
  const f = text.slice(close + 2).split(' ');
  // f[0]=state(3) f[1]=ppid(4) f[2]=pgrp(5) ... f[11]=utime(14) f[12]=stime(15) f[19]=starttime(22) f[21]=rss(24)
  return {
    pid,
    ppid: Number(f[1]),
    pgrp: Number(f[2]),
    utime: Number(f[11]),
    stime: Number(f[12]),
    starttime: Number(f[19]),
    rssPages: Number(f[21]),
  };
}

export function readProcStatSync(pid: number): ProcStat | null {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** Start time (clock ticks after boot) of a pid, to tell a leftover process from a reused pid. */
export function processStartTime(pid: number): number | null {
  return readProcStatSync(pid)?.starttime ?? null;
}

async function allStats(): Promise<ProcStat[]> {
  let entries: string[];
  try {
    entries = await fsp.readdir('/proc');
  } catch {
    return [];
  }
  const out: ProcStat[] = [];
  await Promise.all(
    entries.map(async (e) => {
      if (!/^\d+$/.test(e)) return;
      try {
        const s = parseStat(await fsp.readFile(`/proc/${e}/stat`, 'utf8'));
        if (s) out.push(s);
      } catch {
        /* process ended */
      }
    }),
  );
  return out;
}

export interface TreeUsage {
  /** resident memory of all processes of the tree / process group, bytes */
  rssBytes: number;
  /** total cpu time (user+system) in seconds */
  cpuSeconds: number;
  pids: number[];
}

/** Memory and cpu time of `rootPid`, its descendants and every member of its process group. */
export async function treeUsage(rootPid: number): Promise<TreeUsage> {
  const stats = await allStats();
  const children = new Map<number, ProcStat[]>();
  for (const s of stats) {
    const list = children.get(s.ppid);
    if (list) list.push(s);
    else children.set(s.ppid, [s]);
  }
  const seen = new Set<number>();
  const members: ProcStat[] = [];
  const add = (s: ProcStat): void => {
    if (seen.has(s.pid)) return;
    seen.add(s.pid);
    members.push(s);
    for (const c of children.get(s.pid) ?? []) add(c);
  };
  for (const s of stats) if (s.pid === rootPid || s.pgrp === rootPid) add(s);
  let rss = 0;
  let ticks = 0;
  for (const m of members) {
    rss += m.rssPages * PAGE_SIZE;
    ticks += m.utime + m.stime;
  }
  return { rssBytes: rss, cpuSeconds: ticks / CLK_TCK, pids: members.map((m) => m.pid) };
}

/** Sends a signal to a whole process group; returns false when it does not exist. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    try {
      process.kill(pgid, signal);
      return true;
    } catch {
      return false;
    }
  }
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Kills what is left of a process group from a previous agent run. `startTime` guards against a pid
 * that was reused by an unrelated process: the group is only killed when the leader is the same
 * process (same start time) or no longer exists (then a group with that id can only be our leftover,
 * since Linux does not hand out a pid that is still used as a process-group id).
 */
export function killLeftover(pid: number, startTime: number | null): boolean {
  if (!Number.isInteger(pid) || pid <= 1) return false;
  const st = readProcStatSync(pid);
  if (st && startTime !== null && st.starttime !== startTime) return false; // pid reused
  if (st && st.pgrp !== pid) return false; // not a group leader: not ours
  try {
    process.kill(-pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

/** How many file system calls a walk of a directory tree has under way at once. */
const WALK_CONCURRENCY = 64;

/**
 * Calls `visit` for every entry below `root` (not `root` itself; symlinks are not followed), directory
 * by directory, at most WALK_CONCURRENCY calls at a time. A tree of 150,000 small files measured with
 * one call per file all at once stalled the whole process (panel included) for seconds and took a
 * gigabyte. Unreadable directories are skipped.
 */
export async function forEachEntry(root: string, visit: (entry: string, isDir: boolean) => Promise<void>): Promise<void> {
  const dirs: string[] = [root];
  for (let d = dirs.pop(); d !== undefined; d = dirs.pop()) {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await fsp.readdir(d, { withFileTypes: true });
    } catch {
      continue;
    }
    const here = entries.map((e) => ({ entry: path.join(d, e.name), isDir: e.isDirectory() }));
    for (const h of here) if (h.isDir) dirs.push(h.entry);
    for (let i = 0; i < here.length; i += WALK_CONCURRENCY) {
      await Promise.all(here.slice(i, i + WALK_CONCURRENCY).map((h) => visit(h.entry, h.isDir)));
    }
  }
}

/** What one file, directory or link counts at least: an inode and its directory entry cost disk too. */
export const MIN_ENTRY_BYTES = ENTRY_BYTES;

/**
 * Disk a directory tree takes, in bytes: the blocks allocated to every entry (`st_blocks` × 512, so a
 * file grown with `fallocate --keep-size` counts what it holds, and a sparse file only what is written),
 * each entry at least MIN_ENTRY_BYTES (a million empty files take space too). Symlinks are not
 * followed; the root itself is not counted, nor files whose name `skip` accepts.
 */
export async function diskUsage(dir: string, skip: (name: string) => boolean = () => false): Promise<number> {
  let total = 0;
  await forEachEntry(dir, async (entry, isDir) => {
    if (!isDir && skip(path.basename(entry))) return;
    // read first, then add: `total += await …` would read `total` before the wait and lose the
    // sizes other visits add meanwhile
    const size = await fsp.lstat(entry).then(
      (st) => Math.max(st.blocks * 512, MIN_ENTRY_BYTES),
      () => 0, // gone meanwhile
    );
    total += size;
  });
  return total;
}
