/**
 * The activity log: one entry for every state-changing action, written in the transaction of the
 * change where there is one. Entries are only inserted, listed (newest first) and pruned after the
 * retention period in batches; no API changes them. Properties never hold a password, token, cookie
 * or file content: `record` drops keys that name secrets, whatever a caller passes.
 */
import { randomUUID } from 'node:crypto';
import type { ConsoleBus } from '../console/bus.js';
import { readRows } from '../db/read-rows.js';
import { eventIterator } from '../console/iterator.js';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { Activity } from '../entities/Activity.js';
import { childLogger } from '../logger.js';
import { demand } from '../permissions/policy.js';
import { guardedServerFeed } from './access-guard.js';
import { ActivityAnnouncer } from './activity-announcer.js';
import type { ActivityFilter } from '../validation/activity.js';
import type { Page, Paginated } from '../validation/pagination.js';
import type { AccessService } from './access.service.js';
import { isAdmin, requireActor, requireAdmin, type Actor } from './actor.js';
import type { ActivityQuery } from '../validation/activity.js';

const log = childLogger('activity');

export interface ActivityEntry {
  id: string;
  event: string;
  serverId: string | null;
  actor: { id: string; email: string } | null;
  apiTokenId: string | null;
  ip: string | null;
  properties: Record<string, unknown>;
  createdAt: Date;
}

/** What services that change state need of the activity log. */
export interface ActivityRecorder {
  record(entry: NewActivity, em?: EntityManager): Promise<void>;
}

/** For services used without a log (a test that only reads). */
export const noRecorder: ActivityRecorder = { record: async () => undefined };

export interface NewActivity {
  /** The entry's id when the caller has one (a node's report); else a new one. */
  id?: string;
  event: string;
  serverId?: string | null;
  /** The signed-in caller. */
  actor?: Actor | null;
  /** The user, when the action did not come through a request of the panel (a node's console channel). */
  user?: { id: string; email: string };
  ip?: string | null;
  properties?: Record<string, unknown>;
}

/** Keys never stored in properties, at any depth. */
const SECRET_KEY = /^(current|new)?password$|^(session|api|node|console)?token$|secret|cookie|authorization|hash$|^contents?$|^data$/i;
export const PRUNE_BATCH = 1000;
const MAX_QUEUED_ENTRIES = 1000;
/**
 * One text whatever the batch's size (a column of values per parameter), so the statement is prepared
 * once per pooled connection and PostgreSQL never parses or plans a batch again.
 */
const INSERT_SQL =
  'insert into activity (id, event, server_id, actor_id, actor_email, api_token_id, ip, properties, created_at) ' +
  'select * from unnest($1::uuid[], $2::text[], $3::uuid[], $4::uuid[], $5::text[], $6::uuid[], $7::text[], $8::jsonb[], $9::timestamptz[])';
/**
 * A batch's statement (its round trip and commit) costs as much as ten of its rows: at 50 ms a busy
 * panel's power actions made batches of 3 and recording cost them 7% (bench/README.md).
 */
const BATCH_MS = 200;
const BATCH_ROWS = 200;

type ActivityRow = Activity;

/**
 * A string as jsonb stores it: at most 1024 characters, NUL and lone surrogates (also one left by the
 * cut) as U+FFFD; PostgreSQL refuses the whole entry over either.
 */
const storable = (s: string): string => s.slice(0, 1024).replace(/\u0000|\p{Cs}/gu, '\uFFFD');

function scrub(value: unknown, depth = 0): unknown {
  if (value instanceof Date) return value.toISOString();
  if (depth > 4 || value === null || typeof value !== 'object') return typeof value === 'string' ? storable(value) : value;
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => scrub(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!SECRET_KEY.test(k)) out[storable(k)] = scrub(v, depth + 1);
  return out;
}

