/**
 * Splits a byte stream into text lines. A line longer than `maxLen` characters is cut at `maxLen`
 * (marked with a trailing " …[truncated]") and the rest of it, up to the next newline, is discarded,
 * so a process that never prints a newline cannot make the agent buffer without bound.
 */
export class LineSplitter {
  private partial = '';
  private discarding = false;
  private readonly decoder = new TextDecoder('utf-8');

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLen = 4096,
  ) {}

  push(chunk: Buffer): void {
    const text = this.decoder.decode(chunk, { stream: true });
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      if (nl < 0) break;
      this.take(text.slice(start, nl), true);
      start = nl + 1;
    }
    if (start < text.length) this.take(text.slice(start), false);
  }

  /** Emits what is left (call when the stream ends). */
  end(): void {
    const rest = this.decoder.decode();
    if (rest) this.take(rest, false);
    if (this.partial && !this.discarding) this.emit(this.partial);
    this.partial = '';
    this.discarding = false;
  }

  private take(piece: string, complete: boolean): void {
    if (this.discarding) {
      if (complete) this.discarding = false;
      return;
    }
    this.partial += piece;
    if (this.partial.length > this.maxLen) {
      this.emit(this.partial.slice(0, this.maxLen) + ' …[truncated]');
      this.partial = '';
      this.discarding = !complete;
      return;
    }
    if (complete) {
      this.emit(this.partial);
      this.partial = '';
    }
  }

  private emit(line: string): void {
    this.onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
  }
}
