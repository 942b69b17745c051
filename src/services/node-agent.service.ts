/**
 * What node agents tell the panel (src/rest/agent.routes.ts is the transport): their servers'
 * state changes, heartbeats with live figures, and the list of servers they should run.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Node } from '../entities/Node.js';
import { Server } from '../entities/Server.js';
import { childLogger } from '../logger.js';
import { serverSpec } from '../nodes/spec.js';
import { SERVER_STATUSES, SFTP_REPORT_MAX_LISTED, type NodeStats, type ServerSpec, type ServerStatus } from '../shared/node-protocol.js';
import { AppError } from '../errors.js';
import { isUuid, parseInput } from '../validation/common.js';
import { User } from '../entities/User.js';
import { Activity } from '../entities/Activity.js';
import type { ActivityRecorder } from './activity.service.js';
import { isNewerStatus, newerStatusWhere } from './status-order.js';

const log = childLogger('node-agent');

const stateEvent = z.object({
  serverId: z.string(),
  status: z.enum(SERVER_STATUSES as [ServerStatus, ...ServerStatus[]]),
  at: z.string(),
  exitCode: z.number().int().nullable().optional(),
  reason: z.string().max(32).optional(),
  /** The node's number of the status (ServerStateEvent.seq); absent from agents that predate it. */
  seq: z.number().int().nonnegative().optional(),
});

const reportText = z.string().max(4096);
const MAX_LISTED = SFTP_REPORT_MAX_LISTED;
/** Characters of the paths one SFTP entry names, together (the agent sends 8,000 and one path at most). */
const MAX_LISTED_CHARS = 16_384;
const fileCount = z.number().int().min(1).max(1_000_000_000);
const listedChars = (p: { paths?: string[]; renames?: { from: string; to: string }[] }): boolean =>
  (p.paths ?? []).reduce((n, s) => n + s.length, 0) + (p.renames ?? []).reduce((n, r) => n + r.from.length + r.to.length, 0) <= MAX_LISTED_CHARS;
const tooLong = { message: `the paths named are over ${MAX_LISTED_CHARS} characters together` };

/**
 * The SFTP entries of agents before the properties had the file manager's types (`count: "2"`,
 * `paths: "/a\n/b"`, renames as `from -> to` lines), still in their queue files: as the new ones.
 */
function legacySftpProperties(rename: boolean) {
  return (p: unknown): unknown => {
    const o = p as Record<string, unknown> | null;
    if (typeof o !== 'object' || o === null || typeof o.count !== 'string' || typeof o.paths !== 'string' || !/^[0-9]{1,9}$/.test(o.count)) return p;
    const lines = o.paths === '' ? [] : o.paths.split('\n').slice(0, MAX_LISTED);
    const count = Number(o.count);
    if (!rename) return { via: o.via, count, paths: lines };
    const renames = lines.map((l) => {
      const at = l.indexOf(' -> ');
      return at < 0 ? { from: l, to: '' } : { from: l.slice(0, at), to: l.slice(at + 4) };
    });
    return { via: o.via, count, renames };
  };
}

const sftpPaths = { via: z.literal('sftp'), count: fileCount, paths: z.array(reportText).max(MAX_LISTED) };
/** An entry of paths that names its one path too when it has one (as the file manager's entry of it). */
const sftpNamedPaths = z.object({ ...sftpPaths, path: reportText.optional() }).strict().refine(listedChars, tooLong);
const sftpProperties = {
  'server:file.upload': sftpNamedPaths,
  'server:file.delete': z.object(sftpPaths).strict().refine(listedChars, tooLong),
  'server:file.create-directory': sftpNamedPaths,
  'server:file.chmod': sftpNamedPaths,
  'server:file.rename': z
    .object({
      via: z.literal('sftp'),
      count: fileCount,
      renames: z.array(z.object({ from: reportText, to: reportText }).strict()).max(MAX_LISTED),
      from: reportText.optional(),
      to: reportText.optional(),
    })
    .strict()
    .refine(listedChars, tooLong),
};

const reportFields = { kind: z.literal('activity'), id: z.uuid().optional(), serverId: z.string(), userId: z.string(), ip: z.string().max(64).nullable(), at: z.string() };

