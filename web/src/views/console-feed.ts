/**
 * A server console's lines, in batches, from the panel: the GraphQL `consoleBatches` subscription
 * (history first as one batch, then at most one batch per 50 ms, with the number of lines the node
 * dropped under its flood limit). A panel without it (the subscription fails validation) feeds from
 * `consoleOutput`, one line per event, and the lines are grouped here, one batch per animation frame.
 * Lines already delivered (the history repeated after a reconnect) are left out.
 */
import { type ApiError, subscribe } from '../api';
import { S_CONSOLE, S_CONSOLE_BATCHES, type ConsoleBatch, type ConsoleLine } from '../queries';

/** How many line keys are remembered to recognise repeated history (far more than the node's 150 lines). */
const REMEMBERED = 5000;
/** A hidden tab gets no animation frames: a batch also ends at this many lines. */
const MAX_GROUP = 1000;

/** Subscribes to a server's console; returns the unsubscribe function. */
export function feedConsole(serverId: string, onBatch: (batch: ConsoleBatch) => void, onError: (err: ApiError) => void): () => void {
  const seen = new SeenLines();
  const deliver = (batch: ConsoleBatch) => {
    const lines = batch.lines.filter((l) => seen.add(l));
    if (lines.length || batch.skipped) onBatch({ lines, skipped: batch.skipped });
  };
  let stop = subscribe<{ consoleBatches: ConsoleBatch }>(S_CONSOLE_BATCHES, { serverId }, (d) => deliver(d.consoleBatches), (err) => {
    if (err.code !== 'GRAPHQL_VALIDATION_FAILED') return onError(err);
    stop();
    stop = perLineFeed(serverId, deliver, onError);
  });
  return () => stop();
}

/** The `consoleOutput` subscription, its lines grouped per animation frame. */
function perLineFeed(serverId: string, deliver: (batch: ConsoleBatch) => void, onError: (err: ApiError) => void): () => void {
  let group: ConsoleLine[] = [];
  let frame = 0;
  const flush = () => {
    if (frame) cancelAnimationFrame(frame);
    frame = 0;
    const lines = group;
    group = [];
    deliver({ lines, skipped: 0 });
  };
  const unsubscribe = subscribe<{ consoleOutput: ConsoleLine }>(S_CONSOLE, { serverId }, (d) => {
    group.push(d.consoleOutput);
    if (group.length >= MAX_GROUP) flush();
    else if (!frame) frame = requestAnimationFrame(flush);
  }, onError);
  return () => {
    if (frame) cancelAnimationFrame(frame);
    unsubscribe();
  };
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
