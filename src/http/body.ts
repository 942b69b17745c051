import express, { type RequestHandler } from 'express';
import { AppError } from '../errors.js';

export const BODY_LIMIT = '1mb';

const hasBody = (req: { headers: Record<string, unknown> }) =>
  Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;

/** The Content-Types of YAML bodies, for the routes that take them (yamlText). */
export const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];

const baseType = (req: { headers: Record<string, unknown> }) => String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

export const isYaml = (req: { headers: Record<string, unknown> }) => YAML_TYPES.includes(baseType(req));

/** Requests whose body a route's own parser has read: jsonBody leaves them alone. */
const readByRoute = new WeakSet<object>();

/**
 * A YAML body as text (`req.body`, at most 1 MiB, as a JSON body), for a route that takes YAML; the
 * route parses it (src/blueprints/egg-yaml.ts). Bodies of other types go on to jsonBody.
 */
export function yamlText(): RequestHandler {
  const read = express.text({ limit: BODY_LIMIT, type: () => true });
  return (req, res, next) => {
    if (!hasBody(req) || !isYaml(req)) return next();
    read(req, res, (err?: unknown) => {
      if (err) return next(err);
      readByRoute.add(req);
      next();
    });
  };
}

/**
 * JSON bodies only, at most 1 MiB, and an object at the top: anything else is a 400 BAD_REQUEST
 *. Requests without a body are fine (the service then reports missing fields).
 */
export function jsonBody(): RequestHandler[] {
  const parse = express.json({ limit: BODY_LIMIT, strict: false, type: () => true });
  return [
    (req, _res, next) => {
      if (!hasBody(req) || req.method === 'GET' || req.method === 'HEAD' || readByRoute.has(req)) return next();
      const type = baseType(req);
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
