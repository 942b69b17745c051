/** Authenticates node agents calling the panel (HPN1 signed requests; see shared/node-protocol). */
import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import type Redis from 'ioredis';
import type { Node } from '../entities/Node.js';
import { AppError } from '../errors.js';
import type { AgentClient } from '../nodes/agent-client.js';
import { FailureCounts } from '../services/signin-throttle.js';
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
 * node routes are refused (429) before their header is looked at or their body read. With several
 * gateway instances (REDIS_URL) the counts are kept in Redis, for all of them together (in memory on
 * each instance while Redis does not answer: src/services/signin-throttle.ts).
 */
export class NodeAuthFailures {
  private readonly failures = new FailureCounts({ keyPrefix: 'node-auth-failures', points: NODE_AUTH_FAILURES_PER_MINUTE, duration: 60 });

  /** Count in `redis`, shared by the instances of one platform (`namespace`). */
  share(redis: Redis, namespace: string): void {
    this.failures.share(redis, namespace);
  }

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
 * Several gateway instances (REDIS_URL set): `firstUse` records a node's nonce where every instance
 * sees it (src/services/node-nonces.ts) and tells whether it was new; `redis` is where the failed
 * signatures are counted, `namespace` names the platform's keys there.
 */
export interface SharedNonces {
  firstUse(nodeId: string, nonce: string): Promise<boolean>;
  redis: Redis;
  namespace: string;
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
 * not seen before; only then is the body parsed as JSON. Sets `req.node`. A nonce is checked against
 * this process's cache (a replay to the same instance costs no query) and, with several gateway
 * instances (`shared`), recorded in the database they share: a request one instance took is refused
 * by every other, whatever the state of Redis. Without `shared` (one instance) the cache is the record.
 * `shared` also moves the failure counts of `failures` to Redis.
 */
export function authenticateNode(agents: AgentClient, failures: NodeAuthFailures, shared?: SharedNonces): RequestHandler {
  const nonces = new NonceCache();
  if (shared) failures.share(shared.redis, shared.namespace);
  return async (req, _res, next) => {
    try {
      const signed = req.signedBy;
      const key = signed ? agents.nodeKey(signed.node) : null;
      const raw: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      if (
        !signed ||
        !key ||
        !verifyRequest(signed.parsed, key, req.method, req.originalUrl, raw, nonces) ||
        (shared && !(await shared.firstUse(signed.node.id, signed.parsed.nonce)))
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
