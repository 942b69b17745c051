/**
 * Splits a byte stream into text lines. A line longer than `maxLen` characters (UTF-16 units, the
 * CR of a CRLF end not counted) is cut at `maxLen`, never inside a surrogate pair (marked with a
 * trailing " …[truncated]") and the rest of it, up to the next newline, is discarded,
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
    // the CR of a CRLF line end is not the line's: a line of maxLen characters and its CR is whole
    if (this.partial.length > this.maxLen + (this.partial.endsWith('\r') ? 1 : 0)) {
      this.emit(cut(this.partial, this.maxLen) + ' …[truncated]');
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

/** The first `max` UTF-16 units of `text`, one fewer when the last would be half of a surrogate pair. */
function cut(text: string, max: number): string {
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}
