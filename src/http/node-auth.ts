/** Authenticates node agents calling the panel (HPN1 signed requests; see shared/node-protocol). */
import type { IncomingMessage } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { RequestHandler } from 'express';
import { Node } from '../entities/Node.js';
import { AppError } from '../errors.js';
import type { AgentClient } from '../nodes/agent-client.js';
import { NonceCache, parseAuthHeader, verifyRequest } from '../shared/node-protocol.js';

declare module 'http' {
  interface IncomingMessage {
    node?: Node;
    rawBody?: Buffer;
  }
}

export function keepRawBody(req: IncomingMessage, _res: unknown, buf: Buffer): void {
  req.rawBody = buf;
}

export function authenticateNode(orm: MikroORM, agents: AgentClient): RequestHandler {
  const nonces = new NonceCache();
  return async (req, _res, next) => {
    try {
      const parsed = parseAuthHeader(req.headers.authorization);
      if (!parsed || !/^[0-9a-f-]{36}$/i.test(parsed.nodeId)) throw AppError.unauthorized('A signed node request is required.');
      const node = await orm.em.findOne(Node, { id: parsed.nodeId });
      const key = node ? agents.nodeKey(node) : null;
      if (!node || !key || !verifyRequest(parsed, key, req.method, req.originalUrl, req.rawBody ?? '', nonces)) {
        throw AppError.unauthorized('Invalid, expired or replayed node signature.');
      }
      req.node = node;
      next();
    } catch (err) {
      next(err);
    }
  };
}
