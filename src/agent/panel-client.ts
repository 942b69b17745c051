import { appendFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
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

/** A line of the queue file that can be sent: an object naming a server and a time (the panel checks the rest). */
function isEvent(e: unknown): e is AgentEvent {
  const o = e as { serverId?: unknown; at?: unknown; kind?: unknown; status?: unknown } | null;
  return typeof o === 'object' && o !== null && !Array.isArray(o) && typeof o.serverId === 'string' && typeof o.at === 'string' && (typeof o.kind === 'string' || typeof o.status === 'string');
}

export interface PanelClientOptions {
  panelUrl: string;
  nodeId: string;
  nodeKey: Buffer;
  /** max queued events; beyond this the oldest state events are dropped, reports last (default 10000) */
  maxQueue?: number;
  /**
   * The queue's file (`<DATA_DIR>/agent/panel-queue.jsonl`): every event is appended to it when it is
   * queued and taken out once the panel acknowledged it, and what it holds at start is sent first.
   * Without it the queue lives in memory only.
   */
  queueFile?: string;
  /** false: queued events wait for start() (default true: sent at once) */
  sendAtOnce?: boolean;
  /** max events per POST (default 500) */
  batchSize?: number;
  requestTimeoutMs?: number;
  /**
   * How long an activity report (a console command, an SFTP action) waits for others to go with it
   * (default REPORT_GATHER_MS); a state change or a backup's end is sent at once, with what waits.
   */
  reportGatherMs?: number;
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * What an activity report waits for company: a console typed into quickly, or a driver sending a
 * command a tick, makes one request (and one panel transaction) a fifth of a second instead of one a
 * command. The activity log shows an entry that much later.
 */
export const REPORT_GATHER_MS = 200;

const isActivity = (e: AgentEvent): boolean => 'kind' in e && e.kind === 'activity';

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
 * while the panel is down they are retried with exponential backoff (bounded queue: only when it
 * overflows, the oldest state events are dropped first, reports only when nothing else is left).
 *
 * With a queue file the queue survives the agent's death (SIGKILL too, not a power cut: nothing is
 * fsynced): an event is appended to the file (one line of JSON) before enqueue() returns, so what a
 * caller does after queueing a report (removing a backup's marker) happens only once the report is on
 * disk; a batch the panel acknowledged is taken out (the file is rewritten: temporary file + rename).
 * At start the file's events are queued again, ahead of anything new, and sent: an event may thus
 * reach the panel twice (the agent died between the panel's answer and the rewrite), which the panel
 * takes as it takes a repeated report. A line that is not an event (a torn last line, a damaged file)
 * is logged and left out.
 */
export class PanelClient {
  private queue: AgentEvent[] = [];
  private sending = false;
  private retryTimer: NodeJS.Timeout | null = null;
  /** While activity reports wait for company (see REPORT_GATHER_MS). */
  private gatherTimer: NodeJS.Timeout | null = null;
  private backoff: number;
  private closed = false;
  private readonly base: URL;
  private dropped = 0;
  private idleWaiters: (() => void)[] = [];
  /** lines in the queue file (the queue's events, and those dropped from memory but not yet from the file) */
  private fileLines = 0;
  private fileFailed = false;
  private started: boolean;

  constructor(private readonly opts: PanelClientOptions) {
    this.base = new URL(opts.panelUrl.endsWith('/') ? opts.panelUrl : opts.panelUrl + '/');
    this.backoff = opts.minBackoffMs ?? 250;
    this.started = opts.sendAtOnce ?? true;
    if (opts.queueFile) this.load(opts.queueFile);
    if (this.started && this.queue.length) void this.flush();
  }

  private get max(): number {
    return this.opts.maxQueue ?? 10000;
  }

  /** The events a previous run of the agent left unsent: queued first (within `maxQueue`, see trim()); the file is rewritten with them. */
  private load(file: string): void {
    let text = '';
    try {
      mkdirSync(path.dirname(file), { recursive: true });
      text = readFileSync(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
        log.error({ err: (e as Error).message, file }, 'could not read the panel event queue file: its events are discarded');
        try {
          rmSync(file, { recursive: true, force: true });
        } catch (err) {
          log.error({ err: (err as Error).message, file }, 'could not remove the panel event queue file');
        }
      }
      return;
    }
    let bad = 0;
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      let event: unknown;
      try {
        event = JSON.parse(line);
      } catch {
        event = null;
      }
      if (isEvent(event)) this.queue.push(event);
      else bad++;
    }
    if (bad) log.error({ file, discarded: bad, kept: this.queue.length }, 'the panel event queue file holds lines that are not events: they are discarded');
    const n = this.trim();
    if (n) log.warn({ dropped: n }, 'panel event queue file over its limit: its oldest state events are dropped');
    if (this.queue.length) log.info({ events: this.queue.length }, 'panel events a previous run of the agent did not deliver: sending them first');
    this.rewrite();
  }

  /** Appends an event to the queue file (synchronously: it is on disk when enqueue() returns). */
  private append(event: AgentEvent): void {
    const file = this.opts.queueFile;
    if (!file) return;
    try {
      appendFileSync(file, JSON.stringify(event) + '\n', { mode: 0o600 });
      this.fileLines++;
      this.fileFailed = false;
    } catch (e) {
      if (!this.fileFailed) log.error({ err: (e as Error).message, file }, 'could not write the panel event queue file: events queued now are lost if the agent stops before the panel has them');
      this.fileFailed = true;
    }
  }

  /** The queue file holds the queue's events (temporary file + rename), or is gone when there are none. */
  private rewrite(): void {
    const file = this.opts.queueFile;
    if (!file) return;
    try {
      if (this.queue.length === 0) rmSync(file, { force: true });
      else {
        const tmp = `${file}.${process.pid}.tmp`;
        writeFileSync(tmp, this.queue.map((e) => JSON.stringify(e) + '\n').join(''), { mode: 0o600 });
        renameSync(tmp, file);
      }
      this.fileLines = this.queue.length;
    } catch (e) {
      log.error({ err: (e as Error).message, file }, 'could not rewrite the panel event queue file');
    }
  }

  /** Starts sending (for a client made with `sendAtOnce: false`). */
  start(): void {
    if (this.started) return;
    this.started = true;
    if (this.queue.length) void this.flush();
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
    // the panel answers again: what waits for its retry goes now
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
      void this.flush();
    }
    return { resync: res?.data?.resync === true };
  }

  /**
   * Queues an event (a state change, a console action, a backup's end) and sends it right away (or as
   * soon as the panel is reachable). With a queue file it is on disk when this returns; after close()
   * a report is only written there (the next start sends it) and a state change is dropped.
   */
  enqueue(event: AgentEvent): void {
    if (this.closed) {
      // a report (a backup's or a restore's end) still goes to the file for the next start; a state
      // change need not: the next start reports every server's status afresh
      if ('kind' in event) {
        this.queue.push(event);
        this.append(event);
      }
      return;
    }
    this.queue.push(event);
    this.append(event);
    const n = this.trim();
    if (n) {
      this.dropped += n;
      log.warn({ dropped: this.dropped }, 'panel event queue full; oldest state events dropped');
      // the file keeps the dropped lines until it holds twice the limit (one rewrite per `max` events)
      if (this.fileLines >= 2 * this.max) this.rewrite();
    }
    if (this.retryTimer) return;
    if (isActivity(event)) this.gather();
    else void this.flush();
  }

  /** Sends what is queued once REPORT_GATHER_MS have passed (at once with a gather time of 0). */
  private gather(): void {
    const ms = this.opts.reportGatherMs ?? REPORT_GATHER_MS;
    if (ms <= 0) return void this.flush();
    if (this.gatherTimer) return;
    this.gatherTimer = setTimeout(() => {
      this.gatherTimer = null;
      void this.flush();
    }, ms);
  }

  /** Ends a wait for company: what it gathered goes with the request being made now. */
  private stopGathering(): void {
    if (!this.gatherTimer) return;
    clearTimeout(this.gatherTimer);
    this.gatherTimer = null;
  }

  /**
   * Keeps the queue within `maxQueue`; returns how many events it dropped. The oldest state events go
   * first (superseded: the agent reports every server's status again at start); a report (a backup's
   * or a restore's end, an activity), which nothing sends again, only when the queue holds nothing else.
   */
  private trim(): number {
    const n = this.queue.length - this.max;
    if (n <= 0) return 0;
    let states = n;
    const kept = this.queue.filter((e) => 'kind' in e || states-- <= 0);
    if (kept.length > this.max) {
      const lost = kept.splice(0, kept.length - this.max);
      log.error({ dropped: lost.length, reports: lost.map((e) => ('kind' in e ? `${e.kind}:${e.serverId}` : e.serverId)) }, 'panel event queue full of reports: the oldest reports are dropped and will never reach the panel');
    }
    this.queue = kept;
    return n;
  }

  /**
   * Takes a batch the panel answered out of the queue: exactly its events (by identity), not as many
   * from the front — an overflow while the batch was in flight may have dropped some of them already.
   */
  private take(batch: readonly AgentEvent[]): void {
    const left = new Map<AgentEvent, number>();
    for (const e of batch) left.set(e, (left.get(e) ?? 0) + 1);
    this.queue = this.queue.filter((e) => {
      const count = left.get(e);
      if (!count) return true;
      left.set(e, count - 1);
      return false;
    });
    this.rewrite();
  }

  get pending(): number {
    return this.queue.length;
  }

  private async flush(): Promise<void> {
    if (this.sending || this.closed || !this.started) return;
    this.stopGathering();
    this.sending = true;
    try {
      while (this.queue.length > 0 && !this.closed) {
        // reports that came while a request was under way wait for company too (their timer sends them)
        if (this.gatherTimer && this.queue.every(isActivity)) break;
        const batch = this.queue.slice(0, this.opts.batchSize ?? 500);
        try {
          await this.request('POST', '/api/agent/v1/events', { events: batch });
        } catch (e) {
          const status = e instanceof PanelRequestError ? e.status : 0;
          if (status === 400 || status === 413 || status === 422) {
            // the panel will never take this batch (or the events it names: it applied the others)
            log.error({ err: (e as Error).message, events: batch.length }, 'panel refused events of a batch; dropping the batch');
            this.take(batch);
            continue;
          }
          log.warn({ err: (e as Error).message, retryInMs: this.backoff, queued: this.queue.length }, 'could not deliver state events to the panel');
          this.scheduleRetry();
          return;
        }
        this.take(batch);
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
    if (!this.started) this.start();
    else if (this.gatherTimer || this.retryTimer) {
      // a flush ends a gather itself; a retry's wait is cut short here
      if (this.retryTimer) clearTimeout(this.retryTimer);
      this.retryTimer = null;
      void this.flush();
    }
    return Promise.race([
      new Promise<boolean>((r) => this.idleWaiters.push(() => r(true))),
      new Promise<boolean>((r) => setTimeout(() => r(false), timeoutMs).unref()),
    ]);
  }

  /** Stops sending; the queue file keeps what was not delivered (and what is queued from now on) for the next start. */
  close(): void {
    this.closed = true;
    this.stopGathering();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    for (const w of this.idleWaiters) w();
    this.idleWaiters = [];
  }
}
