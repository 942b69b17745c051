export type ConsoleStream = 'stdout' | 'stderr' | 'system';

export interface ConsoleLine {
  line: string;
  stream: ConsoleStream;
  ts: string; // ISO time
  /** 'install' lines come from the install script and are replayed as `install_output`. */
  kind: 'console' | 'install';
  /**
   * Position of the line in this server's output since the agent started (1, 2, …). A reader that
   * reconnects skips what it already has by `seq`, never by text: identical lines are still lines.
   */
  seq: number;
}

/** Fixed-size ring buffer of the most recent console lines (150 by default). */
export class ConsoleBuffer {
  private buf: (ConsoleLine | undefined)[];
  private next = 0;
  private size = 0;

  constructor(readonly capacity = 150) {
    this.buf = new Array<ConsoleLine | undefined>(capacity);
  }

  push(entry: ConsoleLine): void {
    this.buf[this.next] = entry;
    this.next = (this.next + 1) % this.capacity;
    if (this.size < this.capacity) this.size++;
  }

  /** Oldest first. */
  entries(): ConsoleLine[] {
    const out: ConsoleLine[] = [];
    const start = (this.next - this.size + this.capacity) % this.capacity;
    for (let i = 0; i < this.size; i++) out.push(this.buf[(start + i) % this.capacity]!);
    return out;
  }

  lines(): string[] {
    return this.entries().map((e) => e.line);
  }

  clear(): void {
    this.buf = new Array<ConsoleLine | undefined>(this.capacity);
    this.next = 0;
    this.size = 0;
  }
}

