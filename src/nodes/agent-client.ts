/**
 * Panel -> node agent: signed HTTP calls (HPN1, see shared/node-protocol) with a hard 2-second budget.
 * Any failure to reach the agent is an AppError NODE_UNAVAILABLE; the node is marked offline.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Node } from '../entities/Node.js';
import { AppError, type ErrorCode } from '../errors.js';
import { childLogger } from '../logger.js';
import type { MasterKey } from '../security/master-key.js';
import http from 'node:http';
import https from 'node:https';
import { finished, Readable } from 'node:stream';
import { signRequest, STREAMED_BODY } from '../shared/node-protocol.js';

const log = childLogger('agent-client');
export const AGENT_TIMEOUT_MS = 2000;

/** The agent's 422 codes that are the panel's own too (the file manager's): passed on as they are. */
const PASSED_THROUGH: ReadonlySet<string> = new Set<ErrorCode>(['INVALID_PATH', 'DISK_LIMIT', 'FILE_TOO_LARGE', 'INVALID_ARCHIVE', 'ALREADY_EXISTS', 'VALIDATION_ERROR']);

export class AgentClient {
  constructor(
    private readonly orm: MikroORM,
    private readonly masterKey: MasterKey,
  ) {}

  /** The node's request-signing key K, or null when no token was ever issued. */
  nodeKey(node: Pick<Node, 'keyEnc'>): Buffer | null {
    if (!node.keyEnc) return null;
    try {
      return this.masterKey.decrypt(node.keyEnc);
    } catch {
      log.error('a node key could not be decrypted: is DATA_DIR/keys/master.key the one that sealed it?');
      return null;
    }
  }

  baseUrl(node: Pick<Node, 'scheme' | 'fqdn' | 'port'>): string {
    const host = node.fqdn.includes(':') ? `[${node.fqdn}]` : node.fqdn;
    return `${node.scheme}://${host}:${node.port}`;
  }

  consoleUrl(node: Pick<Node, 'scheme' | 'fqdn' | 'port'>): string {
    const host = node.fqdn.includes(':') ? `[${node.fqdn}]` : node.fqdn;
    return `${node.scheme === 'https' ? 'wss' : 'ws'}://${host}:${node.port}/console`;
  }

