/**
 * A hostile WebSocket peer for tests: it never answers (nor honours) a close frame and goes on
 * sending, as a client that means to keep acting after the server ended its session would.
 */
import net from 'node:net';
import { randomBytes } from 'node:crypto';

export interface RawMsg { opcode: number; text: string; code?: number }

export class RawWs {
  readonly frames: RawMsg[] = [];
  private buf = Buffer.alloc(0);
  private upgraded = false;
  ended = false;
  private constructor(private readonly sock: net.Socket) {}

  static connect(port: number, path = '/console'): Promise<RawWs> {
    return new Promise((resolve, reject) => {
      const sock = net.connect(port, '127.0.0.1');
      const c = new RawWs(sock);
      sock.on('error', () => undefined);
      sock.on('close', () => (c.ended = true));
      sock.on('connect', () => {
        sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
      });
      sock.on('data', (d: Buffer) => {
        c.buf = Buffer.concat([c.buf, d]);
        if (!c.upgraded) {
          const i = c.buf.indexOf('\r\n\r\n');
          if (i < 0) return;
          const head = c.buf.subarray(0, i).toString();
          c.buf = c.buf.subarray(i + 4);
          if (!head.startsWith('HTTP/1.1 101')) return reject(new Error(head));
          c.upgraded = true;
          resolve(c);
        }
        c.parse();
      });
    });
  }

  private parse(): void {
    for (;;) {
      if (this.buf.length < 2) return;
      const op = this.buf[0]! & 0x0f;
      let len = this.buf[1]! & 0x7f;
      let off = 2;
      if (len === 126) { if (this.buf.length < 4) return; len = this.buf.readUInt16BE(2); off = 4; }
      else if (len === 127) { if (this.buf.length < 10) return; len = Number(this.buf.readBigUInt64BE(2)); off = 10; }
      if (this.buf.length < off + len) return;
      const payload = this.buf.subarray(off, off + len);
      this.buf = this.buf.subarray(off + len);
      if (op === 8) this.frames.push({ opcode: 8, text: payload.subarray(2).toString(), code: payload.length >= 2 ? payload.readUInt16BE(0) : undefined });
      else this.frames.push({ opcode: op, text: payload.toString() });
    }
  }

  json(): any[] {
    return this.frames.filter((f) => f.opcode === 1).map((f) => JSON.parse(f.text));
  }

  closeFrame(): RawMsg | undefined {
    return this.frames.find((f) => f.opcode === 8);
  }

  sendText(text: string): void {
    const payload = Buffer.from(text);
    const mask = randomBytes(4);
    let head: Buffer;
    if (payload.length < 126) head = Buffer.from([0x81, 0x80 | payload.length]);
    else { head = Buffer.alloc(4); head[0] = 0x81; head[1] = 0x80 | 126; head.writeUInt16BE(payload.length, 2); }
    const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
    this.sock.write(Buffer.concat([head, mask, masked]));
  }

  send(msg: unknown): void {
    this.sendText(JSON.stringify(msg));
  }

  destroy(): void {
    this.sock.destroy();
  }
}