const entryOf = (a: Activity): ActivityEntry => ({
  id: a.id,
  event: a.event,
  serverId: a.serverId,
  actor: a.actorId ? { id: a.actorId, email: a.actorEmail ?? '' } : null,
  apiTokenId: a.apiTokenId,
  ip: a.ip,
  properties: a.properties,
  createdAt: a.createdAt,
});

/**
 * An entry as `viewer` reads it: the client address only for the entry's own actor and for
 * administrators (as Pterodactyl shows it); a subuser with activity.read sees what others did, not
 * where they were.
 */
export function entryShownTo(viewer: Actor, entry: ActivityEntry): ActivityEntry {
  return isAdmin(viewer) || entry.actor?.id === viewer.user.id || entry.ip === null ? entry : { ...entry, ip: null };
}

export class ActivityService implements ActivityRecorder {
  private pending: ActivityRow[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly orm: MikroORM,
    private readonly access: AccessService,
    private readonly bus: ConsoleBus,
  ) {
    orm.em.getEventManager().registerSubscriber(new ActivityAnnouncer((entries) => entries.forEach((row) => this.announce(row))));
  }

  /** Tells the server's live subscribers, on every instance (the console bus carries it). */
  private announce(row: ActivityRow): void {
    if (row.serverId) void this.bus.publish(row.serverId, { type: 'activity', data: entryOf(row) }).catch(() => undefined);
  }

  /** A server's entries (`activity.read`). */
  async forServer(actor: Actor | null, serverId: string, { filter, page }: ActivityQuery): Promise<Paginated<ActivityEntry>> {
    const who = requireActor(actor);
    const a = await this.access.resolve(who, serverId);
    demand(a, 'activity.read');
    const listed = await this.list({ ...filter, serverId: a.serverId }, page);
    return { ...listed, items: listed.items.map((e) => entryShownTo(who, e)) };
  }

  /**
   * New entries of a server as they are recorded on this instance, for `activity.read` holders, until
   * they lose it. A subscriber that falls far behind is ended rather than queueing without bound.
   */
  async subscribe(actor: Actor | null, serverId: string): Promise<AsyncIterableIterator<ActivityEntry>> {
    const who = requireActor(actor);
    const a = await this.access.resolve(who, serverId);
    demand(a, 'activity.read');
    // taking the key (or the subuser) away ends the subscription, as it ends a console's
    const subscribe = guardedServerFeed(this.orm, this.access, this.bus, who, a.serverId, 'activity.read');
    return eventIterator<ActivityEntry>(subscribe, (e) => (e.type === 'activity' ? entryShownTo(who, revive(e.data as ActivityEntry)) : undefined), MAX_QUEUED_ENTRIES);
  }

  /** What the caller did. */
  async mine(actor: Actor | null, { filter, page }: ActivityQuery): Promise<Paginated<ActivityEntry>> {
    const a = requireActor(actor);
    return this.list({ ...filter, actorId: a.user.id }, page);
  }

  /** Every entry (administrators). */
  async all(actor: Actor | null, { filter, page }: ActivityQuery): Promise<Paginated<ActivityEntry>> {
    requireAdmin(actor);
    return this.list(filter, page);
  }

  /**
   * Adds an entry to `em`'s unit of work (flushed with the change it records) and announces it once
   * committed; without `em` the entry is written at once.
   */
  async record(entry: NewActivity, em?: EntityManager): Promise<void> {
    const who = entry.actor?.user ?? entry.user;
    const row = {
      id: entry.id ?? randomUUID(),
      event: entry.event,
      serverId: entry.serverId ?? null,
      actorId: who?.id ?? null,
      actorEmail: who?.email ?? null,
      apiTokenId: entry.actor?.via === 'api_token' ? entry.actor.credentialId : null,
      ip: entry.ip ?? entry.actor?.ip ?? null,
      properties: scrub(entry.properties ?? {}) as Record<string, unknown>,
      createdAt: new Date(),
    };
    // inside the change's transaction, with its unit of work (announced once committed: see
    // ActivityAnnouncer); else queued for the next batch and announced now, the action being done
    if (em) em.create(Activity, row);
    else {
      this.enqueue(row);
      this.announce(row);
    }
  }

