/**
 * graphql-ws over `ws`: graphql-ws's own `useServer` (graphql-ws/use/ws) with one difference that the
 * console fan-out benchmark called for. A message is handed to the socket without waiting for its
 * write callback. graphql-ws awaits `send` before it takes the next event of a subscription, so with
 * the stock adapter a subscriber received at most one event per completed write, and each event paid
 * for a callback and a promise: at 200 lines/s × 500 subscribers, CPU per delivered line went from
 * 30.5 to 18.6 µs without the wait.
 * Back-pressure moves to the socket: a client whose unsent data passes its allowance (its own limit,
 * and its share of what all of them may hold: src/shared/send-budget.ts) is closed with 1013 "client
 * too slow" (its client may reconnect). This is the rule the node's console channel
 * applies, so a stalled reader cannot make the gateway's memory grow.
 */
import type { IncomingMessage } from 'node:http';
import { CloseCode, handleProtocols, makeServer, type ServerOptions } from 'graphql-ws';
import type { WebSocket, WebSocketServer } from 'ws';
import { childLogger } from '../logger.js';
import type { SendBudget } from '../shared/send-budget.js';
import { hold, settle } from '../shared/write-coalescer.js';
import { rawSocket } from '../shared/ws-internals.js';

const log = childLogger('graphql-ws');

export const CLOSE_TOO_SLOW = 1013;

export interface WsExtra {
  readonly socket: WebSocket;
  readonly request: IncomingMessage;
}

export interface TransportOptions {
  /** Ping every this many ms; a client that does not answer within the next period is terminated. */
  keepAliveMs?: number;
  /** What the sockets may hold unsent (each, and all together). */
  budget: SendBudget;
}

/**
 * Hands a message to the socket, or closes the socket (1013) when the client has not read the last
 * `maxBufferedBytes` already sent to it. Every message of the GraphQL socket goes through here,
 * graphql-ws's and the subscriptions' pushed ones alike; the messages of one turn of the event loop
 * leave in one write (src/shared/write-coalescer.ts).
 */
export function sendOrDrop(socket: WebSocket, data: string, budget: SendBudget): void {
  if (socket.readyState !== socket.OPEN) return;
  if (budget.over(socket.bufferedAmount)) {
    log.warn({ buffered: socket.bufferedAmount }, 'GraphQL subscriber too slow; disconnecting it');
    socket.close(CLOSE_TOO_SLOW, 'client too slow');
    return;
  }
  const raw = rawSocket(socket);
  hold(raw);
  socket.send(data);
  settle(raw);
}

/** `E` is the connection's `extra`: the socket and upgrade request, plus what the hooks add to it. */
export function serveGraphQLWs<P extends Record<string, unknown> | undefined, E extends WsExtra>(
  options: ServerOptions<P, E>,
  wss: WebSocketServer,
  { keepAliveMs = 12_000, budget }: TransportOptions,
): { dispose(): Promise<void> } {
  const server = makeServer(options);
  wss.options.handleProtocols = handleProtocols;

  wss.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    budget.opened();
    const fail = (err: unknown, what: string) => {
      log.error({ err }, what);
      socket.close(CloseCode.InternalServerError, 'Internal server error');
    };
    // ws emits 'error' only for what the client did (a frame over maxPayload, invalid UTF-8, a bad
    // opcode) or a broken connection, and has already closed with the matching code (1009, 1007, 1002)
    socket.once('error', (err) => log.warn({ code: (err as NodeJS.ErrnoException).code, message: err.message }, 'GraphQL WebSocket client broke the protocol; connection closed'));

    let pongWait: NodeJS.Timeout | null = null;
    const pingTimer = setInterval(() => {
      if (socket.readyState !== socket.OPEN) return;
      pongWait = setTimeout(() => socket.terminate(), keepAliveMs);
      socket.once('pong', () => {
        if (pongWait) clearTimeout(pongWait);
        pongWait = null;
      });
      socket.ping();
    }, keepAliveMs);
    pingTimer.unref();

    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) => sendOrDrop(socket, data, budget),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (cb) =>
          socket.on('message', (data) => {
            cb(String(data)).catch((err: unknown) => fail(err, 'graphql-ws message handling failed'));
          }),
      },
      { socket, request } as E,
    );

    socket.once('close', (code, reason) => {
      budget.closed();
      if (pongWait) clearTimeout(pongWait);
      clearInterval(pingTimer);
      void closed(code, String(reason));
    });
  });

  return {
    async dispose() {
      for (const client of wss.clients) client.close(1001, 'Going away');
      wss.removeAllListeners('connection');
    },
  };
}
