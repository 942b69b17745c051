import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import jwt from 'jsonwebtoken';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { POWER_ACTIONS, type ConsoleActivityReport, type ConsoleTokenClaims, type PowerAction, type ServerStatus } from '../../shared/node-protocol';
import { CONSOLE_COMMAND, CONSOLE_CONNECT, POWER_KEYS } from '../../permissions/keys';
import { Revocations } from './revocations';
import { childLogger } from '../../logger';
import { AgentError } from '../errors';
import type { ServerManager } from '../server/manager';
import type { Server } from '../server/server';
import type { ConsoleLine } from '../server/console-buffer';
import type { SkipReport } from '../server/line-budget';
import type { ServerStats } from '../server/monitor';
import { batchFrames, ConsoleBatchers, type BatchReader } from './console-batch';
import type { SendBudget } from '../../shared/send-budget';
import { hold, settle } from '../../shared/write-coalescer';
import { rawSocket } from '../../shared/ws-internals';

/**
 * A line's frame is serialised once, however many clients receive it, as a Buffer: every socket that
 * still holds it unsent holds the same bytes, not a copy of its own.
 */
const frames = new WeakMap<ConsoleLine, Buffer>();
function lineFrame(e: ConsoleLine): Buffer {
  let f = frames.get(e);
  if (f === undefined) {
    f = Buffer.from(JSON.stringify({ type: e.kind === 'install' ? 'install_output' : 'console_output', data: { line: e.line, stream: e.stream, ts: e.ts, seq: e.seq } }));
    frames.set(e, f);
  }
  return f;
}

/** A skip report's `console_skipped` frame, likewise serialised once. */
const skipFrames = new WeakMap<SkipReport, string>();
function skippedFrame(r: SkipReport): string {
  let f = skipFrames.get(r);
  if (f === undefined) {
    f = JSON.stringify({ type: 'console_skipped', data: { skipped: r.skipped, ts: r.ts } });
    skipFrames.set(r, f);
  }
  return f;
}

/** Identifies this agent process: line `seq` numbers restart with it (see auth_success `boot`). */
export const AGENT_BOOT_ID = randomUUID();

const log = childLogger('agent');

export interface ConsoleOptions {
  nodeId: string;
  consoleKey: Buffer;
  manager: ServerManager;
  /** first `auth` must arrive within this time (default 10000 ms) */
  authTimeoutMs: number;
  /**
   * What a client may hold unsent before it is disconnected as too slow: its own limit (4 MiB by
   * default) and its share of what all console sockets may hold together
   */
  budget: SendBudget;
  /** inbound messages per second per connection (default 20) */
  inboundPerSecond: number;
  /** inbound frame size limit (default 64 KiB) */
  maxPayload: number;
  /** seconds before `exp` when `token_expiring` is sent (default 60), at most half of what is left of the token's life */
  expiringLeadSeconds: number;
  /** console sockets one user may have open at once (WS_MAX_CONNECTIONS_PER_USER; default 20) */
  maxPerUser?: number;
  /** sockets one address may have open before they authenticate (WS_MAX_ANONYMOUS_PER_ADDRESS; default 10) */
  maxAnonymousPerAddress?: number;
  /** called once a session authenticates; false when it was ended (a cap) */
  onAuthenticated?: (session: ConsoleSession) => boolean;
  /** where console actions are reported for the panel's activity log (the agent's panel event queue) */
  report?: (r: ConsoleActivityReport) => void;
  /** rights the panel took back (tokens issued before are refused); the gateway makes one when not given */
  revocations?: Revocations;
}

/** Close codes used on the console channel. */
export const CLOSE_UNAUTHORIZED = 4401;
export const CLOSE_SLOW_CLIENT = 4408;
export const CLOSE_SERVER_DELETED = 4404;
export const CLOSE_REVOKED = 4403;
export const CLOSE_TOO_MANY = 4429;

interface VerifiedToken {
  claims: ConsoleTokenClaims;
  exp: number;
  aud?: string | string[];
}