/**
 * A user's action on the node (src/shared/node-protocol.ts ConsoleActivityReport): a console command
 * or power action (texts), or SFTP's uploads, deletes, renames, new folders and mode changes, typed
 * as the file manager's entries of the same events (numbers as numbers, lists as arrays) and bounded.
 */
const activityReport = z.union([
  z.object({
    ...reportFields,
    event: z.enum(['server:console.command', 'server:power.start', 'server:power.stop', 'server:power.restart', 'server:power.kill']),
    properties: z.record(z.string().max(64), reportText).refine((p) => Object.keys(p).length <= 16, { message: 'too many properties' }),
  }),
  z.object({ ...reportFields, event: z.literal('server:file.upload'), properties: z.preprocess(legacySftpProperties(false), sftpProperties['server:file.upload']) }),
  z.object({ ...reportFields, event: z.literal('server:file.delete'), properties: z.preprocess(legacySftpProperties(false), sftpProperties['server:file.delete']) }),
  z.object({ ...reportFields, event: z.literal('server:file.rename'), properties: z.preprocess(legacySftpProperties(true), sftpProperties['server:file.rename']) }),
  z.object({ ...reportFields, event: z.literal('server:file.create-directory'), properties: sftpProperties['server:file.create-directory'] }),
  z.object({ ...reportFields, event: z.literal('server:file.chmod'), properties: sftpProperties['server:file.chmod'] }),
]);

/** How a backup or a restore is getting on (src/shared/node-protocol.ts BackupReport, RestoreReport). */
const backupReport = z.object({
  kind: z.literal('backup'),
  serverId: z.string(),
  backupId: z.string().max(64),
  status: z.enum(['pending', 'completed', 'failed']),
  files: z.number().int().min(0),
  bytes: z.number().int().min(0),
  sha256: z.string().max(64).optional(),
  error: z.string().max(2000).optional(),
  at: z.string(),
});
const restoreReport = z.object({
  kind: z.literal('restore'),
  serverId: z.string(),
  backupId: z.string().max(64),
  status: z.enum(['completed', 'failed']),
  error: z.string().max(2000).optional(),
  at: z.string(),
});
export type BackupProgressReport = z.output<typeof backupReport> | z.output<typeof restoreReport>;

const agentEvent = z.union([activityReport, backupReport, restoreReport, stateEvent]);
type AgentEventInput = z.output<typeof agentEvent>;
/** The batch's envelope; each event is checked on its own (see takeEvents). */
const eventsInput = z.object({ events: z.array(z.unknown()).max(10_000) });
type ActivityReport = z.output<typeof activityReport>;

/**
 * What is wrong with an event, as the kind of event it comes closest to being: of a union's
 * alternatives, the one with the fewest issues (an SFTP delete with a bad count, not "no `status`").
 */
