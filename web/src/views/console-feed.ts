/**
 * A server console's lines, in batches, from the panel's GraphQL `consoleBatches` subscription: the
 * history first as one batch, then at most one batch per 50 ms, each with the number of lines the node
 * dropped under its flood limit. Lines already delivered (the history repeated after a reconnect) are
 * left out; lines that never reached the page (printed while the connection was down, beyond the
 * history a reconnect repeats) are counted by the gaps in the node's line numbers (`missed`).
 */
import { type ApiError, subscribe } from '../api';
import { S_CONSOLE_BATCHES, type ConsoleBatch, type ConsoleLine } from '../queries';

/** How many line keys are remembered to recognise repeated history (far more than the node's 150 lines). */
const REMEMBERED = 5000;

/** Subscribes to a server's console; returns the unsubscribe function. */
export function feedConsole(serverId: string, onBatch: (batch: ConsoleBatch) => void, onError: (err: ApiError) => void): () => void {
  const seen = new SeenLines();
  const numbers = new LineNumbers();
  return subscribe<{ consoleBatches: ConsoleBatch }>(S_CONSOLE_BATCHES, { serverId }, ({ consoleBatches: batch }) => {
    const lines = batch.lines.filter((l) => seen.add(l));
    const missed = numbers.missedBefore(lines);
    if (lines.length || batch.skipped) onBatch({ lines, skipped: batch.skipped, ...(missed ? { missed } : {}) });
  }, onError);
}

/**
 * The node numbers the lines it keeps one by one (a line it drops over its flood limit takes no
 * number), from 1 when its agent starts: a number past the next one expected means lines the page
 * never got. A number not above the last one is a restarted agent's: counting starts again.
 */
class LineNumbers {
  private last: number | null = null;

  /** How many lines are missing before and among `lines` (new lines, in order). */
  missedBefore(lines: ConsoleLine[]): number {
    let missed = 0;
    for (const { seq } of lines) {
      if (seq == null) continue;
      if (this.last !== null && seq > this.last + 1) missed += seq - this.last - 1;
      this.last = seq;
    }
    return missed;
  }
}

/**
 * The keys of the lines delivered lately. The node numbers its lines (`seq`, from 1 when its agent
 * starts): with the time, that tells two identical lines of one millisecond apart, and a restarted agent's
 * lines from the earlier ones.
 */
class SeenLines {
  private readonly keys = new Set<string>();

  /** False when the line was delivered before. */
  add(l: ConsoleLine): boolean {
    const key = l.seq != null ? `${l.seq}|${l.ts}` : `${l.ts}|${l.stream}|${l.line}`;
    if (this.keys.has(key)) return false;
    this.keys.add(key);
    if (this.keys.size > REMEMBERED) this.keys.delete(this.keys.values().next().value!);
    return true;
  }
}
