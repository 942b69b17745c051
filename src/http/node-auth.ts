/** Authenticates node agents calling the panel (HPN1 signed requests; see shared/node-protocol). */
import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { Node } from '../entities/Node.js';
import { AppError } from '../errors.js';
import type { AgentClient } from '../nodes/agent-client.js';
import type Redis from 'ioredis';
import { MAX_CLOCK_SKEW_SECONDS, NonceCache, parseAuthHeader, verifyRequest, type ParsedAuth } from '../shared/node-protocol.js';
import { isUuid } from '../validation/common.js';
import { clientAddress } from './client-address.js';

declare module 'http' {
  interface IncomingMessage {
    /** The node whose signed request this is (after authenticateNode). */
    node?: Node;
    /** The request's signature header and the registered node it names (after nodeHeaderCheck). */
    signedBy?: { parsed: ParsedAuth; node: Node };
  }
}

/** Failed node signatures an address may make in a minute before its requests are refused unread. */
export const NODE_AUTH_FAILURES_PER_MINUTE = 20;

/**
 * Counts failed node signatures per client address: past the limit, the address's requests to the
 * node routes are refused (429) before their header is looked at or their body read.
 */
export class NodeAuthFailures {
  private readonly failures = new RateLimiterMemory({ keyPrefix: 'node-auth-failures', points: NODE_AUTH_FAILURES_PER_MINUTE, duration: 60 });

  async refuseIfOver(req: IncomingMessage): Promise<void> {
    const res = await this.failures.get(clientAddress(req));
    if (res && res.consumedPoints >= NODE_AUTH_FAILURES_PER_MINUTE) {
      const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      throw new AppError('RATE_LIMITED', `Too many failed node signatures from this address. Try again in ${retryAfter} seconds.`, { retryAfter });
    }
  }

  async failed(req: IncomingMessage): Promise<void> {
    await this.failures.penalty(clientAddress(req), 1);
  }
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
export function nodeHeaderCheck(findNode: (id: string) => Promise<Node | null>, failures: NodeAuthFailures): RequestHandler {
  return async (req, _res, next) => {
    try {
      await failures.refuseIfOver(req);
      const parsed = parseAuthHeader(req.headers.authorization);
      const fresh = parsed && Math.abs(Math.floor(Date.now() / 1000) - parsed.ts) <= MAX_CLOCK_SKEW_SECONDS;
      const node = parsed && fresh && isUuid(parsed.nodeId) ? await findNode(parsed.nodeId) : null;
      if (!parsed || !node) {
        await failures.failed(req);
        throw AppError.unauthorized('A signed node request is required.');
      }
      req.signedBy = { parsed, node };
      next();
    } catch (err) {
      next(err);
    }
  };
}

/**
 * After the body, read as raw bytes (req.body, a Buffer): the signature over those bytes, and a nonce
 * no instance has seen; only then is the body parsed as JSON. Sets `req.node`.
 */
export function authenticateNode(agents: AgentClient, failures: NodeAuthFailures, shared?: SharedNonces): RequestHandler {
  const nonces = new NonceCache();
  return async (req, _res, next) => {
    try {
      const signed = req.signedBy;
      const key = signed ? agents.nodeKey(signed.node) : null;
      const raw: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      if (
        !signed ||
        !key ||
        !verifyRequest(signed.parsed, key, req.method, req.originalUrl, raw, nonces) ||
        !(await firstUseEverywhere(shared, signed.node.id, signed.parsed.nonce))
      ) {
        await failures.failed(req);
        throw AppError.unauthorized('Invalid, expired or replayed node signature.');
      }
      req.node = signed.node;
      req.body = parseSignedJson(raw);
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** The JSON of a verified body (empty: `{}`); malformed JSON is a 400. */
function parseSignedJson(raw: Buffer): unknown {
  if (!raw.length) return {};
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw AppError.badRequest('Malformed JSON body.');
  }
}
