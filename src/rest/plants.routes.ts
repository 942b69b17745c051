/**
 * The plant store (docs/protocol-edges.md): `POST /plants` at the root, no envelope. A bearer token is
 * required (session or API token of the platform); rate limited in the general bucket with the
 * X-RateLimit headers. Every error is `{ "error": <status>, "message": "..." }`.
 */
import express, { Router, type RequestHandler } from 'express';
import { AppError } from '../errors.js';
import { authenticateRequest } from '../http/auth.js';
import { BODY_LIMIT } from '../http/body.js';
import { errorHandler, notFoundHandler, renderPlantError } from '../http/errors.js';
import { rateLimit } from '../http/limit-middleware.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { Services } from '../services/index.js';

export function plantsRoutes(services: Services, limiter: RateLimiter): Router {
  const r = Router();

  // Bearer tokens only (the documented scheme of the plant store); the cookie is not a credential here.
  const authenticate: RequestHandler = async (req, _res, next) => {
    try {
      const found = await authenticateRequest(services.auth, req, { bearerOnly: true });
      req.actor = found.actor;
      req.credentialVia = found.via;
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
  r.use(rateLimit(limiter)); // the general bucket (no operation of /api/v1 has this path)
  r.post('/', requireBearer, rawJson, async (req, res) => {
    res.status(200).json(await services.plants.create(req.actor ?? null, req.body));
  });
  r.use(notFoundHandler(renderPlantError));
  r.use(errorHandler(renderPlantError));
  return r;
}
