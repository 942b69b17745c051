/**
 * Batches of one server's console for batch subscribers (GraphQL `consoleBatches`): the lines of up
 * to BATCH_INTERVAL_MS and the count of lines the node dropped meanwhile, as ONE event object that
 * every batch subscriber receives (so the gateway converts, executes and serialises it once). Other
 * events pass through at once, after the lines that came before them.
 */
import { BATCH_INTERVAL_MS, type BatchLine, type ConsoleBatchData, type ConsoleEvent } from './types.js';

type Listener = (e: ConsoleEvent) => void;

/** A batch goes out early when it holds this many lines (a burst does not make one huge frame). */
export const MAX_BATCH_LINES = 1000;

export const isLineEvent = (ev: ConsoleEvent): boolean => ev.type === 'console_output' || ev.type === 'install_output';

/** The batch form of a line event (install lines: stream `install`). */
export function batchLine(ev: ConsoleEvent): BatchLine {
  const d = ev.data ?? {};
  return {
    line: String(d.line ?? ''),
    stream: ev.type === 'install_output' ? 'install' : String(d.stream ?? 'stdout'),
    ts: String(d.ts ?? new Date().toISOString()),
    seq: Number.isInteger(d.seq) ? (d.seq as number) : null,
  };
}

export function batchEvent(lines: BatchLine[], skipped: number): ConsoleEvent & { data: ConsoleBatchData } {
  return { type: 'console_batch', data: { lines, skipped } };
}

export class ConsoleBatcher {
  readonly listeners = new Set<Listener>();
  private lines: BatchLine[] = [];
  private skipped = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly intervalMs = BATCH_INTERVAL_MS) {}

  /** Takes one event of the server (registered as a listener of the hub's entry). */
  readonly push = (ev: ConsoleEvent): void => {
    if (isLineEvent(ev)) {
      this.lines.push(batchLine(ev));
      if (this.lines.length >= MAX_BATCH_LINES) this.flush();
      else this.schedule();
      return;
    }
    if (ev.type === 'console_skipped') {
      const n = Number(ev.data?.skipped);
      if (Number.isFinite(n) && n > 0) this.skipped += n;
      this.schedule();
      return;
    }
    this.flush();
    this.emit(ev);
  };

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.flush();
    }, this.intervalMs);
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.lines.length && !this.skipped) return;
    const ev = batchEvent(this.lines, this.skipped);
    this.lines = [];
    this.skipped = 0;
    this.emit(ev);
  }

  private emit(ev: ConsoleEvent): void {
    for (const l of this.listeners) l(ev);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.lines = [];
    this.skipped = 0;
  }
}
