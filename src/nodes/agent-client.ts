/**
 * Panel -> node agent: signed HTTP calls (HPN1, see shared/node-protocol) with a hard 2-second budget.
 * Any failure to reach the agent is an AppError NODE_UNAVAILABLE; the node is marked offline.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Node } from '../entities/Node.js';
import { AppError } from '../errors.js';
import { childLogger } from '../logger.js';
import type { MasterKey } from '../security/master-key.js';
import { signRequest } from '../shared/node-protocol.js';

const log = childLogger('agent-client');
export const AGENT_TIMEOUT_MS = 2000;

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
    if (res.status === 401) {
      log.warn({ node: node.id }, 'the node agent refused our signature (rotated token not given to the agent?)');
      throw AppError.nodeUnavailable('The node agent refused the panel: its node token is out of date.');
    }
    if (!res.ok) {
      const code = json?.error?.code;
      const message = typeof json?.error?.message === 'string' ? json.error.message : `The node agent answered ${res.status}.`;
      // only the agent's own NOT_FOUND means "not on this node" (which lets a delete go ahead): any
      // other 404 comes from something else at the node's address (a proxy, another program)
      if (res.status === 404 && code === 'NOT_FOUND') throw AppError.notFound('Server on its node');
      if (res.status === 404) throw AppError.nodeUnavailable(`The node's address answers HTTP 404 but not as a node agent: check its fqdn and port.`);
      if (res.status === 422 && typeof code === 'string') {
        throw code === 'INVALID_STATE' ? AppError.invalidState(message) : new AppError('INVALID_STATE', message, { agentCode: code });
      }
      throw AppError.nodeUnavailable(message);
    }
    return (json?.data ?? null) as T | null;
  }

  private async markOffline(nodeId: string): Promise<void> {
    await this.orm.em.fork().nativeUpdate(Node, { id: nodeId, status: 'online' }, { status: 'offline' }).catch(() => undefined);
  }
}
