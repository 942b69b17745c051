import express, { type RequestHandler } from 'express';
import { AppError } from '../errors.js';

export const BODY_LIMIT = '1mb';

const hasBody = (req: { headers: Record<string, unknown> }) =>
  Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;

/**
 * JSON bodies only, at most 1 MiB, and an object at the top: anything else is a 400 BAD_REQUEST
 *. Requests without a body are fine (the service then reports missing fields).
 */
export function jsonBody(): RequestHandler[] {
  const parse = express.json({ limit: BODY_LIMIT, strict: false, type: () => true });
  return [
    (req, _res, next) => {
      if (!hasBody(req) || req.method === 'GET' || req.method === 'HEAD') return next();
      const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/json' && !type.endsWith('+json')) {
        return next(AppError.badRequest('Request bodies must be JSON with Content-Type: application/json.'));
      }
      parse(req, _res, (err?: unknown) => {
        if (err) return next(err);
        const b = req.body as unknown;
        if (b === null || typeof b !== 'object' || Array.isArray(b)) {
          return next(AppError.badRequest('The request body must be a JSON object.'));
        }
        next();
      });
    },
  ];
}
