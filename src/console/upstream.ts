/**
 * The gateway's upstream feed of one server: a WebSocket client of the node's console channel,
 * authenticated with a console token the panel mints for itself, renewed before it expires, and
 * reconnected with backoff while it is wanted.
 *
 * The feed takes the node's per-line frames, not its batches: one socket at the node's output budget
 * (CONSOLE_MAX_LINES_PER_SECOND) costs little, and a line reaches the per-line subscribers without
 * waiting for a batch; the gateway batches for its batch subscribers itself (src/console/batcher.ts).
 * `console_skipped` counts the lines the node dropped.
 */
import WebSocket from 'ws';
import { childLogger } from '../logger.js';
import { GONE, RELAYED_TYPES, type ConsoleEvent } from './types.js';

const log = childLogger('console-upstream');

export interface UpstreamTicket {
  socket: string;
  token: string;
}

export class UpstreamFeed {
  private ws: WebSocket | null = null;
  private closed = false;
  private backoffMs = 250;
  private retry: NodeJS.Timeout | null = null;
  private renewal: NodeJS.Timeout | null = null;
  /** The socket whose first auth_success was relayed (later ones on it are renewals). */
  private authed: WebSocket | null = null;
  /** The node agent process we last heard from, and the last line `seq` relayed from it. */
  private boot: string | null = null;
  private lastSeq = 0;

  constructor(
    readonly serverId: string,
    private readonly ticket: () => Promise<UpstreamTicket>,
    private readonly onEvent: (e: ConsoleEvent) => void,
  ) {}

  start(): void {
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    let t: UpstreamTicket;
    try {
      t = await this.ticket();
    } catch (err) {
      if ((err as { code?: unknown }).code === 'NOT_FOUND') {
        // the server was deleted: nothing will ever come again, so the feed ends (and with it its subscriptions)
        log.info({ serverId: this.serverId }, 'the server no longer exists; its upstream feed ends');
        this.close();
        return this.onEvent(GONE);
      }
      log.warn({ serverId: this.serverId, err: (err as Error).message }, 'cannot mint an upstream console token');
      return this.scheduleReconnect();
    }
    if (this.closed) return;
    const ws = new WebSocket(t.socket, { handshakeTimeout: 2000, maxPayload: 1 << 20 });
    this.ws = ws;
    ws.on('open', () => ws.send(JSON.stringify({ type: 'auth', token: t.token })));
    ws.on('message', (raw) => this.onMessage(ws, raw.toString()));
    ws.on('error', (err) => log.debug({ serverId: this.serverId, err: err.message }, 'upstream socket error'));
    ws.on('close', (code) => {
      if (this.ws === ws) this.ws = null;
      if (!this.closed) {
        log.debug({ serverId: this.serverId, code }, 'upstream closed; reconnecting');
        this.scheduleReconnect();
      }
    });
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.connect();
    }, this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, 5000);
  }

  private onMessage(ws: WebSocket, raw: string): void {
    let msg: { type?: string; data?: any };
    try {
      msg = JSON.parse(raw);
    } catch {
      return;
    }
    if (msg.type === 'auth_success') {
      this.backoffMs = 250;
      // a renewal (same socket) is no news: its status has not changed
      if (this.authed === ws) return;
      this.authed = ws;
      const boot = typeof msg.data?.boot === 'string' ? msg.data.boot : null;
      if (boot !== this.boot) {
        // a new agent process numbers its lines from 1 again
        this.boot = boot;
        this.lastSeq = 0;
      }
      this.onEvent({ type: 'status', data: { status: msg.data?.status, seq: msg.data?.statusSeq } });
      return;
    }
    if (msg.type === 'token_expiring' || msg.type === 'token_expired') {
      // Renew halfway to the expiry, and no earlier than 30 s before it: this agent says "expiring"
      // halfway through a short token's life at the earliest, but a node running an older agent says
      // it as soon as a short token (CONSOLE_TOKEN_TTL_SECONDS ≤ 60) is accepted, and renewing at once
      // each time would renew in a loop as fast as the round trips go.
      const left = Date.parse(msg.data?.expiresAt) - Date.now();
      const delay = msg.type === 'token_expired' || !(left > 0) ? 0 : Math.max(left / 2, left - 30_000);
      if (this.renewal) clearTimeout(this.renewal);
      this.renewal = setTimeout(() => {
        this.renewal = null;
        if (ws.readyState !== WebSocket.OPEN) return;
        void this.ticket()
          .then((t) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ type: 'auth', token: t.token })))
          .catch(() => ws.close());
      }, delay);
      this.renewal.unref();
      return;
    }
    if (!msg.type || !RELAYED_TYPES.has(msg.type)) return;
    if ((msg.type === 'console_output' || msg.type === 'install_output') && this.relayed(msg.data?.seq)) return;
    this.onEvent({ type: msg.type as ConsoleEvent['type'], data: msg.data });
  }

  /**
   * After a reconnect the node replays its history: a line whose position was relayed already is
   * skipped (true).
   */
  private relayed(seq: unknown): boolean {
    if (typeof seq !== 'number') return false;
    if (seq <= this.lastSeq) return true;
    this.lastSeq = seq;
    return false;
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    if (this.renewal) clearTimeout(this.renewal);
    this.ws?.close();
    this.ws = null;
  }
}