  /**
   * A signed JSON request to the agent. Resolves with the parsed `data` of a 2xx answer (or null for
   * 204); agent 4xx errors come back as AppError with the agent's code when it is one of ours.
   */
  async call<T = unknown>(node: Node, method: string, path: string, body?: unknown, timeoutMs = AGENT_TIMEOUT_MS): Promise<T | null> {
    const key = this.nodeKey(node);
    if (!key) throw AppError.nodeUnavailable('This node has no token yet: generate one with POST /admin/nodes/:id/token and give it to its agent.');
    const text = body === undefined ? '' : JSON.stringify(body);
    let res: Response;
    try {
      res = await fetch(this.baseUrl(node) + path, {
        method,
        headers: {
          authorization: signRequest(node.id, key, method, path, text),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : text,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      log.warn({ node: node.id, path, err: (err as Error).message }, 'node agent unreachable');
      await this.markOffline(node.id);
      throw AppError.nodeUnavailable();
    }
    const raw = await res.text().catch(() => '');
    let json: any = null;
    try {
      json = raw ? JSON.parse(raw) : null;
    } catch {
      json = null;
    }
    if (!res.ok) throw this.failure(node, res.status, json);
    return (json?.data ?? null) as T | null;
  }

  /**
   * A signed request whose answer is streamed back (file contents, downloads) or whose body is
   * streamed (a file write, signed as STREAMED_BODY). Resolves with the agent's 2xx response once its
   * headers are in (within `headersTimeoutMs`); errors as in call().
   */
  async stream(node: Node, method: string, path: string, opts: { body?: Readable; headers?: Record<string, string>; headersTimeoutMs?: number } = {}): Promise<NodeAnswer> {
    const key = this.nodeKey(node);
    if (!key) throw AppError.nodeUnavailable('This node has no token yet: generate one with POST /admin/nodes/:id/token and give it to its agent.');
    let res: NodeAnswer;
    try {
      const headers = { authorization: signRequest(node.id, key, method, path, opts.body ? STREAMED_BODY : ''), ...opts.headers };
      // a write's answer comes once all its bytes are sent: only a read's headers are timed
      res = await exchange(this.baseUrl(node) + path, method, headers, opts.body, opts.body ? null : (opts.headersTimeoutMs ?? AGENT_TIMEOUT_MS * 5));
    } catch (err) {
      if (opts.body?.destroyed || (opts.body as { aborted?: boolean } | undefined)?.aborted) throw AppError.badRequest('The upload was cut off before it ended.');
      log.warn({ node: node.id, path, err: (err as Error).message }, 'node agent unreachable');
      await this.markOffline(node.id);
      throw AppError.nodeUnavailable();
    }
    if (res.status >= 200 && res.status < 300) return res;
    const json = await res.json().catch(() => null);
    throw this.failure(node, res.status, json);
  }

  /** The AppError of an agent's error answer. */
  private failure(node: Node, status: number, json: any): AppError {
    const res = { status };
    if (res.status === 401) {
      log.warn({ node: node.id }, 'the node agent refused our signature (rotated token not given to the agent?)');
      return AppError.nodeUnavailable('The node agent refused the panel: its node token is out of date.');
    }
    const code = json?.error?.code;
    const message = typeof json?.error?.message === 'string' ? json.error.message : `The node agent answered ${res.status}.`;
    // only the agent's own NOT_FOUND means "not on this node" (which lets a delete go ahead): any
    // other 404 comes from something else at the node's address (a proxy, another program)
    if (res.status === 404 && code === 'NOT_FOUND') return new AppError('NOT_FOUND', message);
    if (res.status === 404) return AppError.nodeUnavailable(`The node's address answers HTTP 404 but not as a node agent: check its fqdn and port.`);
    // the node's file worker found that a path leads, through a link, out of the caller's reach
    if (res.status === 403 && code === 'FORBIDDEN') return AppError.forbidden(message);
    if (res.status === 422 && typeof code === 'string') {
      if (PASSED_THROUGH.has(code)) return new AppError(code as ErrorCode, message, json?.error?.details ?? {});
      return code === 'INVALID_STATE' ? AppError.invalidState(message) : new AppError('INVALID_STATE', message, { agentCode: code });
    }
    return AppError.nodeUnavailable(message);
  }

  private async markOffline(nodeId: string): Promise<void> {
    await this.orm.em.fork().nativeUpdate(Node, { id: nodeId, status: 'online' }, { status: 'offline' }).catch(() => undefined);
  }
}

/** A node's answer to a streamed request: its status and headers, and its body as it comes. */
export interface NodeAnswer {
  status: number;
  header(name: string): string | null;
  body: Readable;
  json<T = any>(): Promise<T>;
  bytes(): Promise<Buffer>;
}

function answerOf(res: http.IncomingMessage): NodeAnswer {
  const bytes = async () => {
    const chunks: Buffer[] = [];
    for await (const c of res as AsyncIterable<Buffer>) chunks.push(c);
    return Buffer.concat(chunks);
  };
  return {
    status: res.statusCode ?? 502,
    header: (name) => {
      const v = res.headers[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    },
    body: res,
    bytes,
    json: async () => JSON.parse((await bytes()).toString('utf8')),
  };
}

/**
 * One request to the node with node:http, the body (if any) streamed: the body is read only as fast
 * as the node takes it (fetch read a fast client's whole upload into memory: +550 MiB for 512 MiB,
 * measured in bench/lib/files-bench.js), and the answer's body is a plain stream. Resolves as soon as
 * the answer's headers come, even before the body is all sent (a refusal); a body that ends early
 * (the client gone) aborts the request; without a body, no headers within `headersTimeoutMs` does.
 */
function exchange(url: string, method: string, headers: Record<string, string>, body: Readable | undefined, headersTimeoutMs: number | null): Promise<NodeAnswer> {
  const target = new URL(url);
  const request = target.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = request(target, { method, headers: body ? { ...headers, 'transfer-encoding': 'chunked' } : headers }, (res) => {
      if (timer) clearTimeout(timer);
      resolve(answerOf(res));
    });
    const timer = headersTimeoutMs === null ? null : setTimeout(() => req.destroy(new Error('the node did not answer in time')), headersTimeoutMs);
    req.on('error', (err) => {
      if (timer) clearTimeout(timer);
      reject(err);
    });
    if (!body) return void req.end();
    // (finished also answers for a body that was destroyed before this request began)
    finished(body, (err) => err && req.destroy(err));
    body.pipe(req);
  });
}
