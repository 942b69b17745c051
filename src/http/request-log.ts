/**
 * One structured log line per request, written when the answer is finished or the connection closes:
 * `{ req: { id, method, url }, res: { statusCode }, responseTime }` with "request completed",
 * "request aborted" or "request errored", at debug for 1xx–3xx, info for 4xx, error for 5xx. A failed
 * request's line carries its real cause (`err`) when an error handler resolved one (src/http/errors.ts),
 * also when the error came after its status was sent (a download cut short): one line per failed
 * request, with both what failed and why.
 * Gives every request its id (`req.id`, echoed in X-Request-Id). Nothing is built for a line the
 * logger's level leaves out: the hottest routes pay for an id and two listeners.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { causeOf } from './errors.js';
import { requestId } from './request-id.js';

declare module 'http' {
  interface IncomingMessage {
    /** The request's id (X-Request-Id), set by {@link requestLog}. */
    id?: string;
  }
}

type Level = 'debug' | 'info' | 'error';

/** Failed: a 5xx, or an error after the answer had begun (its status already sent). */
function levelOf(res: ServerResponse, failed: boolean): Level {
  return failed || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'info' : 'debug';
}

function messageOf(req: IncomingMessage, res: ServerResponse, failed: boolean): string {
  if (failed || res.statusCode >= 500) return 'request errored';
  return !req.readableAborted && res.writableEnded ? 'request completed' : 'request aborted';
}

export function requestLog(log: Logger): RequestHandler {
  return (req, res, next) => {
    const id = requestId(req, res);
    req.id = id;
    const start = Date.now();
    const done = () => {
      res.removeListener('finish', done);
      res.removeListener('close', done);
      const err = causeOf(res);
      const level = levelOf(res, err !== undefined);
      if (!log.isLevelEnabled(level)) return;
      const line = { req: { id, method: req.method, url: req.originalUrl }, res: { statusCode: res.statusCode }, responseTime: Date.now() - start };
      log[level](err === undefined ? line : { ...line, err }, messageOf(req, res, err !== undefined));
    };
    res.on('finish', done);
    res.on('close', done);
    next();
  };
}
