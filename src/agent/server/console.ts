import { ConsoleBuffer, type ConsoleLine, type ConsoleStream } from './console-buffer';
import { FloodNotices, SkipCounter, TokenBucket, type SkipReport } from './line-budget';
import { PacedQueue } from '../../shared/paced-queue';

/**
 * Longest a line waits for its readers (src/shared/paced-queue.ts): a line that could not be
 * handed to them by then is dropped and counted, like a line over the budget.
 */
export const FANOUT_MAX_WAIT_MS = 250;

interface Pending {
  line: string;
  stream: ConsoleStream;
  kind: ConsoleLine['kind'];
  ts: string;
}

/**
 * A server's console: numbered lines into the history ring and out to its readers. Output over the
 * line budget (lines per second) is dropped and counted, and so is output the readers cannot take in
 * time (many per-line readers of a loud server: the fan-out gets a share of each turn of the event
 * loop, and a line that waited FANOUT_MAX_WAIT_MS for it is dropped). A dropped line takes no `seq`
 * and stays out of the history; the count goes to the readers (`onSkipped`). The panel's own lines
 * (`[panel] …`) always pass. A line's `ts` is when the agent read it.
 */
export class ServerConsole {
  readonly buffer: ConsoleBuffer;
  private readonly budget: TokenBucket;
  private readonly notices = new FloodNotices();
  private readonly skips: SkipCounter;
  private readonly fanout: PacedQueue<Pending>;
  private seq = 0;

  constructor(
    historyLines: number,
    private readonly maxLinesPerSecond: number,
    private readonly onLine: (entry: ConsoleLine) => void,
    onSkipped: (report: SkipReport) => void,
    readers: () => number,
  ) {
    this.buffer = new ConsoleBuffer(historyLines);
    this.budget = new TokenBucket(maxLinesPerSecond);
    this.skips = new SkipCounter(onSkipped);
    this.fanout = new PacedQueue((p) => this.append(p), FANOUT_MAX_WAIT_MS, (n) => this.fanoutDropped(n), readers);
  }

  /** A line of the panel's own (never dropped). */
  system(text: string, kind: ConsoleLine['kind'] = 'console'): void {
    this.fanout.push({ line: `[panel] ${text}`, stream: 'system', kind, ts: new Date().toISOString() }, true);
  }

  /** A line of the server's process (or of its install script), dropped when over the budget. */
  push(line: string, stream: ConsoleStream, kind: ConsoleLine['kind']): void {
    const now = Date.now();
    if (this.budget.take(now)) return this.fanout.push({ line, stream, kind, ts: new Date(now).toISOString() });
    this.skips.add();
    if (this.notices.dropped(now)) {
      this.system(`Output over ${this.maxLinesPerSecond} lines/s: lines are being dropped; the console shows how many. Make the server print less to see every line.`, kind);
    }
  }

  private fanoutDropped(count: number): void {
    this.skips.add(count);
    if (this.notices.dropped(Date.now())) {
      this.system('The console\'s readers cannot take this much output: lines are being dropped; the console shows how many. Readers that take batches cost far less than per-line ones.');
    }
  }

  private append({ line, stream, kind, ts }: Pending): void {
    const entry: ConsoleLine = { line, stream, ts, kind, seq: ++this.seq };
    this.buffer.push(entry);
    this.onLine(entry);
  }
}
