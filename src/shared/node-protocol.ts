/**
 * The panel <-> node agent protocol: what both sides need to agree on.
 *
 * Secrets. An admin issues a node token `T` (`hpn_…`, POST /admin/nodes/:id/token). The agent is
 * configured with `T`. The panel stores only `sha256(T)` plus the derived node key `K` encrypted at
 * rest. Both sides derive from `T`:
 *   - `K  = HMAC-SHA256(T, "hostpanel/node-key")`: signs every panel<->agent HTTP request.
 *   - `Kc = HMAC-SHA256(K, "hostpanel/console")`: signs console tokens (HS256 JWT). Only that node
 *     (and the panel) know `Kc`, so a console token is verifiable by that node only.
 *
 * Requests. Every HTTP request between panel and agent, in either direction, carries
 *   `Authorization: HPN1 <nodeId>:<unixSeconds>:<nonce>:<signature>`
 * with signature = base64url(HMAC-SHA256(K, `${method}\n${pathWithQuery}\n${ts}\n${nonce}\n${sha256hex(body)}`)).
 * The receiver rejects a timestamp more than {@link MAX_CLOCK_SKEW_SECONDS} away and any nonce it has
 * already seen inside that window, so a captured request cannot be replayed.
 */
import type { ConfigFile } from './config-files';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const NODE_TOKEN_PREFIX = 'hpn_';
export const AUTH_SCHEME = 'HPN1';
export const MAX_CLOCK_SKEW_SECONDS = 30;

