/**
 * What a server does with the rest of a request body it refused half way (a write past the disk
 * limit, an upload past its size): it answers at once, then reads and drops the rest, so that the
 * connection ends cleanly. Closing a connection with unread bytes makes the kernel reset it, and a
 * reset can reach the client before it has read the answer: the node's refusal would look to the
 * panel like an unreachable node, and the panel's to a browser like a network error. A client that
 * goes on sending for longer than `maxMs` after the answer is cut off: 30 s, long enough for a client
 * on a slow line to finish sending the part it had begun.
 */
import type { IncomingMessage } from 'node:http';

export const DISCARD_MAX_MS = 30_000;

export function discardRest(req: IncomingMessage, maxMs = DISCARD_MAX_MS): void {
  if (req.complete) return;
  const timer = setTimeout(() => req.socket.destroy(), maxMs);
  timer.unref();
  const done = () => clearTimeout(timer);
  req.once('end', done);
  req.once('close', done);
  req.unpipe();
  req.resume();
}
