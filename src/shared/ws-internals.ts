/**
 * The three things the panel and the agent read or set inside a `ws` WebSocket that ws offers no API
 * for. They are private fields of ws 8; each accessor checks the field's type and answers "not
 * there" (undefined, null, false) when a ws upgrade moves it, so the callers can log and go on, and
 * the test named beside each one fails.
 */
import type { Duplex } from 'node:stream';

interface WsPrivate {
  _socket?: Duplex;
  _receiver?: { _maxPayload?: unknown; _totalPayloadLength?: unknown };
}

const internals = (ws: object): WsPrivate => ws as WsPrivate;

/**
 * The TCP socket under a WebSocket: its writes are corked (src/shared/write-coalescer.ts) and its
 * chunks watched (src/graphql/ws-large-messages.ts). Guarded by test/graphql/large-messages.test.ts.
 */
export function rawSocket(ws: object): Duplex | undefined {
  return internals(ws)._socket;
}

/**
 * Bytes announced so far by the frames of the message the socket is receiving (0 between messages);
 * null when ws keeps it elsewhere. Guarded by test/graphql/large-messages.test.ts.
 */
export function messageBytesInProgress(ws: object): number | null {
  const bytes = internals(ws)._receiver?._totalPayloadLength;
  return typeof bytes === 'number' ? bytes : null;
}

/**
 * Sets the largest message the socket accepts from now on (ws takes one maxPayload per server, fixed
 * at the upgrade; ws 8 reads the receiver's copy for each frame). False when the field has moved.
 * Guarded by test/graphql/edit-limits.test.ts.
 */
export function setMaxMessageBytes(ws: object, bytes: number): boolean {
  const receiver = internals(ws)._receiver;
  if (!receiver || typeof receiver._maxPayload !== 'number') return false;
  receiver._maxPayload = bytes;
  return true;
}
