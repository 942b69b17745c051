/**
 * A private /tmp and /dev/shm per server process: the agent (root) starts the command through
 * `unshare --mount --propagation private` (a mount namespace of its own, same pid), mounts a tmpfs
 * on each, then drops to the server's user with `setpriv` and execs the command. What a server
 * writes there is memory: it counts against the server's memory cgroup, and each tmpfs is at most
 * half the server's memory limit. The namespace (and its files) goes away with the server's processes.
 *
 * When the agent's own directory lies below /tmp (a DATA_DIR in /tmp), that directory is mounted
 * again at its place inside the new /tmp, so that the server still reaches its directory and the
 * assets; nothing else of the host's /tmp is visible.
 *
 * /proc is mounted again in the namespace with `hidepid=invisible`: a server's processes see their own
 * processes only, not the command lines of other servers' (where eggs put passwords: `+rcon.password
 * …`) nor the agent's. A proc mount has options of its own since Linux 5.8; on an older kernel the
 * host's /proc stays (a mount there would change every /proc of the pid namespace), with a warning.
 *
 * The root part runs with an environment of its own (ROOT_ENV: the agent's PATH, LANG=C), never the
 * server's: a server's variable such as LIBMOUNT_DEBUG must not steer mount or setpriv as root. The
 * server's environment comes on fd 4 (NUL-separated NAME=value), and perl, already running as the
 * server's user, makes it the whole environment and execs the command (same pid).
 *
 * The server's directory is also mounted at /mnt/server and /home/container in the namespace, where
 * Pterodactyl's egg scripts expect it (during install and at run time): the agent makes both empty
 * root-owned directories on the node at start (SERVER_MOUNT_POINTS), and the namespace hides what
 * they hold for everything else.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childLogger } from '../../logger';
import { childPath } from './env';
import type { ServerIdentity } from './isolation';

const log = childLogger('agent');

export interface PrivateTmp {
  /** size of each tmpfs, MiB */
  sizeMib: number;
  /** the agent's directory, kept visible when it lies below /tmp */
  agentRoot: string;
  /** the server's directory, mounted at SERVER_MOUNT_POINTS */
  serverDir: string;
}

/** A server's /proc: its own processes only; nothing run or made a device from there. */
const PROC_OPTIONS = 'hidepid=invisible,nosuid,nodev,noexec';

/** Where egg scripts expect the server's files: during install, and at run time. */
export const SERVER_MOUNT_POINTS = ['/mnt/server', '/home/container'];

/** Reads NAME=value\0… from fd 4 as the whole environment, then execs its arguments (no single quotes: it sits in SCRIPT). */
const LOADER = [
  'open(my $in, "<&=", 4) or die "hostpanel-sandbox: no environment on fd 4: $!\\n";',
  'local $/ = "\\0"; my %env;',
  'while (defined(my $kv = <$in>)) { chomp $kv; my ($k, $v) = split(/=/, $kv, 2); $env{$k} = $v if defined $v; }',
  'close $in; %ENV = %env;',
  'exec { $ARGV[0] } @ARGV; print STDERR "hostpanel-sandbox: cannot run $ARGV[0]: $!\\n"; exit 127;',
].join(' ');

/**
 * `$1` uid, `$2` gid, `$3` size (MiB), `$4` path below /tmp to keep ('' for none), `$5` 'gate' or '',
 * `$6` the server's directory to mount at each mount point that exists ('' for none), `$7` 'hide' to
 * mount a /proc that shows the server its own processes only, or ''; then the command.
 */
const SCRIPT = [
  'uid=$1 gid=$2 size=$3 keep=$4 gate=$5 dir=$6 hide=$7; shift 7',
  'opts="size=${size}m,mode=1777,nosuid,nodev"',
  `if [ -n "$hide" ]; then mount -t proc -o ${PROC_OPTIONS} hostpanel-proc /proc || exit 125; fi`,
  'mount -t tmpfs -o "$opts" hostpanel-shm /dev/shm || exit 125',
  'if [ -n "$keep" ]; then mkdir /dev/shm/.host-tmp && mount --bind /tmp /dev/shm/.host-tmp || exit 125; fi',
  'mount -t tmpfs -o "$opts" hostpanel-tmp /tmp || exit 125',
  'if [ -n "$keep" ]; then mkdir -p "/tmp/$keep" && mount --bind "/dev/shm/.host-tmp/$keep" "/tmp/$keep" && umount -l /dev/shm/.host-tmp && rmdir /dev/shm/.host-tmp || exit 125; fi',
  `if [ -n "$dir" ]; then for m in ${SERVER_MOUNT_POINTS.join(' ')}; do if [ -d "$m" ]; then mount --bind "$dir" "$m" || exit 125; fi; done; fi`,
  'if [ -n "$gate" ]; then read -r _ <&3; exec 3<&-; fi',
  'exec 3<&-',
  `exec setpriv --reuid="$uid" --regid="$gid" --clear-groups -- perl -e '${LOADER}' -- "$@"`,
].join('\n');