function closestIssue(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue | undefined {
  const first = issues[0];
  if (first?.code !== 'invalid_union' || !first.errors.length) return first;
  const best = first.errors.reduce((a, b) => (b.length < a.length ? b : a));
  const inner = closestIssue(best);
  return inner && { ...inner, path: [...first.path, ...inner.path] };
}

/**
 * Whether a crash event is the one recorded last, sent again: a node killed before it took an
 * acknowledged batch out of its queue file sends that batch once more, with the same times.
 */
function sameCrash(server: Server, at: string): boolean {
  return server.lastCrashAt !== null && server.lastCrashAt.getTime() === new Date(at).getTime();
}

/**
 * The batch's well-formed events, and a VALIDATION_ERROR naming the others (`events.<index>.<field>`),
 * or null when there are none. One malformed event (a report an older or newer agent words otherwise)
 * costs only itself: the node drops a batch the panel refuses, and the rest of it would go with it.
 */
function takeEvents(events: unknown[]): { taken: AgentEventInput[]; refused: AppError | null } {
  const taken: AgentEventInput[] = [];
  const fields: Record<string, string> = {};
  events.forEach((event, i) => {
    const r = agentEvent.safeParse(event);
    if (r.success) return void taken.push(r.data);
    const issue = closestIssue(r.error.issues);
    fields[['events', i, ...(issue?.path ?? [])].join('.')] = issue?.message ?? 'Invalid event';
  });
  const count = events.length - taken.length;
  const refused = count ? AppError.validation(fields, `${count} of the ${events.length} events are malformed and were left out; the others were applied.`) : null;
  return { taken, refused };
}

const heartbeatInput = z.object({
  stats: z.object({
    cpu: z.object({ cores: z.number().int().positive().nullable() }).partial().passthrough(),
  }).passthrough(),
  sftp: z.object({ port: z.number().int().min(1).max(65535), fingerprint: z.string().max(100) }).nullish(),
});

/** A node not heard from for this long is offline. */
export const NODE_OFFLINE_AFTER_MS = 30_000;

export class NodeAgentService {
  constructor(
    private readonly orm: MikroORM,
    private readonly activity: ActivityRecorder,
  ) {}

  private backupListener: ((r: BackupProgressReport) => Promise<void>) | null = null;
  private readonly heartbeatListeners: ((node: Node, cameBack: boolean) => Promise<unknown>)[] = [];

  /** Who hears the nodes' backup and restore reports (BackupsService). */
  onBackupReport(listener: (r: BackupProgressReport) => Promise<void>): void {
    this.backupListener = listener;
  }

  /** Calls `listener` after each heartbeat of a node is recorded, with whether the node was offline (in the background: the heartbeat's answer does not wait). */
  onHeartbeat(listener: (node: Node, cameBack: boolean) => Promise<unknown>): void {
    this.heartbeatListeners.push(listener);
  }

  private get em() {
    return this.orm.em;
  }

  /** The registered node of an id (for the signature check of its requests), or null. */
  findNode(id: string): Promise<Node | null> {
    return this.orm.em.findOne(Node, { id });
  }

  async serversOf(node: Node): Promise<{ spec: ServerSpec; status: ServerStatus }[]> {
    const servers = await this.em.find(Server, { node: node.id }, { populate: ['blueprint'], orderBy: { createdAt: 'asc', id: 'asc' } });
    return servers.map((s) => ({ spec: serverSpec(s), status: s.status }));
  }

  /**
   * Applies state changes in order and records the console actions reported with them. Unknown
   * servers (deleted meanwhile) and servers of other nodes are skipped; malformed events are left out
   * and named in a VALIDATION_ERROR thrown once the others are applied.
   *
   * A status with its number (`seq`) is recorded only over a lower number or none: a power action's
   * answer (PowerService.powerServer) may have recorded a newer status than the queued events that
   * arrive after it. How a process ended (exit code, reason, crashes) is recorded whatever the number.
   */
  async applyEvents(node: Node, input: unknown): Promise<number> {
    const { taken: events, refused } = takeEvents(parseInput(eventsInput, input).events);
    if (refused) log.warn({ nodeId: node.id, refused: refused.details }, 'a node sent malformed events; the others of its batch are applied');
    const applied = await this.applyTaken(node, events);
    if (refused) throw refused;
    return applied;
  }

  private async applyTaken(node: Node, events: AgentEventInput[]): Promise<number> {
    const ids = [...new Set(events.map((e) => e.serverId))].filter(isUuid);
    const servers = new Map((await this.em.find(Server, { id: { $in: ids }, node: node.id })).map((s) => [s.id, s]));
    const reports = events.filter((e): e is ActivityReport => 'kind' in e && e.kind === 'activity' && servers.has(e.serverId));
    await this.recordReports(reports);
    for (const e of events) {
      if ('kind' in e && (e.kind === 'backup' || e.kind === 'restore') && servers.has(e.serverId)) await this.backupListener?.(e);
    }
    let applied = 0;
    /** The newest numbered status of each server in this batch, written once the rest is flushed. */
    const numbered = new Map<string, { status: ServerStatus; seq: number }>();
    for (const e of events) {
      const server = servers.get(e.serverId);
      if (!server || 'kind' in e) continue;
      if (e.seq === undefined) server.status = e.status;
      else {
        const newest = numbered.get(server.id)?.seq ?? server.statusSeq;
        if (isNewerStatus(newest, e.seq)) numbered.set(server.id, { status: e.status, seq: e.seq });
      }
      if (e.exitCode !== undefined) server.lastExitCode = e.exitCode;
      if (e.reason) server.lastStopReason = e.reason;
      if ((e.reason === 'crashed' || e.reason === 'memory_limit') && !sameCrash(server, e.at)) {
        server.crashCount += 1;
        const at = new Date(e.at);
        server.lastCrashAt = Number.isNaN(at.getTime()) ? new Date() : at;
      }
      applied++;
    }
    node.status = 'online';
    node.lastSeenAt = new Date();
    await this.em.flush();
    // compared in the update itself: a power action's answer may record a newer status meanwhile
    for (const [id, { status, seq }] of numbered) {
      await this.em.nativeUpdate(Server, newerStatusWhere(id, seq), { status, statusSeq: seq, updatedAt: new Date() });
    }
    return applied;
  }

  /**
   * Console and SFTP actions as activity entries of their users (reports naming an unknown user are
   * dropped), written in the batch's transaction: the node drops what the panel acknowledged, so an
   * entry that could not be written must fail the batch (the node sends it again), not be lost.
   */
  private async recordReports(reports: ActivityReport[]): Promise<void> {
    if (!reports.length) return;
    const userIds = [...new Set(reports.map((r) => r.userId))].filter(isUuid);
    const users = new Map((await this.em.find(User, { id: { $in: userIds } })).map((u) => [u.id, u]));
    // the ids in the log already, and those written by this batch so far
    const recorded = await this.alreadyRecorded(reports);
    for (const r of reports) {
      const user = users.get(r.userId);
      if (!user || (r.id && recorded.has(r.id))) continue;
      if (r.id) recorded.add(r.id);
      await this.activity.record({ id: r.id, event: r.event, serverId: r.serverId, user: { id: user.id, email: user.email }, ip: r.ip, properties: 'via' in r.properties ? r.properties : { via: 'console', ...r.properties } }, this.em);
    }
  }

  /**
   * The ids of these reports the log holds already: a batch sent again after its answer was lost (the
   * node's request timed out while the panel wrote it). Two batches with the same report in flight at
   * once both find it missing; the second one's insert then fails on the primary key and the node
   * sends that batch again, when it is found here.
   */
  private async alreadyRecorded(reports: ActivityReport[]): Promise<Set<string>> {
    const ids = reports.flatMap((r) => (r.id ? [r.id] : []));
    if (!ids.length) return new Set();
    return new Set((await this.em.find(Activity, { id: { $in: ids } }, { fields: ['id'] })).map((a) => a.id));
  }

  /**
   * The node's live figures. A node that was offline (never seen, timed out, or a call to it failed)
   * may have missed servers created, changed or deleted meanwhile (a force-delete): the answer's
   * `resync` has its agent fetch the list of its servers again (GET /servers), which it reconciles
   * with (src/agent/server/manager.ts).
   */
  async heartbeat(node: Node, input: unknown): Promise<{ resync: boolean }> {
    const { stats, sftp } = parseInput(heartbeatInput, input);
    const cameBack = node.status !== 'online';
    node.sftpPort = sftp?.port ?? null;
    node.sftpFingerprint = sftp?.fingerprint ?? null;
    node.status = 'online';
    node.lastSeenAt = new Date();
    const cores = (stats as unknown as NodeStats).cpu?.cores;
    // an administrator's figure stands: the agent's fills it in only when none was given
    if (node.cpuCores === null && typeof cores === 'number' && cores > 0) node.cpuCores = cores;
    await this.em.flush();
    if (cameBack) log.info({ nodeId: node.id }, 'node is back: its agent fetches its server list again');
    for (const l of this.heartbeatListeners) l(node, cameBack).catch((err: Error) => log.warn({ nodeId: node.id, err: err.message }, 'after a heartbeat'));
    return { resync: cameBack };
  }

  /** Marks nodes that stopped sending heartbeats as offline. */
  async sweepOffline(): Promise<number> {
    const em = this.orm.em.fork();
    const n = await em.nativeUpdate(
      Node,
      { status: 'online', $or: [{ lastSeenAt: null }, { lastSeenAt: { $lt: new Date(Date.now() - NODE_OFFLINE_AFTER_MS) } }] },
      { status: 'offline' },
    );
    if (n) log.info({ nodes: n }, 'nodes marked offline (no heartbeat)');
    return n;
  }
}
