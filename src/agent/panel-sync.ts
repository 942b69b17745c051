import { childLogger } from '../logger';
import type { PanelClient, PanelServerEntry } from './panel-client';
import type { ServerManager } from './server/manager';

const log = childLogger('agent');

/**
 * The panel's list of this node's servers, learnt at boot (state.json stands in while the panel cannot
 * be reached, and the list is asked for again until it answers), and again when a heartbeat's answer
 * asks for it (the node was offline for the panel) or follows a heartbeat that failed (whose answer may
 * have been such a request). Every complete list goes through ServerManager.reconcile, one after the
 * other.
 */
export class PanelSync {
  private timer: NodeJS.Timeout | null = null;
  private delay: number;
  private chain: Promise<void> = Promise.resolve();
  /** a fetch is waiting behind the one under way (more requests meanwhile need no other) */
  private queued = false;
  private missedHeartbeat = false;
  private closed = false;

  constructor(
    private readonly panel: PanelClient,
    private readonly manager: ServerManager,
    private readonly backoff: { minMs: number; maxMs: number },
  ) {
    this.delay = backoff.minMs;
  }

  /** Agent boot: the servers from the panel's list, or from state.json when the panel does not answer. */
  async boot(): Promise<void> {
    let list: PanelServerEntry[] | null = null;
    try {
      list = await this.panel.fetchServers();
    } catch (e) {
      log.warn({ err: (e as Error).message }, 'panel unreachable at boot; restoring servers from state.json and retrying');
    }
    await this.manager.restore(list);
    if (!list) this.retryLater();
  }

  heartbeatAnswered(answer: { resync: boolean }): void {
    if (answer.resync || this.missedHeartbeat) this.request();
    this.missedHeartbeat = false;
  }

  heartbeatFailed(): void {
    this.missedHeartbeat = true;
  }

  /** Fetches the panel's list again and reconciles, once the fetch under way (if any) is done. */
  request(): void {
    if (this.closed || this.queued) return;
    this.queued = true;
    this.chain = this.chain.then(() => {
      this.queued = false;
      return this.fetchAndReconcile().catch((err: Error) => log.error({ err: err.message }, 'could not synchronise the server list with the panel'));
    });
  }

  private async fetchAndReconcile(): Promise<void> {
    if (this.closed) return;
    // servers pushed from here on may be missing from the list: the panel reads it after this
    const since = this.manager.mark();
    let list: PanelServerEntry[];
    try {
      list = await this.panel.fetchServers();
    } catch (e) {
      log.debug({ err: (e as Error).message, retryInMs: this.delay }, 'could not fetch the server list from the panel');
      this.retryLater();
      return;
    }
    if (this.closed) return;
    await this.manager.reconcile(list, since);
    this.delay = this.backoff.minMs;
    log.info({ servers: list.length }, 'synchronised server list with the panel');
  }

  private retryLater(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.request();
    }, this.delay);
    this.delay = Math.min(this.delay * 2, this.backoff.maxMs);
  }

  /** Fetches no more; resolves once the reconcile under way (if any) is done. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.chain;
  }
}
