/**
 * The error renderers of the HTTP protocols, each written once: the platform's envelope
 * (`/api/v1`, `/api/agent/v1`, unknown paths) and the plant store's shape (`/plants`). GraphQL's is
 * src/resolvers/errors.ts; a raw HTTP answer on a socket (unparseable request, refused upgrade) is
 * src/http/client-errors.ts. Each protocol gets its 404 and error handler from the same two factories.
 */
import type { ServerResponse } from 'node:http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { AppError, toAppError } from '../errors.js';

export function errorBody(err: AppError) {
  return { error: { code: err.code, message: err.message, details: err.details ?? {} } };
}

/**
 * Maps the errors of reading a request to 400: body-parser's (malformed JSON, too large, bad
 * charset), zlib's (a body that does not match its Content-Encoding) and the router's URIError (a
 * path parameter with a broken percent-escape).
 */
export function fromBodyParserError(err: unknown): AppError | null {
  // a path parameter with a broken percent-escape (`/servers/%E0%A4%A`): Express's router throws this
  if (err instanceof URIError) return AppError.badRequest('The request path is not valid percent-encoding.');
  const e = err as { type?: string; status?: number; expose?: boolean; errno?: unknown; code?: unknown };
  if (!e || typeof e !== 'object') return null;
  // a body whose Content-Encoding (gzip, deflate, br) does not match its bytes: the body parser
  // passes zlib's own error on (it is the only place where this process inflates anything)
  if (typeof e.errno === 'number' && typeof e.code === 'string' && /^(Z_|ERR__ERROR_|ERR_BROTLI)/.test(e.code)) {
    return AppError.badRequest('The request body could not be decompressed (it does not match its Content-Encoding).');
  }
  if (typeof e.type !== 'string') return null;
  switch (e.type) {
    case 'entity.parse.failed':
      return AppError.badRequest('The request body is not valid JSON.');
    case 'entity.too.large':
      return AppError.badRequest('The request body is larger than 1 MiB.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return AppError.badRequest('The request body uses an unsupported encoding.');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return AppError.badRequest('The request body could not be read.');
    default:
      return e.status && e.status >= 400 && e.status < 500 ? AppError.badRequest('The request could not be read.') : null;
  }
}

const causes = new WeakMap<ServerResponse, unknown>();

/**
 * Resolves the error of an HTTP request to an AppError. The real cause of a 5xx (never sent) is kept for the
 * request's log line (src/http/request-log.ts), which writes it with the request, once.
 */
export function resolveRequestError(err: unknown, res: ServerResponse): AppError {
  const app = fromBodyParserError(err) ?? toAppError(err);
  if (app.status >= 500) causes.set(res, err);
  return app;
}

/** The cause of the request's 5xx answer, if an error handler resolved one. */
export function causeOf(res: ServerResponse): unknown {
  return causes.get(res);
}

/** How one protocol writes an error: its status and its JSON body. */
export type ErrorRenderer = (err: AppError) => { status: number; body: unknown };

export const renderApiError: ErrorRenderer = (err) => ({ status: err.status, body: errorBody(err) });

/** The plant store's shape `{ error: <status>, message }`; statuses other than 401/404/429/500 are folded into 400. */
export const renderPlantError: ErrorRenderer = (err) => {
  const status = [400, 401, 404, 429, 500].includes(err.status) ? err.status : err.status >= 500 ? 500 : 400;
  return { status, body: { error: status, message: err.message } };
};

export function errorHandler(render: ErrorRenderer): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const resolved = resolveRequestError(err, res);
    const { status, body } = render(resolved);
    if (res.headersSent) return res.end();
    // a refusal of a service's own throttle (not the rate-limit middleware's) says when to come back too
    const retryAfter = resolved.details.retryAfter;
    if (status === 429 && typeof retryAfter === 'number' && !res.getHeader('retry-after')) res.setHeader('Retry-After', String(retryAfter));
    res.status(status).json(body);
  };
}

export function notFoundHandler(render: ErrorRenderer): RequestHandler {
  return (req, res) => {
    const { status, body } = render(new AppError('NOT_FOUND', `No route for ${req.method} ${req.baseUrl}${req.path}.`));
    res.status(status).json(body);
  };
}

export const apiErrorHandler = errorHandler(renderApiError);
export const apiNotFound = notFoundHandler(renderApiError);
