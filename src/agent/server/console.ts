import { ConsoleBuffer, FloodGuard, type ConsoleLine, type ConsoleStream } from './console-buffer';

/**
 * A server's console: numbered lines into the history ring, output over the flood limit dropped (with
 * one notice), the panel's own lines (`[panel] …`) always kept.
 */
export class ServerConsole {
  readonly buffer: ConsoleBuffer;
  private readonly flood: FloodGuard;
  private seq = 0;

  constructor(
    historyLines: number,
    floodLines: number,
    floodWindowMs: number,
    private readonly onLine: (entry: ConsoleLine) => void,
  ) {
    this.buffer = new ConsoleBuffer(historyLines);
    this.flood = new FloodGuard(floodLines, floodWindowMs);
  }

  /** A line of the panel's own (never dropped). */
  system(text: string, kind: ConsoleLine['kind'] = 'console'): void {
    this.push(`[panel] ${text}`, 'system', kind, true);
  }

  push(line: string, stream: ConsoleStream, kind: ConsoleLine['kind'], force = false): void {
    if (!force) {
      const verdict = this.flood.check();
      if (verdict === 'drop') return;
      if (verdict === 'notice') {
        this.system('Output rate limit exceeded: some lines were dropped', kind);
        return;
      }
    }
    const entry: ConsoleLine = { line, stream, ts: new Date().toISOString(), kind, seq: ++this.seq };
    this.buffer.push(entry);
    this.onLine(entry);
  }
}
