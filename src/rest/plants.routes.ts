/**
 * The plant store (seed 001, CONTRACT §7): `POST /plants` at the root, no envelope. A bearer token is
 * required (session or API token of the platform); rate limited in the general bucket with the
 * X-RateLimit headers. Every error is `{ "error": <status>, "message": "..." }`.
 */
import express, { Router, type ErrorRequestHandler, type RequestHandler } from 'express';
import { AppError } from '../errors.js';
import { credentialOf } from '../http/auth.js';
import { BODY_LIMIT } from '../http/body.js';
import { resolveError } from '../http/errors.js';
import { rateLimit } from '../http/limit-middleware.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { Services } from '../services/index.js';

/** The plant Error shape; statuses other than 401/404/429/500 are folded into 400. */
export function plantError(err: AppError): { status: number; body: { error: number; message: string } } {
  const status = [400, 401, 404, 429, 500].includes(err.status) ? err.status : err.status >= 500 ? 500 : 400;
  return { status, body: { error: status, message: err.message } };
}

export function plantsRoutes(services: Services, limiter: RateLimiter): Router {
  const r = Router();

  // Bearer tokens only (the seed's security scheme); the cookie is not a credential here.
  const authenticate: RequestHandler = async (req, _res, next) => {
    try {
      const cred = credentialOf(req);
      req.actor = cred?.via === 'bearer' && cred.secret ? await services.auth.authenticate(cred.secret) : null;
      req.credentialVia = req.actor ? 'bearer' : null;
      next();
    } catch (err) {
      next(err);
    }
  };
  const rawJson: RequestHandler = (req, res, next) => {
    const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json' && !type.endsWith('+json')) {
      return next(AppError.badRequest('The request body must be JSON with Content-Type: application/json.'));
    }
    express.text({ type: () => true, limit: BODY_LIMIT })(req, res, next);
  };
  const requireBearer: RequestHandler = (req, _res, next) =>
    next(req.actor ? undefined : AppError.unauthorized('A valid bearer token is required: Authorization: Bearer <token>.'));

  r.use(authenticate);
  r.use(rateLimit(limiter, () => 'general'));
  r.post('/', requireBearer, rawJson, async (req, res) => {
    res.status(200).json(await services.plants.create(req.actor ?? null, req.body));
  });
  r.use((req, res) => {
    const { status, body } = plantError(new AppError('NOT_FOUND', `No route for ${req.method} ${req.baseUrl}${req.path}.`));
    res.status(status).json(body);
  });
  const onError: ErrorRequestHandler = (err, req, res, _next) => {
    const { status, body } = plantError(resolveError(err, { reqId: req.id, method: req.method, url: req.originalUrl }));
    if (res.headersSent) return res.end();
    res.status(status).json(body);
  };
  r.use(onError);
  return r;
}