export function generateNodeToken(): string {
  return NODE_TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** K: the request-signing key derived from a node token. */
export function deriveNodeKey(nodeToken: string): Buffer {
  return createHmac('sha256', nodeToken).update('hostpanel/node-key').digest();
}

/** Kc: the console-token (JWT HS256) key derived from K. */
export function deriveConsoleKey(nodeKey: Buffer): Buffer {
  return createHmac('sha256', nodeKey).update('hostpanel/console').digest();
}

function signature(key: Buffer, method: string, path: string, ts: number, nonce: string, body: string | Buffer): string {
  const payload = `${method.toUpperCase()}\n${path}\n${ts}\n${nonce}\n${sha256Hex(body)}`;
  return createHmac('sha256', key).update(payload).digest('base64url');
}

/** Builds the Authorization header value for one request. `path` includes the query string. */
/**
 * What a streamed request body (a file written through the file manager) is signed as: the sender
 * cannot hash bytes it has not read yet, so the signature covers the method, the path with its query
 * and the time, and the body's integrity rests on the connection (TLS between panel and node).
 * The agent accepts it on its streamed routes only.
 */
export const STREAMED_BODY = 'hostpanel:streamed-body';

export function signRequest(nodeId: string, key: Buffer, method: string, path: string, body: string | Buffer = ''): string {
  const ts = Math.floor(Date.now() / 1000);
  const nonce = randomBytes(12).toString('base64url');
  return `${AUTH_SCHEME} ${nodeId}:${ts}:${nonce}:${signature(key, method, path, ts, nonce, body)}`;
}

export interface ParsedAuth {
  nodeId: string;
  ts: number;
  nonce: string;
  sig: string;
}

export function parseAuthHeader(header: string | undefined): ParsedAuth | null {
  if (!header || !header.startsWith(AUTH_SCHEME + ' ')) return null;
  const parts = header.slice(AUTH_SCHEME.length + 1).split(':');
  if (parts.length !== 4) return null;
  const [nodeId, tsRaw, nonce, sig] = parts as [string, string, string, string];
  const ts = Number(tsRaw);
  if (!nodeId || !Number.isInteger(ts) || !/^[A-Za-z0-9_-]{8,64}$/.test(nonce) || !/^[A-Za-z0-9_-]{20,100}$/.test(sig)) return null;
  return { nodeId, ts, nonce, sig };
}

/** Remembers nonces for the skew window so that a request can be accepted once only. */
/**
 * The nonces of the last minute's requests, in this process. A request signed before the process
 * started is refused too: its nonce may have been used with the previous process, whose memory is
 * gone (a captured request replayed right after a restart). Senders sign each attempt afresh, so a
 * retry after a restart is not affected.
 */
export class NonceCache {
  private seen = new Map<string, number>();
  private readonly since = Math.floor(Date.now() / 1000);
  check(nonce: string, ts: number): boolean {
    if (ts < this.since) return false;
    const now = Math.floor(Date.now() / 1000);
    for (const [n, t] of this.seen) {
      if (t < now - MAX_CLOCK_SKEW_SECONDS * 2) this.seen.delete(n);
      else break;
    }
    if (this.seen.has(nonce)) return false;
    this.seen.set(nonce, ts);
    return true;
  }
}

/**
 * Verifies a signed request. Returns true when the signature matches, the timestamp is fresh and the
 * nonce is new. The caller looks up `key` from `parsed.nodeId`.
 */
export function verifyRequest(
  parsed: ParsedAuth,
  key: Buffer,
  method: string,
  path: string,
  body: string | Buffer,
  nonces: NonceCache,
): boolean {
  const now = Math.floor(Date.now() / 1000);
  if (Math.abs(now - parsed.ts) > MAX_CLOCK_SKEW_SECONDS) return false;
  const expected = Buffer.from(signature(key, method, path, parsed.ts, parsed.nonce, body));
  const given = Buffer.from(parsed.sig);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return false;
  return nonces.check(`${parsed.nodeId}:${parsed.nonce}`, parsed.ts);
}

// ---------------------------------------------------------------------------------------------
// Shapes exchanged between panel and agent.

export type ServerStatus = 'installing' | 'install_failed' | 'offline' | 'starting' | 'running' | 'stopping' | 'restoring';
export const SERVER_STATUSES: readonly ServerStatus[] = ['installing', 'install_failed', 'offline', 'starting', 'running', 'stopping', 'restoring'];
export type PowerAction = 'start' | 'stop' | 'restart' | 'kill';
export const POWER_ACTIONS: readonly PowerAction[] = ['start', 'stop', 'restart', 'kill'];

/** Interpreters an install script may name (an egg's `scripts.installation.entrypoint`). */
export const INSTALL_SHELLS = ['sh', 'bash', 'ash'] as const;
export type InstallShell = (typeof INSTALL_SHELLS)[number];

/** Everything the agent needs to run one server. Sent by the panel with PUT /api/servers/:id. */
export interface ServerSpec {
  id: string;
  name: string;
  /** Startup command template, e.g. `node {{SERVER_SCRIPT}} --port {{PORT}}`; see agent/environment. */
  startup: string;
  /** A command written to stdin (e.g. `stop`) or a signal name starting with `^`/`SIG` (e.g. `SIGTERM`). */
  stop: string;
  /** Regular expression source; the server becomes `running` when an output line matches. Empty: at once. */
  ready: string | null;
  /** Optional shell script run once in the server directory at install. */
  install: string | null;
  /** The interpreter of `install` (an egg's entrypoint); null or absent: /bin/sh. */
  installShell?: InstallShell | null;
  /** Keys written into the server's files before each start (see src/shared/config-files.ts); absent: none. */
  configFiles?: ConfigFile[];
  /** Variable values (blueprint defaults merged with the user's). */
  variables: Record<string, string>;
  memory: number; // MiB
  cpu: number; // percent of one core
  disk: number; // MiB
  autoRestart: boolean;
  /**
   * Grows with every change of the server in the panel. The agent keeps the spec with the highest
   * revision, so pushes that arrive out of order (two PATCHes racing) cannot leave an older spec in
   * place. Absent (0) from panels that predate it.
   */
  revision?: number;
}

/** Agent -> panel: one state change of a server. */
export interface ServerStateEvent {
  serverId: string;
  status: ServerStatus;
  at: string; // ISO time
  /** Set when a process ended: its exit code (null when killed by a signal). */
  exitCode?: number | null;
  /** Why the process ended: 'stopped' | 'killed' | 'crashed' | 'memory_limit' | 'disk_limit' | 'install_failed' | 'agent_restart' | 'not_isolated' (install refused) | 'program_missing' (the startup command's program is not on the node). */
  reason?: string;
  /**
   * The number of this status: strictly increasing on the node, across its restarts (the agent's
   * ServerState.statusSeq of the answers to power actions is the same count). The panel records a
   * status only over one with a lower number, so a queued event that arrives after a power action's
   * answer cannot put an older status back. Absent from agents that predate it (then applied as sent).
   */
  seq?: number;
}

/** Files one SFTP activity report names at most (the rest are counted): the agent sends no more, the panel takes no more. */
export const SFTP_REPORT_MAX_LISTED = 50;

/** A property of a reported action: a text, a number, a list of texts, or a list of renames. */
export type ActivityValue = string | number | string[] | Array<{ from: string; to: string }>;
export type ActivityProperties = Record<string, ActivityValue>;

/**
 * An action a user took over the node's console channel (a command, a power action), reported to
 * the panel on the same ordered, signed event queue as state changes, for the activity log.
 */
export interface ConsoleActivityReport {
  kind: 'activity';
  /**
   * The entry's id, a UUID the node gives the report: the node may send a report twice (a batch the
   * panel wrote but whose answer the node did not get), and the panel records an id once. Reports
   * queued by agents before it had ids have none; the panel gives them one.
   */
  id?: string;
  serverId: string;
  /** The console token's subject: the user's id. */
  userId: string;
  /** `server:console.command`, `server:power.<action>`, or `server:file.upload|delete|rename` (SFTP) */
  event: string;
  /**
   * Texts for the console's events; for SFTP's, the types of the file manager's entries of the same
   * event (src/agent/sftp/activity.ts): numbers as numbers, lists as arrays. The panel checks them
   * (src/services/node-agent.service.ts).
   */
  properties: ActivityProperties;
  /** The console client's address as the agent saw it. */
  ip: string | null;
  at: string;
}

/** How a backup is getting on: `pending` with progress, then `completed` or `failed`. */
export interface BackupReport {
  kind: 'backup';
  serverId: string;
  backupId: string;
  status: 'pending' | 'completed' | 'failed';
  /** files and bytes done (all of them once completed) */
  files: number;
  bytes: number;
  sha256?: string;
  error?: string;
  at: string;
}

/** How a restore ended. */
export interface RestoreReport {
  kind: 'restore';
  serverId: string;
  backupId: string;
  status: 'completed' | 'failed';
  error?: string;
  at: string;
}

/** What the agent's event queue carries to the panel. */
export type AgentEvent = ServerStateEvent | ConsoleActivityReport | BackupReport | RestoreReport;

export interface NodeStats {
  online: boolean;
  cpu: { cores: number | null; usage: number | null; load: number[] | null };
  memory: { total: number | null; used: number | null };
  disk: { total: number | null; used: number | null };
  servers: { total: number | null; running: number | null };
  uptime: number | null;
}

/** Claims of a console token (JWT HS256 signed with Kc). */
export interface ConsoleTokenClaims {
  /** user id (or `gateway:<instance>` for the gateway's own upstream feed) */
  sub: string;
  /** server id */
  srv: string;
  /** node id */
  node: string;
  /**
   * The permission keys the holder has on the server, among `websocket.connect` (required to
   * connect), `control.console` (commands) and `control.start|stop|restart` (power; kill needs stop).
   */
  perms: string[];
  /** When the token was issued, in ms (finer than `iat`): tokens older than a revocation are refused. */
  issuedAt?: number;
}

/**
 * The panel's answer to an agent asking whether an SFTP login may proceed
 * (`POST /api/agent/v1/sftp/login { username, password, ip }`): who logged in to which server, and
 * what they hold there (src/permissions/policy.ts decides with it on the agent as on the panel).
 */
export interface SftpGrant {
  userId: string;
  email: string;
  serverId: string;
  role: 'admin' | 'owner' | 'subuser';
  keys: string[];
  /** folders the subuser's file keys are limited to (normalised); empty = the whole server */
  paths: string[];
  /** the blueprint's file deny-list (src/shared/file-denylist.ts): paths nobody may touch beyond listing */
  denied: string[];
  /**
   * when the panel granted the login (ms, the panel's clock, as console tokens' issue times are): a
   * revocation dated before it, however late it reaches the node, leaves the session alone
   */
  issuedAt?: number;
}

/** Longest a kill waits for the process to be gone before the node answers (the panel waits longer). */
export const KILL_WAIT_MS = 5000;

/** Least time between two `console_batch` frames of one server, on the node channel and in GraphQL `consoleBatches`. */
export const CONSOLE_BATCH_EVERY_MS = 50;
