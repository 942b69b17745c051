/**
 * Requests that Node's HTTP parser rejects before Express sees them: headers over the 16 KB limit,
 * a malformed request line or header, a request not received in time. Node's default answer is a
 * bare `431`/`400`/`408` without a body; here it is a 400 in the documented error shape (the API uses
 * no other status for a request that cannot be read). The path is not known yet at this point,
 * so `/plants` gets the platform's shape too.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { AppError } from '../errors.js';
import { errorBody } from './errors.js';
import { childLogger } from '../logger.js';

const log = childLogger('http');

const MESSAGES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'The request headers are larger than 16 KB.',
  HPE_REQUEST_TIMEOUT: 'The request was not received in time.',
  ERR_HTTP_REQUEST_TIMEOUT: 'The request was not received in time.',
};

export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  // nothing to answer on a socket the client has closed, or when a response has begun (a keep-alive
  // socket's parser can fail after an answer was written: Node itself then only closes it)
  const pending = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || pending?.headersSent) {
    socket.destroy();
    return;
  }
  const message = MESSAGES[err.code ?? ''] ?? 'The request could not be parsed as HTTP.';
  log.debug({ code: err.code }, 'unreadable request');
  answerOnSocket(socket, AppError.badRequest(message));
}

/** A request whose body did not arrive in time (src/shared/body-time.ts): a 400 when nothing was answered yet. */
export function answerLateBody(req: IncomingMessage, res: ServerResponse): void {
  if (res.headersSent || !req.socket.writable) {
    req.socket.destroy();
    return;
  }
  log.debug({ url: req.url }, 'request body not received in time');
  answerOnSocket(req.socket, AppError.badRequest('The request was not received in time: its body stopped arriving. Send it again; an upload may take as long as it needs, but must not stall.'));
}

const REASONS: Record<number, string> = { 400: 'Bad Request', 404: 'Not Found', 429: 'Too Many Requests' };

/**
 * Writes `err` as a complete HTTP/1.1 response in the platform's error shape straight on a socket
 * that Express never sees (an unparseable request, a refused WebSocket upgrade) and closes it.
 */
export function answerOnSocket(socket: Duplex, err: AppError): void {
  const body = JSON.stringify(errorBody(err));
  socket.end(
    `HTTP/1.1 ${err.status} ${REASONS[err.status] ?? 'Error'}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      'X-Content-Type-Options: nosniff\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
    () => socket.destroy(),
  );
  // a client that never reads its answer does not keep the socket either
  setTimeout(() => socket.destroy(), 1_000).unref();
}