  /**
   * Entries of actions without a transaction of their own (a power action, a console command) are
   * written in batches: one INSERT of many rows at most every BATCH_MS or BATCH_ROWS entries, so the log
   * costs such an action a fraction of a millisecond. A list reads after the batch this instance has
   * waiting is written; an instance killed outright loses at most one batch window of such entries.
   */
  private enqueue(row: ActivityRow): void {
    this.pending.push(row);
    if (this.pending.length >= BATCH_ROWS) void this.flush();
    else this.flushTimer ??= setTimeout(() => void this.flush(), BATCH_MS);
  }

  /** Writes what waits (and resolves once what was waiting when called is written). */
  flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const rows = this.pending.splice(0);
    const previous = this.writing;
    const write = (async () => {
      await previous;
      if (!rows.length) return;
      const columns = [
        rows.map((r) => r.id),
        rows.map((r) => r.event),
        rows.map((r) => r.serverId),
        rows.map((r) => r.actorId),
        rows.map((r) => r.actorEmail),
        rows.map((r) => r.apiTokenId),
        rows.map((r) => r.ip),
        rows.map((r) => JSON.stringify(r.properties)),
        rows.map((r) => r.createdAt),
      ];
      try {
        await readRows(this.orm, INSERT_SQL, columns);
      } catch (err) {
        log.error({ err: (err as Error).message, entries: rows.length }, 'could not write activity entries');
      }
    })();
    this.writing = write;
    return write;
  }

  private async list(filter: ActivityFilter, page: Page): Promise<Paginated<ActivityEntry>> {
    await this.flush();
    const where: Record<string, unknown> = {};
    if (filter.event) where.event = { $like: filter.event.replace(/[%_\\]/g, '\\$&') + '%' };
    if (filter.serverId) where.serverId = filter.serverId;
    if (filter.actorId) where.actorId = filter.actorId;
    if (filter.since || filter.until) {
      where.createdAt = { ...(filter.since ? { $gte: filter.since } : {}), ...(filter.until ? { $lt: filter.until } : {}) };
    }
    const [rows, total] = await this.orm.em.fork().findAndCount(Activity, where, {
      orderBy: { createdAt: 'desc', id: 'desc' },
      limit: page.limit,
      offset: page.offset,
    });
    return { items: rows.map(entryOf), meta: { total, page: page.page, limit: page.limit } };
  }

  /** Prunes now and then every hour; returns the function that stops it. */
  startPruning(days: number, everyMs = 3_600_000): () => void {
    const run = () => void this.prune(days).catch((err: Error) => log.warn({ err: err.message }, 'could not prune the activity log; trying again later'));
    run();
    const timer = setInterval(run, everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Deletes entries older than `days`, at most PRUNE_BATCH rows per statement; returns how many. */
  async prune(days: number): Promise<number> {
    const cutoff = new Date(Date.now() - days * 86_400_000);
    const conn = this.orm.em.getConnection();
    let removed = 0;
    for (;;) {
      const res = await conn.execute<{ affectedRows?: number }>(
        `delete from "activity" where "id" in (select "id" from "activity" where "created_at" < ? limit ${PRUNE_BATCH})`,
        [cutoff],
        'run',
      );
      const n = Number(res.affectedRows ?? 0);
      removed += n;
      if (n < PRUNE_BATCH) break;
    }
    if (removed) log.info({ removed, days }, 'pruned old activity entries');
    return removed;
  }
}

/** An entry as it arrives through the bus (through Redis its date is text). */
const revive = (e: ActivityEntry): ActivityEntry => (e.createdAt instanceof Date ? e : { ...e, createdAt: new Date(e.createdAt) });
