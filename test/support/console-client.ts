/** A plain `ws` client for the node console channel, recording every message it receives. */
import WebSocket from 'ws';

export interface ConsoleMessage {
  type: string;
  data: any;
}

export class ConsoleClient {
  readonly messages: ConsoleMessage[] = [];
  closeCode: number | null = null;
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
    ws.on('close', (code) => {
      this.closeCode = code;
      this.wake();
    });
  }

  private wake() {
    const w = this.waiters;
    this.waiters = [];
    w.forEach((f) => f());
  }

  static open(url: string): Promise<ConsoleClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const client = new ConsoleClient(ws);
      ws.once('open', () => resolve(client));
      ws.once('error', reject);
    });
  }

  /** Opens, authenticates and waits for auth_success. */
  static async connect(url: string, token: string): Promise<ConsoleClient> {
    const c = await ConsoleClient.open(url);
    c.send({ type: 'auth', token });
    await c.waitFor((m) => m.type === 'auth_success');
    return c;
  }

  send(msg: unknown): void {
    this.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
  }

  /** Resolves with the first message (already received or future) matching `pred`. */
  async waitFor(pred: (m: ConsoleMessage) => boolean, timeoutMs = 15_000, from = 0): Promise<ConsoleMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.slice(from).find(pred);
      if (found) return found;
      if (this.closeCode !== null) throw new Error(`socket closed (${this.closeCode}) before the expected message; got: ${this.summary()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for a message; got: ${this.summary()}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  waitClose(timeoutMs = 15_000): Promise<number> {
    if (this.closeCode !== null) return Promise.resolve(this.closeCode);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('socket did not close')), timeoutMs);
      this.ws.once('close', (code) => {
        clearTimeout(t);
        resolve(code);
      });
    });
  }

  lines(): string[] {
    return this.messages.filter((m) => m.type === 'console_output').map((m) => String(m.data?.line ?? ''));
  }

  summary(): string {
    return JSON.stringify(this.messages.slice(-8)).slice(0, 1500);
  }

  close(): void {
    this.ws.close();
  }
}
