/**
 * The tests' client of the node console channel: a plain `ws` client that records every message it
 * receives. `waitFor` finds a message anywhere in what came; `next` reads them in order (a cursor).
 */
import WebSocket from 'ws';

export interface ConsoleMessage {
  type: string;
  data: any;
}

export class ConsoleClient {
  readonly messages: ConsoleMessage[] = [];
  /** how the socket closed, once it has */
  closed: { code: number; reason: string } | null = null;
  private cursor = 0;
  private waiters: (() => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (raw) => {
      try {
        this.messages.push(JSON.parse(raw.toString()) as ConsoleMessage);
      } catch {
        this.messages.push({ type: '__unparsable__', data: raw.toString() });
      }
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
    ws.on('error', () => undefined);
  }

  get closeCode(): number | null {
    return this.closed?.code ?? null;
  }

  private wake() {
    const w = this.waiters;
    this.waiters = [];
    w.forEach((f) => f());
  }

  /** Resolves at the next message or close, or after `ms`. */
  private nextEvent(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      this.waiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  static open(url: string): Promise<ConsoleClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const client = new ConsoleClient(ws);
      ws.once('open', () => resolve(client));
      ws.once('error', reject);
    });
  }

  /** Opens; with a `token`, also authenticates and waits for auth_success. */
  static async connect(url: string, token?: string): Promise<ConsoleClient> {
    const c = await ConsoleClient.open(url);
    if (token === undefined) return c;
    c.send({ type: 'auth', token });
    await c.waitFor((m) => m.type === 'auth_success');
    return c;
  }

  send(msg: unknown): void {
    this.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
  }

  /** Resolves with the first message from index `from` on (already received or future) matching `pred`. */
  async waitFor(pred: (m: ConsoleMessage) => boolean, timeoutMs = 15_000, from = 0): Promise<ConsoleMessage> {
    const i = await this.indexOf(pred, timeoutMs, from, 'a message');
    return this.messages[i]!;
  }

  /** The next message after the cursor of type `type` matching `pred`; moves the cursor past it. */
  async next(type: string, pred: (m: ConsoleMessage) => boolean = () => true, timeoutMs = 10_000): Promise<ConsoleMessage> {
    const i = await this.indexOf((m) => m.type === type && pred(m), timeoutMs, this.cursor, `console message ${type}`);
    this.cursor = i + 1;
    return this.messages[i]!;
  }

  private async indexOf(pred: (m: ConsoleMessage) => boolean, timeoutMs: number, from: number, what: string): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (let i = from; i < this.messages.length; i++) if (pred(this.messages[i]!)) return i;
      if (this.closed) throw new Error(`socket closed (${this.closed.code}) before ${what}; got: ${this.summary()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got: ${this.summary()}`);
      await this.nextEvent(left);
    }
  }

  has(type: string, pred: (m: ConsoleMessage) => boolean = () => true): boolean {
    return this.messages.some((m) => m.type === type && pred(m));
  }

  /** How the socket closed (waits at most `timeoutMs`). */
  async waitClosed(timeoutMs = 15_000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('timed out waiting for the socket to close');
      await this.nextEvent(left);
    }
    return this.closed;
  }

  async waitClose(timeoutMs = 15_000): Promise<number> {
    return (await this.waitClosed(timeoutMs)).code;
  }

  lines(): string[] {
    return this.messages.filter((m) => m.type === 'console_output').map((m) => String(m.data?.line ?? ''));
  }

  summary(): string {
    return JSON.stringify(this.messages.slice(-8)).slice(0, 1500);
  }

  /** Closes at once (no closing handshake). */
  close(): void {
    this.ws.terminate();
  }
}
