/** Authenticates node agents calling the panel (HPN1 signed requests; see shared/node-protocol). */
import type { IncomingMessage } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { RequestHandler } from 'express';
import { Node } from '../entities/Node.js';
import { AppError } from '../errors.js';
import type { AgentClient } from '../nodes/agent-client.js';
import type Redis from 'ioredis';
import { MAX_CLOCK_SKEW_SECONDS, NonceCache, parseAuthHeader, verifyRequest, type ParsedAuth } from '../shared/node-protocol.js';
import { isUuid } from '../validation/common.js';

declare module 'http' {
  interface IncomingMessage {
    /** The node whose signed request this is (after authenticateNode). */
    node?: Node;
    /** The request's signature header and the registered node it names (after nodeHeaderCheck). */
    signedBy?: { parsed: ParsedAuth; node: Node };
    rawBody?: Buffer;
  }
}

export function keepRawBody(req: IncomingMessage, _res: unknown, buf: Buffer): void {
  req.rawBody = buf;
}

/**
 * Nonces seen by any gateway instance (Redis `SET NX`, kept a little longer than a signature is
 * fresh): a request one instance took cannot be replayed to another. When Redis does not answer,
 * each instance's own cache still holds.
 */
export interface SharedNonces {
  redis: Redis;
  namespace: string;
}

async function firstUseEverywhere(shared: SharedNonces | undefined, nodeId: string, nonce: string): Promise<boolean> {
  if (!shared || shared.redis.status !== 'ready') return true;
  try {
    const set = await shared.redis.set(`hostpanel:${shared.namespace}:node-nonce:${nodeId}:${nonce}`, '1', 'EX', MAX_CLOCK_SKEW_SECONDS * 2 + 10, 'NX');
    return set === 'OK';
  } catch {
    return true;
  }
}

/**
 * Before the body is read: a well-formed HPN1 header, signed within the allowed skew, of a registered
 * node. The node is kept for `authenticateNode`, which checks the signature once the body is in.
 */
export function nodeHeaderCheck(orm: MikroORM): RequestHandler {
  return async (req, _res, next) => {
    try {
      const parsed = parseAuthHeader(req.headers.authorization);
      const fresh = parsed && Math.abs(Math.floor(Date.now() / 1000) - parsed.ts) <= MAX_CLOCK_SKEW_SECONDS;
      const node = parsed && fresh && isUuid(parsed.nodeId) ? await orm.em.findOne(Node, { id: parsed.nodeId }) : null;
      if (!parsed || !node) throw AppError.unauthorized('A signed node request is required.');
      req.signedBy = { parsed, node };
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** After the body: the signature over it, and a nonce no instance has seen. Sets `req.node`. */
export function authenticateNode(agents: AgentClient, shared?: SharedNonces): RequestHandler {
  const nonces = new NonceCache();
  return async (req, _res, next) => {
    try {
      const signed = req.signedBy;
      const key = signed ? agents.nodeKey(signed.node) : null;
      if (
        !signed ||
        !key ||
        !verifyRequest(signed.parsed, key, req.method, req.originalUrl, req.rawBody ?? '', nonces) ||
        !(await firstUseEverywhere(shared, signed.node.id, signed.parsed.nonce))
      ) {
        throw AppError.unauthorized('Invalid, expired or replayed node signature.');
      }
      req.node = signed.node;
      next();
    } catch (err) {
      next(err);
    }
  };
}
