/**
 * Large messages on a signed-in GraphQL socket spend the same budget as large HTTP bodies
 * (src/graphql/large-bodies.ts): a message over 1 MiB (up to the socket's own limit, 9 MiB by default:
 * a file saved from the editor) is read only while its user has fewer than MAX_LARGE_PER_CALLER large
 * bodies or messages on their way and all of them together stay within MAX_LARGE_TOTAL_BYTES. Without
 * it, one user's 20 sockets could each hold a 9 MiB message half-sent, and the panel buffered them all.
 *
 * A WebSocket cannot be answered before its message is read (as HTTP's 429), so a socket over the
 * budget waits: it is paused (TCP pushes back on its client) and read again once a share is free.
 * Its client's keep-alive answers wait with it, so one that waits more than graphql-ws's keep-alive
 * allows (12 to 24 s) is cut off like any other client that stops answering. A message's share is
 * given back as soon as the message has been read (or the socket closed).
 *
 * ws tells nobody the length of a message it is receiving; its receiver keeps it, and
 * src/shared/ws-internals.ts reads it (with the other fields of ws's that nothing else offers).
 */
import type { WebSocket } from 'ws';
import { childLogger } from '../logger.js';
import { messageBytesInProgress, rawSocket } from '../shared/ws-internals.js';
import type { LargeBodyBudget } from './large-bodies.js';

const log = childLogger('graphql-ws');

/** How often a waiting socket asks the budget again. */
export const LARGE_MESSAGE_RETRY_MS = 100;

/**
 * Holds the socket's large messages to the budget: `caller` is the user (the key large HTTP bodies
 * use), `smallLimit` what any message may be without a share, `share` what a large one takes.
 */
export function budgetLargeMessages(socket: WebSocket, caller: string, budget: LargeBodyBudget, smallLimit: number, share: number): void {
  const raw = rawSocket(socket);
  if (!raw || messageBytesInProgress(socket) === null) {
    log.warn('cannot hold a GraphQL socket\'s large messages to the budget: ws internals changed');
    return;
  }
  let release: (() => void) | null = null;
  let retry: NodeJS.Timeout | null = null;

  const ask = (): void => {
    retry = null;
    release = budget.take(caller, share);
    if (release) return socket.isPaused ? socket.resume() : undefined;
    socket.pause();
    retry = setTimeout(ask, LARGE_MESSAGE_RETRY_MS);
  };
  // after every chunk ws has taken in (its own 'data' listener runs first) and after every message
  const check = (): void => {
    const bytes = messageBytesInProgress(socket) ?? 0;
    if (release && bytes === 0) {
      release();
      release = null;
    }
    if (!release && !retry && bytes > smallLimit) ask();
  };
  raw.on('data', check);
  socket.on('message', check);
  socket.once('close', () => {
    if (retry) clearTimeout(retry);
    release?.();
  });
}
