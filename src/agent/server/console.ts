import { ConsoleBuffer, type ConsoleLine, type ConsoleStream } from './console-buffer';
import { FloodNotices, SkipCounter, TokenBucket, type SkipReport } from './line-budget';

/**
 * A server's console: numbered lines into the history ring and out to its readers. Output over the
 * line budget (lines per second) is dropped and counted: a dropped line takes no `seq` and stays out
 * of the history; the count goes to the readers (`onSkipped`). The panel's own lines (`[panel] …`)
 * always pass.
 */
export class ServerConsole {
  readonly buffer: ConsoleBuffer;
  private readonly budget: TokenBucket;
  private readonly notices = new FloodNotices();
  private readonly skips: SkipCounter;
  private seq = 0;

  constructor(
    historyLines: number,
    private readonly maxLinesPerSecond: number,
    private readonly onLine: (entry: ConsoleLine) => void,
    onSkipped: (report: SkipReport) => void,
  ) {
    this.buffer = new ConsoleBuffer(historyLines);
    this.budget = new TokenBucket(maxLinesPerSecond);
    this.skips = new SkipCounter(onSkipped);
  }

  /** A line of the panel's own (never dropped). */
  system(text: string, kind: ConsoleLine['kind'] = 'console'): void {
    this.append(`[panel] ${text}`, 'system', kind);
  }

  /** A line of the server's process (or of its install script), dropped when over the budget. */
  push(line: string, stream: ConsoleStream, kind: ConsoleLine['kind']): void {
    const now = Date.now();
    if (this.budget.take(now)) return this.append(line, stream, kind);
    this.skips.add();
    if (this.notices.dropped(now)) {
      this.system(`Output over ${this.maxLinesPerSecond} lines/s: lines are being dropped; the console shows how many. Make the server print less to see every line.`, kind);
    }
  }

  private append(line: string, stream: ConsoleStream, kind: ConsoleLine['kind']): void {
    const entry: ConsoleLine = { line, stream, ts: new Date().toISOString(), kind, seq: ++this.seq };
    this.buffer.push(entry);
    this.onLine(entry);
  }
}
