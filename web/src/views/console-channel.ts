/**
 * The command side of a server console: the node agent's console WebSocket.
 * A short-lived token comes from GraphQL `consoleToken`; the socket is opened on the first command,
 * authenticated with `{type:"auth"}`, renewed on `token_expiring`, and reopened when it dropped.
 * (The output shown on the page comes from the GraphQL console subscriptions (console-feed.ts), not from here.)
 */
import { ApiError, gql } from '../api';
import { Q_CONSOLE_TOKEN } from '../queries';

interface Token {
  token: string;
  socket: string;
  expiresAt: string;
}

export class ConsoleChannel {
  private ws: WebSocket | null = null;
  private opening: Promise<WebSocket> | null = null;
  private closed = false;

  /** `onNotice` gets errors the node reports (e.g. "the server is not running"). */
  constructor(
    private readonly serverId: string,
    private readonly onNotice: (message: string) => void,
  ) {}

  private fetchToken(): Promise<Token> {
    return gql<{ consoleToken: Token }>(Q_CONSOLE_TOKEN, { serverId: this.serverId }).then((d) => d.consoleToken);
  }

  private open(): Promise<WebSocket> {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) return Promise.resolve(this.ws);
    if (this.opening) return this.opening;
    this.opening = (async () => {
      const t = await this.fetchToken();
      let socketUrl = t.socket;
      // a page served over https cannot open ws:// (mixed content); the node must then have TLS
      if (location.protocol === 'https:' && socketUrl.startsWith('ws:')) socketUrl = 'wss:' + socketUrl.slice(3);
      return new Promise<WebSocket>((resolve, reject) => {
        let ws: WebSocket;
        try {
          ws = new WebSocket(socketUrl);
        } catch {
          reject(new ApiError('NODE_UNAVAILABLE', `Cannot open the node console at ${socketUrl}.`));
          return;
        }
        let authed = false;
        const timer = setTimeout(() => {
          reject(new ApiError('NODE_UNAVAILABLE', 'The node console did not answer in time.'));
          ws.close();
        }, 10_000);
        ws.onopen = () => ws.send(JSON.stringify({ type: 'auth', token: t.token }));
        ws.onmessage = (ev) => {
          let m: { type?: string; data?: { code?: string; message?: string } };
          try {
            m = JSON.parse(String(ev.data));
          } catch {
            return;
          }
          if (m.type === 'auth_success' && !authed) {
            authed = true;
            clearTimeout(timer);
            this.ws = ws;
            resolve(ws);
          } else if (m.type === 'error') {
            const message = m.data?.message ?? 'The node refused the request.';
            if (!authed) {
              clearTimeout(timer);
              reject(new ApiError(m.data?.code ?? 'ERROR', message));
            } else this.onNotice(message);
          } else if (m.type === 'token_expiring') {
            void this.renew(ws);
          } else if (m.type === 'token_expired') {
            // the next command opens a fresh, authenticated socket
            ws.close();
          }
        };
        ws.onerror = () => undefined; // followed by close
        ws.onclose = () => {
          clearTimeout(timer);
          if (this.ws === ws) this.ws = null;
          if (!authed) reject(new ApiError('NODE_UNAVAILABLE', 'Cannot connect to the node console. The node may be offline.'));
        };
      });
    })().finally(() => {
      this.opening = null;
    });
    return this.opening;
  }

  private async renew(ws: WebSocket): Promise<void> {
    try {
      const t = await this.fetchToken();
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'auth', token: t.token }));
    } catch {
      ws.close();
    }
  }

  /** Sends one command line; rejects with an ApiError when the node cannot be reached. */
  async send(command: string): Promise<void> {
    if (this.closed) throw new ApiError('CLOSED', 'The console is closed.');
    const ws = await this.open();
    ws.send(JSON.stringify({ type: 'command', data: command }));
  }

  close(): void {
    this.closed = true;
    this.ws?.close(1000);
    this.ws = null;
  }
}
