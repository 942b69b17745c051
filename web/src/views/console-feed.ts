/**
 * A server console's lines, in batches, from the panel's GraphQL `consoleBatches` subscription: the
 * history first as one batch, then at most one batch per 50 ms, each with the number of lines the node
 * dropped under its flood limit. Lines already delivered (the history repeated after a reconnect) are
 * left out.
 */
import { type ApiError, subscribe } from '../api';
import { S_CONSOLE_BATCHES, type ConsoleBatch, type ConsoleLine } from '../queries';

/** How many line keys are remembered to recognise repeated history (far more than the node's 150 lines). */
const REMEMBERED = 5000;

/** Subscribes to a server's console; returns the unsubscribe function. */
export function feedConsole(serverId: string, onBatch: (batch: ConsoleBatch) => void, onError: (err: ApiError) => void): () => void {
  const seen = new SeenLines();
  return subscribe<{ consoleBatches: ConsoleBatch }>(S_CONSOLE_BATCHES, { serverId }, ({ consoleBatches: batch }) => {
    const lines = batch.lines.filter((l) => seen.add(l));
    if (lines.length || batch.skipped) onBatch({ lines, skipped: batch.skipped });
  }, onError);
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