/** Verifies a console token: HS256 with Kc, not expired, complete claims. Throws AgentError. */
export function verifyConsoleToken(token: unknown, key: Buffer): VerifiedToken {
  if (typeof token !== 'string' || token.length === 0 || token.length > 8192) throw new AgentError(401, 'UNAUTHORIZED', 'A console token is required');
  let payload: string | jwt.JwtPayload;
  try {
    payload = jwt.verify(token, key, { algorithms: ['HS256'] });
  } catch (e) {
    if (e instanceof jwt.TokenExpiredError) throw new AgentError(401, 'TOKEN_EXPIRED', 'The console token has expired');
    throw new AgentError(401, 'UNAUTHORIZED', 'Invalid console token');
  }
  if (typeof payload !== 'object' || payload === null) throw new AgentError(401, 'UNAUTHORIZED', 'Invalid console token');
  const { sub, srv, node, perms, exp, aud, issuedAt, iat } = payload as Record<string, unknown>;
  if (typeof sub !== 'string' || typeof srv !== 'string' || typeof node !== 'string' || !Array.isArray(perms) || !perms.every((p) => typeof p === 'string'))
    throw new AgentError(401, 'UNAUTHORIZED', 'Console token is missing claims');
  if (typeof exp !== 'number') throw new AgentError(401, 'UNAUTHORIZED', 'Console token has no expiry');
  if (aud !== undefined && typeof aud !== 'string' && !(Array.isArray(aud) && aud.every((a) => typeof a === 'string')))
    throw new AgentError(401, 'UNAUTHORIZED', 'Invalid console token audience');
  const issued = typeof issuedAt === 'number' ? issuedAt : typeof iat === 'number' ? iat * 1000 : 0;
  return { claims: { sub, srv, node, perms: perms as string[], issuedAt: issued }, exp, aud: aud as string | string[] | undefined };
}

/**
 * One console connection: auth within the timeout, then history and live output of one
 * server (one frame per line, or batches: see console-batch.ts), commands and power actions
 * according to the token's perms, renewal, expiry.
 */
class ConsoleSession implements BatchReader {
  private server: Server | null = null;
  private perms = new Set<string>();
  private sub = '';
  /** when the panel issued the token the session holds (the panel's clock, ms) */
  private issuedAt = 0;
  private expired = false;
  private dropped = false;
  /** closed by this side (revoked, over the cap, refused, server deleted): nothing the peer sends is acted on */
  private ended = false;
  private authTimer: NodeJS.Timeout | null;
  private expiringTimer: NodeJS.Timeout | null = null;
  private expiredTimer: NodeJS.Timeout | null = null;
  private windowStart = 0;
  private windowCount = 0;
  private windowWarned = false;
  private unsubscribe: (() => void) | null = null;
  /** The client asked for batches (`options`). */
  private batch = false;
  /** Its server's batcher sends it the lines: per-line frames stop. */
  private batching = false;
  /** Its listening to its server's lines and skips: on while subscribed and not batching. */
  private perLine: { on(): void; off(): void } | null = null;

  constructor(
    private readonly ws: WebSocket,
    private readonly opts: ConsoleOptions,
    private readonly ip: string | null,
    private readonly batchers: ConsoleBatchers,
  ) {
    this.authTimer = setTimeout(() => this.reject('AUTH_TIMEOUT', 'No authentication received in time'), opts.authTimeoutMs);
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    ws.on('close', () => this.cleanup());
    ws.on('error', () => this.cleanup());
  }

  private send(type: string, data: unknown): void {
    this.sendFrame(JSON.stringify({ type, data }));
  }

  sendFrame(frame: string | Buffer): void {
    if (this.dropped || this.ws.readyState !== WebSocket.OPEN) return;
    if (this.opts.budget.over(this.ws.bufferedAmount)) {
      this.dropSlow();
      return;
    }
    // always a text frame, also from a Buffer; the frames of one turn leave in one write
    const raw = rawSocket(this.ws);
    hold(raw);
    this.ws.send(frame, { binary: false });
    settle(raw);
  }

