/**
 * What the nodes must hear even when one cannot be reached at that moment: revocations (an account's
 * or a subuser's rights taken away, src/services/accounts.service.ts and power.service.ts). A notice a
 * node could not be given is kept in `node_notices`, in the database the gateway instances share, and
 * given again after a heartbeat of that node, in the order they were made, until the node takes it.
 * A node that sends heartbeats but still cannot be reached (a firewall on its port, a wrong address) is
 * tried again after RETRY_MIN_MS, then twice as long each time up to RETRY_MAX_MS: each failed call marks
 * it offline, and its next heartbeat online again. A node's notices go with the node; one older than
 * NOTICE_MAX_AGE_DAYS is dropped unsent (the sessions it was to end have ended with their tokens'
 * lifetime or an agent restart long before), and a node with no token yet is told nothing (it runs no
 * agent the panel can have given rights to).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { readRows } from '../db/read-rows.js';
import { Node } from '../entities/Node.js';
import { AppError } from '../errors.js';
import { childLogger } from '../logger.js';
import type { AgentClient } from './agent-client.js';

const log = childLogger('node-notices');

export const NOTICE_MAX_AGE_DAYS = 30;
/** Notices sent after one heartbeat at most; the rest wait for the next. */
const NOTICES_PER_HEARTBEAT = 100;
export const RETRY_MIN_MS = 5_000;
export const RETRY_MAX_MS = 5 * 60_000;

export class NodeNotices {
  /** Nodes whose kept notices this instance is sending now (a slow node is not sent the same twice at once). */
  private readonly sending = new Set<string>();
  /** Nodes that did not take their kept notices lately: when to try again, and the wait after that. */
  private readonly retry = new Map<string, { at: number; waitMs: number }>();

  constructor(
    private readonly orm: MikroORM,
    private readonly agents: AgentClient,
  ) {}

  /** POSTs `body` to the node's `path`; when the node cannot be reached, keeps it for the node's next heartbeat. */
  async tell(node: Node, path: string, body: Record<string, unknown>, what: string): Promise<void> {
    try {
      await this.agents.call(node, 'POST', path, body);
    } catch (err) {
      if (!unreachable(err) || !node.keyEnc) {
        log.warn({ nodeId: node.id, path, err: (err as Error).message }, what);
        return;
      }
      log.warn({ nodeId: node.id, path, err: (err as Error).message }, `${what}: kept for the node's next heartbeat`);
      await this.keep(node.id, path, body);
    }
  }

  /** tell() every node that has a token, at once. */
  async tellEveryNode(path: string, body: Record<string, unknown>, what: string): Promise<void> {
    const nodes = await this.orm.em.fork().find(Node, { tokenHash: { $ne: null } });
    await Promise.all(nodes.map((node) => this.tell(node, path, body, what)));
  }

  /**
   * After a heartbeat of `node`. A notice is kept only when a call to the node failed, which marks it
   * offline: its next heartbeat comes back from offline, and the one after a failed retry too. Other
   * heartbeats cost no query, but on the instance that is waiting to try again.
   */
  afterHeartbeat(node: Node, cameBack: boolean): Promise<number> {
    return cameBack || this.retry.has(node.id) ? this.sendKept(node) : Promise.resolve(0);
  }

  /** Sends what `node` was not told, oldest first, until one fails. Returns how many it took. */
  private async sendKept(node: Node): Promise<number> {
    if (this.sending.has(node.id) || (this.retry.get(node.id)?.at ?? 0) > Date.now()) return 0;
    this.sending.add(node.id);
    try {
      return await this.sendKeptNow(node);
    } finally {
      this.sending.delete(node.id);
    }
  }

  /** The node did not take a kept notice: wait before trying again, twice as long as the last time. */
  private backOff(nodeId: string): void {
    const waitMs = Math.min(RETRY_MAX_MS, (this.retry.get(nodeId)?.waitMs ?? RETRY_MIN_MS / 2) * 2);
    this.retry.set(nodeId, { at: Date.now() + waitMs, waitMs });
  }

  private async sendKeptNow(node: Node): Promise<number> {
    await this.purgeStale();
    const rows = await readRows<{ id: string; path: string; body: Record<string, unknown> }>(
      this.orm,
      `select id, path, body from node_notices where node_id = $1 order by id limit ${NOTICES_PER_HEARTBEAT}`,
      [node.id],
    );
    let taken = 0;
    for (const row of rows) {
      try {
        await this.agents.call(node, 'POST', row.path, row.body);
        taken++;
      } catch (err) {
        if (unreachable(err)) {
          this.backOff(node.id);
          return taken;
        }
        log.warn({ nodeId: node.id, path: row.path, err: (err as Error).message }, 'the node refused a kept notice: dropped');
      }
      await readRows(this.orm, 'delete from node_notices where id = $1', [row.id]);
    }
    this.retry.delete(node.id);
    if (taken) log.info({ nodeId: node.id, notices: taken }, 'the node took what it was not told while it could not be reached');
    return taken;
  }

  /** Drops the notices older than NOTICE_MAX_AGE_DAYS, of every node. */
  private async purgeStale(): Promise<void> {
    await readRows(this.orm, `delete from node_notices where created_at < now() - interval '${NOTICE_MAX_AGE_DAYS} days'`);
  }

  private async keep(nodeId: string, path: string, body: Record<string, unknown>): Promise<void> {
    try {
      await readRows(this.orm, 'insert into node_notices (node_id, path, body) values ($1, $2, $3)', [nodeId, path, JSON.stringify(body)]);
      // the notices of nodes that never came back (decommissioned, not deleted) do not pile up
      await this.purgeStale();
    } catch (err) {
      log.error({ nodeId, path, err: (err as Error).message }, 'could not keep a notice for a node that cannot be reached: it will not be told');
    }
  }
}

/** The node did not take the call (cannot be reached, timed out, answered 5xx): worth sending again. */
function unreachable(err: unknown): boolean {
  return err instanceof AppError && err.code === 'NODE_UNAVAILABLE';
}
