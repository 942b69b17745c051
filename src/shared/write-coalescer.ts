/**
 * One write per socket and turn of the event loop: the frames a console socket gets in one turn (the
 * lines of one batch from the node, a chunk of a process's output) are held (`cork`) and handed to
 * the kernel together when the turn ends, one `writev` instead of one system call per frame. The
 * system call is most of what a frame costs: at 500 readers it is the fan-out's whole price.
 *
 * A socket that gathers more than FLUSH_BYTES in one turn is released at once, so that what waits in
 * the process stays small (and a burst never looks like a slow client to the send budget).
 */
import { setImmediate } from 'node:timers';

interface Corkable {
  cork(): void;
  uncork(): void;
  readonly writableLength: number;
  readonly destroyed: boolean;
}

export const FLUSH_BYTES = 64 * 1024;

const held = new Set<Corkable>();
let scheduled = false;

function release(): void {
  scheduled = false;
  for (const s of held) if (!s.destroyed) s.uncork();
  held.clear();
}

/** Call before writing to `socket`: its writes of this turn go out together at the turn's end. */
export function hold(socket: Corkable | null | undefined): void {
  if (!socket || socket.destroyed || held.has(socket)) return;
  socket.cork();
  held.add(socket);
  if (!scheduled) {
    scheduled = true;
    setImmediate(release);
  }
}

/** Call after writing: a socket holding FLUSH_BYTES or more is released now. */
export function settle(socket: Corkable | null | undefined): void {
  if (!socket || socket.writableLength < FLUSH_BYTES || !held.delete(socket)) return;
  socket.uncork();
}