  private dropSlow(): void {
    if (this.dropped) return;
    this.dropped = true;
    log.warn({ serverId: this.server?.id, buffered: this.ws.bufferedAmount }, 'console client too slow; disconnecting it');
    this.end(CLOSE_SLOW_CLIENT, 'client too slow');
  }

  /**
   * Ends the session from this side: from now on nothing the peer sends is acted on (a peer may
   * ignore the close frame and go on sending), and one that has not closed after `graceMs` is cut off.
   */
  private end(code: number, reason: string, graceMs = 1000): void {
    this.ended = true;
    this.cleanup();
    try {
      this.ws.close(code, reason);
    } catch {
      /* ignore */
    }
    setTimeout(() => this.ws.terminate(), graceMs).unref();
  }

  private error(code: string, message: string): void {
    this.send('error', { code, message });
  }

  private reject(code: string, message: string): void {
    this.error(code, message);
    this.end(CLOSE_UNAUTHORIZED, code.slice(0, 60), 2000);
  }

  private rateLimited(): boolean {
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.windowCount = 0;
      this.windowWarned = false;
    }
    this.windowCount++;
    if (this.windowCount <= this.opts.inboundPerSecond) return false;
    if (!this.windowWarned) {
      this.windowWarned = true;
      this.error('RATE_LIMITED', `Too many messages; at most ${this.opts.inboundPerSecond} per second`);
    }
    return true;
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (this.dropped || this.ended) return;
    if (this.rateLimited()) return;
    if (isBinary) return this.error('BAD_REQUEST', 'Binary frames are not supported');
    let msg: unknown;
    try {
      msg = JSON.parse(data.toString());
    } catch {
      return this.error('BAD_REQUEST', 'Malformed JSON');
    }
    if (!msg || typeof msg !== 'object' || Array.isArray(msg) || typeof (msg as { type?: unknown }).type !== 'string')
      return this.error('BAD_REQUEST', 'A message is a JSON object with a string "type"');
    const m = msg as { type: string; token?: unknown; data?: unknown };
    if (m.type === 'auth') return this.onAuth(m.token);
    if (!this.server) return this.error('UNAUTHORIZED', 'Authenticate first: {"type":"auth","token":"..."}');
    if (this.expired) return this.error('TOKEN_EXPIRED', 'The console token has expired; send a new auth message');
    switch (m.type) {
      case 'command':
        return this.onCommand(m.data);
      case 'power':
        return this.onPower(m.data);
      case 'options':
        return this.onOptions(m.data);
      default:
        return this.error('UNKNOWN_TYPE', `Unknown message type: ${m.type.slice(0, 64)}`);
    }
  }

  private onAuth(token: unknown): void {
    let verified: VerifiedToken;
    try {
      verified = verifyConsoleToken(token, this.opts.consoleKey);
    } catch (e) {
      const err = e as AgentError;
      return this.reject(err.code ?? 'UNAUTHORIZED', err.message);
    }
    const { claims, exp, aud } = verified;
    if (claims.node !== this.opts.nodeId) return this.reject('UNAUTHORIZED', 'Console token is for another node');
    // optional audience: when present it must name this node
    if (aud !== undefined && !(Array.isArray(aud) ? aud : [aud]).includes(`node:${this.opts.nodeId}`))
      return this.reject('UNAUTHORIZED', 'Console token is for another audience');
    if (!claims.perms.includes(CONSOLE_CONNECT)) return this.reject('FORBIDDEN', 'Console token does not grant console access');
    if (this.opts.revocations?.revoked(claims.srv, claims.sub, claims.issuedAt ?? 0))
      return this.reject('TOKEN_REVOKED', 'Your console access to this server changed; get a new console token');
    if (this.server && claims.srv !== this.server.id) {
      return this.error('FORBIDDEN', 'A renewed token must be for the same server');
    }
    // a socket is its user's for its whole life: it counts against their cap and acts as them
    if (this.server && claims.sub !== this.sub) return this.error('FORBIDDEN', 'A renewed token must be for the same user: open a new connection for another user');
    const server = this.opts.manager.find(claims.srv);
    if (!server) return this.reject('UNAUTHORIZED', 'Unknown server');
    if (this.authTimer) clearTimeout(this.authTimer);
    this.authTimer = null;
    const fresh = !this.server || this.expired;
    // a socket counts against its user's cap when it first authenticates; a renewal is the same socket
    const first = !this.server;
    this.server = server;
    this.perms = new Set(claims.perms);
    this.sub = claims.sub;
    this.issuedAt = claims.issuedAt ?? 0;
    this.expired = false;
    if (first && this.opts.onAuthenticated && !this.opts.onAuthenticated(this)) return;
    this.scheduleExpiry(exp);
    this.send('auth_success', { serverId: server.id, status: server.status, statusSeq: server.statusSeq, boot: AGENT_BOOT_ID });
    if (fresh) {
      this.sendHistory(server.buffer.entries());
      if (!this.unsubscribe) this.subscribe(server);
    }
  }

  /** The recent lines, in the session's mode: per-line frames, or one batch. */
  private sendHistory(entries: ConsoleLine[]): void {
    if (!this.batch) for (const e of entries) this.sendLine(e);
    else if (entries.length > 0) for (const f of batchFrames(entries, 0)) this.sendFrame(f);
  }

  /** `options { batch }`: switches between per-line frames and batches; acknowledged with the mode. */
  private onOptions(data: unknown): void {
    const batch = (data as { batch?: unknown } | null)?.batch;
    if (!data || typeof data !== 'object' || Array.isArray(data) || typeof batch !== 'boolean')
      return this.error('BAD_REQUEST', 'Options are an object with a boolean "batch": {"type":"options","data":{"batch":true}}');
    const changed = batch !== this.batch;
    this.batch = batch;
    this.send('options', { batch });
    if (!changed || !this.unsubscribe) return;
    if (batch) this.batchers.join(this.server!, this);
    else this.leaveBatches(this.server!, true);
  }

  /**
   * The batcher sends its lines from now on: the session stops listening to them, so that the
   * hand-out's width (src/shared/paced-queue.ts) counts its batch sessions once, as their batcher.
   */
  batchStarted(): void {
    this.batching = true;
    this.perLine?.off();
  }

  /** Leaves its server's batcher; `catchUp`: the lines and skips it had not received come as per-line frames. */
  private leaveBatches(server: Server, catchUp: boolean): void {
    const left = this.batchers.leave(server, this);
    if (this.batching) this.perLine?.on();
    this.batching = false;
    if (!catchUp) return;
    for (const e of left.lines) this.sendLine(e);
    if (left.skipped > 0) this.send('console_skipped', { skipped: left.skipped, ts: new Date().toISOString() });
  }

  private scheduleExpiry(exp: number): void {
    if (this.expiringTimer) clearTimeout(this.expiringTimer);
    if (this.expiredTimer) clearTimeout(this.expiredTimer);
    const now = Date.now();
    const expiredIn = exp * 1000 - now;
    // the lead before `exp`, and no earlier than halfway through the token's life from now: a token of
    // a lifetime shorter than twice the lead (CONSOLE_TOKEN_TTL_SECONDS ≤ 120) would be "expiring" as
    // soon as it is accepted, and a client renewing on it would renew in a loop
    const expiringIn = Math.max(expiredIn - this.opts.expiringLeadSeconds * 1000, expiredIn / 2);
    this.expiringTimer = setTimeout(() => this.send('token_expiring', { expiresAt: new Date(exp * 1000).toISOString() }), Math.max(0, expiringIn));
    this.expiredTimer = setTimeout(() => this.onExpired(), Math.max(0, expiredIn));
  }

  private onExpired(): void {
    this.send('token_expired', {});
    this.expired = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    // no renewal within the auth timeout: disconnect
    this.authTimer = setTimeout(() => this.reject('TOKEN_EXPIRED', 'The console token has expired'), this.opts.authTimeoutMs);
  }

  private sendLine(e: ConsoleLine): void {
    this.sendFrame(lineFrame(e));
  }

  private subscribe(server: Server): void {
    const onLine = (e: ConsoleLine): void => this.sendLine(e);
    const onSkipped = (r: SkipReport): void => this.sendFrame(skippedFrame(r));
    this.perLine = {
      on: () => server.on('console', onLine).on('skipped', onSkipped),
      off: () => server.off('console', onLine).off('skipped', onSkipped),
    };
    // `seq`: the status's number (ServerStateEvent.seq), by which a reader that hears it twice over (the panel's feeds) keeps the newest
    const onStatus = (status: ServerStatus): void => this.send('status', { status, seq: server.statusSeq });
    const onStats = (s: ServerStats): void => this.send('stats', s);
    const onDeleted = (): void => {
      this.error('NOT_FOUND', 'The server was deleted');
      this.end(CLOSE_SERVER_DELETED, 'server deleted');
    };
    this.perLine.on();
    server.on('status', onStatus);
    server.on('stats', onStats);
    server.on('deleted', onDeleted);
    if (this.batch) this.batchers.join(server, this);
    this.unsubscribe = () => {
      this.leaveBatches(server, false);
      this.perLine?.off();
      this.perLine = null;
      server.off('status', onStatus);
      server.off('stats', onStats);
      server.off('deleted', onDeleted);
    };
  }

  private onCommand(data: unknown): void {
    const server = this.server!;
    if (!this.perms.has(CONSOLE_COMMAND)) return this.error('FORBIDDEN', `Sending commands needs the ${CONSOLE_COMMAND} permission`);
    if (typeof data !== 'string' || data.length === 0 || data.length > 4096 || /[\r\n\0]/.test(data))
      return this.error('BAD_REQUEST', 'A command is a non-empty single-line string of at most 4096 characters');
    try {
      server.sendCommand(data);
      this.report('server:console.command', { command: data });
    } catch (e) {
      const err = e as AgentError;
      this.error(err.code ?? 'INVALID_STATE', err.message);
    }
  }

  private onPower(data: unknown): void {
    const server = this.server!;
    if (typeof data !== 'string' || !(POWER_ACTIONS as readonly string[]).includes(data)) return this.error('BAD_REQUEST', 'Power action must be start, stop, restart or kill');
    const key = POWER_KEYS[data as PowerAction];
    if (!this.perms.has(key)) return this.error('FORBIDDEN', `This power action needs the ${key} permission`);
    log.info({ serverId: server.id, user: this.sub, action: data }, 'power action from console');
    this.report(`server:power.${data}`, { via: 'console' });
    server.power(data).catch((e: unknown) => {
      const err = e as AgentError;
      this.error(err.code ?? 'INTERNAL_ERROR', err.message ?? 'Power action failed');
    });
  }

  private report(event: string, properties: Record<string, string>): void {
    if (!this.server || this.sub.startsWith('gateway:')) return;
    this.opts.report?.({ kind: 'activity', id: randomUUID(), serverId: this.server.id, userId: this.sub, event, properties, ip: this.ip, at: new Date().toISOString() });
  }

  /** The user of an authenticated session (null before its first auth). */
  get user(): string | null {
    return this.server ? this.sub : null;
  }

  get address(): string | null {
    return this.ip;
  }

  /** Ends the session: its user has too many console sockets open. */
  tooMany(max: number): void {
    this.error('TOO_MANY_CONNECTIONS', `At most ${max} console connections per user; close another one first.`);
    this.end(CLOSE_TOO_MANY, 'too many connections');
  }

  /** Whether this session watches `serverId` (null: any server) as `userId` with a token issued at or before `at`. */
  heldBefore(serverId: string | null, userId: string, at: number): boolean {
    return (serverId === null || this.server?.id === serverId) && this.sub === userId && this.issuedAt <= at;
  }

  /** Ends the session: the user's rights on its server changed. */
  revoke(): void {
    this.error('TOKEN_REVOKED', 'Your console access to this server changed; get a new console token');
    this.end(CLOSE_REVOKED, 'access revoked');
  }

  cleanup(): void {
    for (const t of [this.authTimer, this.expiringTimer, this.expiredTimer]) if (t) clearTimeout(t);
    this.authTimer = this.expiringTimer = this.expiredTimer = null;
    this.unsubscribe?.();
    this.unsubscribe = null;
  }
}