let available: boolean | null = null;
let procHidden: boolean | null = null;

/** Whether this node can give servers a private /tmp (root, with unshare, setpriv and mount namespaces). */
export function privateTmpAvailable(): boolean {
  if (available !== null) return available;
  try {
    // the whole way once: a namespace, a tmpfs in it, setpriv
    const probe = 'mount -t tmpfs -o size=1m hostpanel-probe /dev/shm && perl -e 1 && exec setpriv --version';
    available = process.getuid?.() === 0 && execFileSync('unshare', ['--mount', '--propagation', 'private', '/bin/sh', '-c', probe], { stdio: 'pipe', timeout: 5000 }).length > 0;
  } catch {
    available = false;
  }
  if (!available && process.getuid?.() === 0) log.warn('servers share the host /tmp and /dev/shm: unshare --mount, a tmpfs mount, perl or setpriv does not work here');
  return available;
}

/** Whether a /proc of its own (hidepid) can be mounted in a server's namespace: Linux 5.8 or later, and the mount works. */
export function privateProcAvailable(): boolean {
  if (procHidden !== null) return procHidden;
  const [major = 0, minor = 0] = os.release().split('.').map((n) => Number.parseInt(n, 10));
  procHidden = false;
  if (privateTmpAvailable() && (major > 5 || (major === 5 && minor >= 8))) {
    try {
      execFileSync('unshare', ['--mount', '--propagation', 'private', '/bin/sh', '-c', `mount -t proc -o ${PROC_OPTIONS} hostpanel-probe /proc`], { stdio: 'pipe', timeout: 5000 });
      procHidden = true;
    } catch {
      procHidden = false;
    }
  }
  if (!procHidden && available) log.warn("servers see every process of the node in /proc (other servers' command lines too): a /proc with hidepid needs Linux 5.8 or later");
  return procHidden;
}

/**
 * Makes the missing SERVER_MOUNT_POINTS (empty, root-owned, 0755) on the node; a mount point that
 * cannot be made is logged, and servers then run without it.
 */
export function makeServerMountPoints(): void {
  for (const dir of SERVER_MOUNT_POINTS) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o755 });
    } catch (err) {
      log.warn({ dir, err: (err as Error).message }, "cannot make the mount point of the servers' directories: egg scripts that use it fail");
    }
  }
}

/** The environment of the sandbox's root part: nothing of the server's. */
export function sandboxRootEnv(): Record<string, string> {
  return { PATH: childPath(), LANG: 'C' };
}

/** The server's environment as the sandbox reads it from fd 4. */
export function sandboxEnvBytes(env: Record<string, string>): Buffer {
  // spawn refuses these in an environment too
  if (Object.entries(env).some(([k, v]) => k.includes('=') || `${k}${v}`.includes('\0'))) throw new TypeError('an environment variable holds "=" in its name or a NUL');
  return Buffer.from(Object.entries(env).map(([k, v]) => `${k}=${v}\0`).join(''), 'utf8');
}

/** The argv that runs `argv` as `identity` with a private /tmp and /dev/shm (held until fd 3 gets a line when `gated`). */
export function sandboxArgv(argv: string[], identity: ServerIdentity, tmp: PrivateTmp, gated: boolean): string[] {
  const rel = path.relative('/tmp', tmp.agentRoot);
  const keep = rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : '';
  return [
    'unshare',
    '--mount',
    '--propagation',
    'private',
    '--',
    '/bin/sh',
    '-c',
    SCRIPT,
    'hostpanel-sandbox',
    String(identity.uid),
    String(identity.gid),
    String(Math.max(1, Math.round(tmp.sizeMib))),
    keep,
    gated ? 'gate' : '',
    tmp.serverDir,
    privateProcAvailable() ? 'hide' : '',
    ...argv,
  ];
}
