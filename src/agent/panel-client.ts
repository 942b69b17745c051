import type { AgentEvent, NodeStats, ServerSpec, ServerStatus } from '../shared/node-protocol';
import { SERVER_STATUSES, signRequest } from '../shared/node-protocol';
import { childLogger } from '../logger';
import { SERVER_ID_RE } from './paths';

const log = childLogger('agent');

export interface PanelServerEntry {
  spec: ServerSpec;
  status: ServerStatus;
}

function isServerEntry(e: unknown): e is PanelServerEntry {
  const entry = e as Partial<PanelServerEntry> | null;
  return (
    typeof entry === 'object' && entry !== null && typeof entry.spec === 'object' && entry.spec !== null &&
    typeof entry.spec.id === 'string' && SERVER_ID_RE.test(entry.spec.id) && SERVER_STATUSES.includes(entry.status as ServerStatus)
  );
}

export interface PanelClientOptions {
  panelUrl: string;
  nodeId: string;
  nodeKey: Buffer;
  /** max queued events; the oldest are dropped beyond this (default 10000) */
  maxQueue?: number;
  /** max events per POST (default 500) */
  batchSize?: number;
  requestTimeoutMs?: number;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

export class PanelRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Agent → panel. Every request is signed (`HPN1`, see shared/node-protocol) over the path including
 * the query string. State events are queued and delivered in order, in batches, as soon as possible;
 * while the panel is down they are retried with exponential backoff (bounded queue, oldest dropped
 * first only when it overflows).
 */
export class PanelClient {
  private queue: AgentEvent[] = [];
  private sending = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private backoff: number;
  private closed = false;
  private readonly base: URL;
  private dropped = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly opts: PanelClientOptions) {
    this.base = new URL(opts.panelUrl.endsWith('/') ? opts.panelUrl : opts.panelUrl + '/');
    this.backoff = opts.minBackoffMs ?? 250;
  }

  /** Signed JSON request to `path` (e.g. `/api/agent/v1/events`), relative to the panel URL. */
  async request<T = unknown>(method: string, path: string, body?: unknown): Promise<T | null> {
    const url = new URL(path.replace(/^\//, ''), this.base);
    const text = body === undefined ? '' : JSON.stringify(body);
    const headers: Record<string, string> = {
      authorization: signRequest(this.opts.nodeId, this.opts.nodeKey, method, url.pathname + url.search, text),
      accept: 'application/json',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : text,
      signal: AbortSignal.timeout(this.opts.requestTimeoutMs ?? 5000),
    });
    const raw = await res.text();
    if (!res.ok) throw new PanelRequestError(res.status, `panel answered ${res.status} to ${method} ${url.pathname}: ${raw.slice(0, 200)}`);
    if (!raw) return null;
    try {
      return JSON.parse(raw) as T;
    } catch {
      return null;
    }
  }

  /**
   * The panel's complete list of this node's servers. The agent removes the servers it does not list:
   * an answer that is not a 2xx, not JSON, or has one entry that is not a server is an error, never a
   * shorter list.
   */
  async fetchServers(): Promise<PanelServerEntry[]> {
    const res = await this.request<{ data?: unknown }>('GET', '/api/agent/v1/servers');
    const data = res?.data;
    if (!Array.isArray(data)) throw new Error('panel sent no server list');
    if (!data.every(isServerEntry)) throw new Error('panel sent a server list with an entry that is not a server');
    return data;
  }

  /**
   * Live figures, and the SFTP server's port and host key fingerprint for the node's record. The
   * answer's `resync`: the node was offline for the panel, whose list of its servers may have changed.
   */
  async heartbeat(stats: NodeStats, sftp: { port: number; fingerprint: string } | null = null): Promise<{ resync: boolean }> {
    const res = await this.request<{ data?: { resync?: unknown } }>('POST', '/api/agent/v1/heartbeat', { stats, sftp });
    return { resync: res?.data?.resync === true };
  }

  /** Queues an event (a state change, a console action) and sends it right away (or as soon as the panel is reachable). */
  enqueue(event: AgentEvent): void {
    if (this.closed) return;
    this.queue.push(event);
    const max = this.opts.maxQueue ?? 10000;
    if (this.queue.length > max) {
      const n = this.queue.length - max;
      this.queue.splice(0, n);
      this.dropped += n;
      log.warn({ dropped: this.dropped }, 'panel event queue full; oldest events dropped');
    }
    if (!this.retryTimer) void this.flush();
  }

  get pending(): number {
    return this.queue.length;
  }

  private async flush(): Promise<void> {
    if (this.sending || this.closed) return;
    this.sending = true;
    try {
      while (this.queue.length > 0 && !this.closed) {
        const batch = this.queue.slice(0, this.opts.batchSize ?? 500);
        try {
          await this.request('POST', '/api/agent/v1/events', { events: batch });
        } catch (e) {
          const status = e instanceof PanelRequestError ? e.status : 0;
          if (status === 400 || status === 413 || status === 422) {
            // the panel will never accept this batch: do not block the queue forever
            log.error({ err: (e as Error).message, events: batch.length }, 'panel rejected state events; dropping them');
            this.queue.splice(0, batch.length);
            continue;
          }
          log.warn({ err: (e as Error).message, retryInMs: this.backoff, queued: this.queue.length }, 'could not deliver state events to the panel');
          this.scheduleRetry();
          return;
        }
        this.queue.splice(0, batch.length);
        this.backoff = this.opts.minBackoffMs ?? 250;
      }
      if (this.queue.length === 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const w of waiters) w();
      }
    } finally {
      this.sending = false;
    }
  }

  private scheduleRetry(): void {
    if (this.closed || this.retryTimer) return;
    const delay = this.backoff;
    this.backoff = Math.min(this.backoff * 2, this.opts.maxBackoffMs ?? 15000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.flush();
    }, delay);
  }

  /** Resolves when the queue is empty or after `timeoutMs`. */
  async drain(timeoutMs: number): Promise<boolean> {
    if (this.queue.length === 0 && !this.sending) return true;
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
      void this.flush();
    }
    return Promise.race([
      new Promise<boolean>((r) => this.idleWaiters.push(() => r(true))),
      new Promise<boolean>((r) => setTimeout(() => r(false), timeoutMs).unref()),
    ]);
  }

  close(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    for (const w of this.idleWaiters) w();
    this.idleWaiters = [];
  }
}
