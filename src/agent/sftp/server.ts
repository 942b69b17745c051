/**
 * The node's SFTP server (ssh2). A user logs in as `<account email>.<first 8 characters of the
 * server id>` with their account's password, which the panel checks (with its sign-in rate limits,
 * the `file.sftp` key and the activity log) over the node's signed channel; the session then works on
 * that one server's files under the keys and folder scopes the panel granted (session.ts). Password
 * is the only method; shells, exec and port forwarding are refused. Connections are limited per
 * address and a login must finish in time, both from the moment the TCP connection opens (a client
 * that never says a word holds a socket too); a connection has at most MAX_CHANNELS SFTP channels,
 * which share its open files and buffered writes; idle sessions end; the panel can end a user's
 * sessions at once (revocation), and a deleted server's sessions end with it.
 */
import { createServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { Server, type AuthContext, type Connection, type SFTPWrapper } from 'ssh2';
import { childLogger } from '../../logger';
import type { ConsoleActivityReport, SftpGrant } from '../../shared/node-protocol';
import type { ServerFiles } from '../filesystem/server-files';
import { SftpActivity } from './activity';
import { Allowance } from './allowance';
import type { HostKey } from './host-key';
import { MAX_AHEAD_BYTES, MAX_HANDLES, SftpSession } from './session';

const log = childLogger('agent');

export interface SftpOptions {
  port: number;
  host?: string;
  hostKey: HostKey;
  files: ServerFiles;
  /** The panel's answer to a login: the grant, or null when refused; throws when the panel says to slow down or cannot be reached. */
  login: (username: string, password: string, ip: string | null) => Promise<SftpGrant | null>;
  report: (r: ConsoleActivityReport) => void;
  /** a session without a request for this long ends (default 15 minutes) */
  idleMs?: number;
  /** open connections per client address (default 10) */
  maxPerAddress?: number;
  /** password tries per connection (default 3) */
  maxAttempts?: number;
  /** from connecting to a successful login (default 30 s) */
  loginTimeoutMs?: number;
}

/** Why the node ends a session, as its user reads it (see tell). */
export const HANG_UP_REASONS = {
  accessChanged: 'hostpanel: your access to this server was removed or changed; connect again only if you still have it',
  passwordChanged: "hostpanel: your account's password was changed; connect again with the new password",
  accountChanged: 'hostpanel: an administrator deleted your account or changed its password or role; connect again only if you still have access',
  serverDeleted: 'hostpanel: this server was deleted',
  idle: 'hostpanel: the session ended after a long time without a request',
  shutdown: "hostpanel: the node's agent is shutting down; connect again in a moment",
} as const;

/** The parts of ssh2's SFTP channel (lib/protocol/SFTP.js) tell() writes through. */
interface RawChannel {
  outgoing?: { id: number; state: string; window: number };
  _protocol?: { channelExtData(id: number, data: Buffer, type: number): void };
}
/** SSH_EXTENDED_DATA_STDERR (RFC 4254 5.2) */
const STDERR = 1;

/**
 * Writes one line to the stderr of an SFTP channel: ssh2's SFTP object has no stderr of its own, but
 * the channel is an SSH session channel like any other, and OpenSSH's client prints its subsystem's
 * stderr. (ssh2 sends its disconnect message without a description, so this is how the user learns
 * why the session ended.) Nothing when the channel is closing or its window has no room.
 */
function tell(channel: SFTPWrapper, line: string): void {
  const raw = channel as unknown as RawChannel;
  const data = Buffer.from(`${line}\r\n`);
  const out = raw.outgoing;
  if (!out || out.state !== 'open' || out.window < data.length || !raw._protocol) return;
  try {
    raw._protocol.channelExtData(out.id, data, STDERR);
    out.window -= data.length;
  } catch {
    /* the connection is going anyway */
  }
}

/** How long the reason has to reach the client before the disconnect (OpenSSH's client exits on the disconnect without printing what it had not printed yet). */
export const REASON_LEAD_MS = 250;

interface Live {
  client: Connection;
  grant: SftpGrant | null;
  sessions: SftpSession[];
  /** the SFTP channels of the sessions (where hangUp writes its reason) */
  channels: SFTPWrapper[];
  /** hangUp has begun: no request is served any more, no channel opened */
  ending: boolean;
}

/** Closes the connection's socket: the SSH disconnect message, then the socket itself (a client with an SFTP channel open does not hang up on the message alone). */
function disconnect(client: Connection): void {
  client.end();
  (client as unknown as { _sock?: Socket })._sock?.destroy();
}

/**
 * Ends a connection. With a reason and an SFTP channel open: every request is refused from now on,
 * the reason goes to each channel's stderr (OpenSSH's client prints it), and the disconnect follows
 * REASON_LEAD_MS later, so that the client prints the reason before it exits on the disconnect.
 */
function hangUp(live: Live, reason?: string): void {
  if (live.ending) return;
  live.ending = true;
  const channels = reason ? [...live.channels] : [];
  if (!channels.length) return disconnect(live.client);
  for (const session of live.sessions) session.stop();
  for (const channel of channels) tell(channel, reason!);
  setTimeout(() => disconnect(live.client), REASON_LEAD_MS);
}

/** The clients whose SYMLINK paths ssh2's SFTP server hands over swapped (its own test of the client's ident). */
const OPENSSH_CLIENT = /^SSH-2.0-(?:OpenSSH|dropbear)/;

/** How long a revocation is kept for logins under way (far longer than the panel takes to answer one). */
const REVOCATION_MEMORY_MS = 60_000;
/** SFTP channels one connection may open (clients open one; a few leave room for tools that open more). */
export const MAX_CHANNELS = 4;

export class SftpServer {
  private readonly server: Server;
  /** where connections come in: admitted here, then handed to ssh2 */
  private readonly tcp: TcpServer;
  private readonly perAddress = new Map<string, number>();
  /** the login timer of each socket not logged in yet */
  private readonly loginTimers = new WeakMap<Socket, NodeJS.Timeout>();
  private readonly live = new Set<Live>();
  /** recent revocations: a login asked for before one of them (its grant may predate it) asks again */
  private revoked: { userId: string; serverId?: string; at: number }[] = [];

  constructor(private readonly opts: SftpOptions) {
    // Clients send SYMLINK's two paths in OpenSSH's order only to servers that name themselves
    // OpenSSH (the draft's order otherwise, which OpenSSH's own client ignores): with this name every
    // client sends the target first, as session.ts reads them.
    this.server = new Server({ hostKeys: [opts.hostKey.privateKey], ident: 'OpenSSH_9.0-compatible hostpanel' }, (client, info) => this.accept(client, info.ip, OPENSSH_CLIENT.test(info.header.identRaw)));
    this.server.on('error', (err: Error) => log.warn({ err: err.message }, 'SFTP server error'));
    this.tcp = createServer((socket) => this.admit(socket));
    this.tcp.on('error', (err: Error) => log.warn({ err: err.message }, 'SFTP listener error'));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.tcp.once('error', reject);
      this.tcp.listen(this.opts.port, this.opts.host ?? '0.0.0.0', () => {
        this.tcp.off('error', reject);
        resolve();
      });
    });
    return (this.tcp.address() as AddressInfo).port;
  }

  /** A TCP connection: counted against its address and timed until its login, then handed to ssh2. */
  private admit(socket: Socket): void {
    const ip = socket.remoteAddress ?? 'unknown';
    const count = (this.perAddress.get(ip) ?? 0) + 1;
    this.perAddress.set(ip, count);
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearTimeout(this.loginTimers.get(socket));
      const left = (this.perAddress.get(ip) ?? 1) - 1;
      if (left > 0) this.perAddress.set(ip, left);
      else this.perAddress.delete(ip);
    });
    if (count > (this.opts.maxPerAddress ?? 10)) {
      log.warn({ ip }, 'SFTP connection refused: too many from this address');
      socket.destroy();
      return;
    }
    this.loginTimers.set(socket, setTimeout(() => socket.destroy(), this.opts.loginTimeoutMs ?? 30_000));
    this.server.injectSocket(socket);
  }

  /**
   * Ends the sessions of `userId` (on `serverId`, or on every server) telling `reason`; returns how many
   * ended. `at`: when the rights changed, on the panel's clock; a session the panel granted after it
   * stands, however late the change reaches this node.
   */
  revoke(userId: string, serverId?: string, reason: string = serverId ? HANG_UP_REASONS.accessChanged : HANG_UP_REASONS.passwordChanged, at?: number): number {
    // a login the panel answered before this change, whose grant is still on its way, asks again
    this.revoked.push({ userId, serverId, at: performance.now() });
    this.revoked = this.revoked.filter((r) => r.at > performance.now() - REVOCATION_MEMORY_MS);
    let ended = 0;
    for (const l of this.live) {
      if (l.grant?.userId !== userId || (serverId && l.grant.serverId !== serverId)) continue;
      if (at !== undefined && l.grant.issuedAt !== undefined && l.grant.issuedAt > at) continue;
      hangUp(l, reason);
      ended++;
    }
    return ended;
  }

  async close(): Promise<void> {
    for (const l of this.live) hangUp(l, HANG_UP_REASONS.shutdown);
    await new Promise<void>((resolve) => this.tcp.close(() => resolve()));
  }

  private accept(client: Connection, ip: string, openSsh: boolean): void {
    const socket = (client as unknown as { _sock?: Socket })._sock;
    const live: Live = { client, grant: null, sessions: [], channels: [], ending: false };
    this.live.add(live);
    let closed = false;
    let gone: (() => void) | null = null;
    let idle: NodeJS.Timeout | null = null;
    // idle: no request for idleMs, none under way (a slow answer is not the client's idleness)
    let underWay = 0;
    const touched = (change: 1 | 0 | -1 = 0) => {
      underWay += change;
      if (idle) clearTimeout(idle);
      idle = underWay > 0 || closed ? null : setTimeout(() => hangUp(live, HANG_UP_REASONS.idle), this.opts.idleMs ?? 15 * 60_000);
    };
    client.on('error', () => undefined);
    client.on('close', () => {
      if (closed) return;
      closed = true;
      if (idle) clearTimeout(idle);
      gone?.();
      for (const s of live.sessions) s.end();
      this.live.delete(live);
    });
    // passwords tried: the `none` and key methods clients try first are refused without counting
    let attempts = 0;
    client.on('authentication', (ctx) => void this.authenticate(ctx, ip, live, ctx.method === 'password' ? ++attempts : attempts));
    client.on('ready', () => {
      if (socket) clearTimeout(this.loginTimers.get(socket));
      touched();
      gone = this.endWithServer(live);
      const allowances = { handles: new Allowance(MAX_HANDLES), aheadBytes: new Allowance(MAX_AHEAD_BYTES) };
      client.on('session', (accept) => {
        const session = accept();
        session.on('sftp', (acceptSftp, reject) => {
          if (live.ending || live.sessions.length >= MAX_CHANNELS) return void reject();
          const grant = live.grant!;
          const activity = new SftpActivity({ serverId: grant.serverId, userId: grant.userId, ip }, this.opts.report);
          const sftp = acceptSftp();
          const opened = new SftpSession(sftp, grant, this.opts.files, activity, touched, { openSsh }, allowances);
          live.sessions.push(opened);
          live.channels.push(sftp);
          // a channel closed gives back its place and what it held
          sftp.once('close', () => {
            live.sessions = live.sessions.filter((s) => s !== opened);
            live.channels = live.channels.filter((c) => c !== sftp);
            opened.end();
          });
        });
        for (const refused of ['exec', 'shell', 'pty', 'subsystem', 'env', 'x11', 'auth-agent'] as const) {
          session.on(refused as 'exec', (_accept: unknown, reject?: () => void) => reject?.());
        }
      });
      client.on('tcpip', (_accept, reject) => reject());
    });
  }

  /** Hangs up the connection when its server is deleted; returns what stops watching. */
  private endWithServer(live: Live): () => void {
    const server = this.opts.files.manager.find(live.grant!.serverId);
    if (!server) return () => undefined;
    const onDeleted = () => hangUp(live, HANG_UP_REASONS.serverDeleted);
    server.once('deleted', onDeleted);
    return () => server.off('deleted', onDeleted);
  }

  /**
   * The panel's grant for a login, asked for again (once) when the user's access on that server was
   * revoked while the first answer was on its way: that answer may predate the change.
   */
  private async freshGrant(username: string, password: string, ip: string): Promise<SftpGrant | null> {
    for (let asked = 0; ; asked++) {
      const since = performance.now();
      const grant = await this.opts.login(username, password, ip);
      const overtaken = grant && this.revoked.some((r) => r.at >= since && r.userId === grant.userId && (!r.serverId || r.serverId === grant.serverId));
      if (!overtaken) return grant;
      if (asked > 0) return null;
    }
  }

  private async authenticate(ctx: AuthContext, ip: string, live: Live, attempt: number): Promise<void> {
    if (ctx.method !== 'password') return ctx.reject(['password']);
    if (attempt > (this.opts.maxAttempts ?? 3)) {
      ctx.reject();
      live.client.end();
      return;
    }
    try {
      const grant = await this.freshGrant(ctx.username, ctx.password, ip);
      if (!grant) return ctx.reject(['password']);
      live.grant = grant;
      log.info({ serverId: grant.serverId, userId: grant.userId, ip }, 'SFTP login');
      ctx.accept();
    } catch (err) {
      log.warn({ ip, err: (err as Error).message }, 'SFTP login refused: the panel asked to slow down or could not be reached');
      ctx.reject();
      live.client.end();
    }
  }
}