/** The `/console` WebSocket endpoint, attached to the agent's HTTP(S) server through `upgrade`. */
export class ConsoleGateway {
  readonly wss: WebSocketServer;
  private readonly sessions = new Map<WebSocket, ConsoleSession>();
  private pingTimer: NodeJS.Timeout;

  private readonly revocations: Revocations;
  private readonly batchers = new ConsoleBatchers();

  constructor(private readonly opts: ConsoleOptions) {
    this.revocations = opts.revocations ??= new Revocations();
    const maxPerUser = opts.maxPerUser ?? 20;
    // a user's sockets past the cap are ended as they authenticate (the gateway's own feeds are not users)
    opts.onAuthenticated = (session) => {
      const user = session.user;
      if (!user || user.startsWith('gateway:')) return true;
      const open = [...this.sessions.values()].filter((s) => s.user === user).length;
      if (open <= maxPerUser) return true;
      session.tooMany(maxPerUser);
      return false;
    };
    this.wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxPayload, perMessageDeflate: false });
    this.wss.on('connection', (ws: WebSocket, req: IncomingMessage) => {
      const session = new ConsoleSession(ws, opts, req?.socket?.remoteAddress ?? null, this.batchers);
      this.sessions.set(ws, session);
      opts.budget.opened();
      (ws as WebSocket & { isAlive?: boolean }).isAlive = true;
      ws.on('pong', () => ((ws as WebSocket & { isAlive?: boolean }).isAlive = true));
      ws.on('close', () => {
        this.sessions.delete(ws);
        opts.budget.closed();
      });
    });
    this.pingTimer = setInterval(() => {
      for (const ws of this.sessions.keys()) {
        const w = ws as WebSocket & { isAlive?: boolean };
        if (w.isAlive === false) {
          w.terminate();
          continue;
        }
        w.isAlive = false;
        try {
          w.ping();
        } catch {
          /* ignore */
        }
      }
    }, 30000);
    this.pingTimer.unref();
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const pathname = new URL(req.url ?? '/', 'http://agent').pathname.replace(/\/+$/, '');
    if (pathname !== '/console') {
      socket.write('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      socket.destroy();
      return;
    }
    const address = req.socket.remoteAddress ?? 'unknown';
    const anonymous = [...this.sessions.values()].filter((s) => s.user === null && s.address === address).length;
    if (anonymous >= (this.opts.maxAnonymousPerAddress ?? 10)) {
      socket.write('HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      socket.destroy();
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit('connection', ws, req));
  }

  get clientCount(): number {
    return this.sessions.size;
  }

  /**
   * The user's rights on the server (`serverId` null: on every server of the node) changed at `at` (the
   * panel's clock, as tokens' issue times are): tokens issued before then are refused and the sockets
   * they opened closed. A token the panel issued after the change, with the rights left, stands,
   * however late the change reaches this node.
   */
  revoke(serverId: string | null, userId: string, at = Date.now()): number {
    this.revocations.record(serverId, userId, at);
    let closed = 0;
    for (const s of this.sessions.values()) {
      if (!s.heldBefore(serverId, userId, at)) continue;
      s.revoke();
      closed++;
    }
    return closed;
  }

  close(): void {
    clearInterval(this.pingTimer);
    for (const [ws, s] of this.sessions) {
      s.cleanup();
      try {
        ws.close(1001, 'agent shutting down');
      } catch {
        /* ignore */
      }
      ws.terminate();
    }
    this.sessions.clear();
    this.wss.close();
  }
}
