/**
 * The JSON shapes of REST responses. Each presenter returns the type of its schema in
 * src/openapi/responses.ts (the OpenAPI document), so the two cannot drift apart without `tsc` noticing.
 */
import type { Backup } from '../entities/Backup.js';
import type { ActivityOut, ApiTokenOut, BackupOut, BlueprintOut, NodeChoiceOut, NodeOut, PermissionOut, ScheduleOut, ScheduleRunOut, ServerOut, StartupOut, SubuserOut, UserOut } from '../openapi/responses.js';
import type { StartupView } from '../services/startup.service.js';
import type { ScheduleRunView, ScheduleView } from '../services/schedules.service.js';
import type { ActivityEntry } from '../services/activity.service.js';
import type { SubuserView } from '../services/subusers.service.js';
import type { ApiToken } from '../entities/ApiToken.js';
import type { Blueprint } from '../entities/Blueprint.js';
import type { NodeChoice, NodeView } from '../services/nodes.service.js';
import { shownVariables, type ServerRecord, type UserRecord } from '../services/records.js';
import type { Actor } from '../services/actor.js';
import { variablesShownTo } from '../services/server-variables.js';

/** A User entity or a UserRecord (same shape). */
export const presentUser = (u: UserRecord): UserOut => ({
  id: u.id,
  email: u.email,
  name: u.name,
  role: u.role,
  createdAt: u.createdAt,
  updatedAt: u.updatedAt,
});

export const presentApiToken = (t: ApiToken): ApiTokenOut => ({
  id: t.id,
  name: t.name,
  prefix: t.prefix,
  createdAt: t.createdAt,
  expiresAt: t.expiresAt,
  lastUsedAt: t.lastUsedAt,
});

/** A Server entity or a ServerRecord row (same shape). */
export const presentServer = (s: ServerRecord): ServerOut => ({
  id: s.id,
  name: s.name,
  description: s.description,
  ownerId: s.ownerId,
  nodeId: s.nodeId,
  blueprintId: s.blueprintId,
  memory: s.memory,
  cpu: s.cpu,
  disk: s.disk,
  backupLimit: s.backupLimit,
  status: s.status,
  variables: shownVariables(s),
  autoRestart: s.autoRestart,
  lastExitCode: s.lastExitCode,
  lastCrashAt: s.lastCrashAt,
  lastStopReason: s.lastStopReason,
  crashCount: s.crashCount,
  permissions: s.permissions ?? [],
  paths: s.paths ?? [],
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
});

/** Never tokenHash or keyEnc. */
export const presentNode = ({ node: n, allocated }: NodeView): NodeOut => ({
  id: n.id,
  name: n.name,
  fqdn: n.fqdn,
  port: n.port,
  scheme: n.scheme,
  memory: n.memory,
  disk: n.disk,
  cpuCores: n.cpuCores,
  status: n.status,
  lastSeenAt: n.lastSeenAt,
  tokenCreatedAt: n.tokenCreatedAt,
  sftpPort: n.sftpPort,
  sftpFingerprint: n.sftpFingerprint,
  allocated: { memory: allocated.memory, disk: allocated.disk },
  createdAt: n.createdAt,
  updatedAt: n.updatedAt,
});

/** The blueprint as `viewer` may read it: hidden variables for administrators only. */
export const presentBlueprint = (b: Blueprint, viewer: Actor | null): BlueprintOut => ({
  id: b.id,
  key: b.key,
  name: b.name,
  description: b.description,
  startup: b.startup,
  stop: b.stop,
  ready: b.ready,
  install: b.install,
  installShell: b.installShell,
  configFiles: b.configFiles,
  variables: variablesShownTo(viewer, b).map((v) => ({
    key: v.key,
    name: v.name ?? v.key,
    description: v.description,
    default: v.default,
    rules: v.rules,
    userViewable: v.userViewable ?? true,
    userEditable: v.userEditable ?? true,
  })),
  fileDenylist: b.fileDenylist ?? [],
  defaults: b.defaults,
  builtin: b.builtin,
  createdAt: b.createdAt,
  updatedAt: b.updatedAt,
});

export const presentNodeChoice = (c: NodeChoice): NodeChoiceOut => ({
  id: c.id,
  name: c.name,
  status: c.status,
  available: { memory: c.available.memory, disk: c.available.disk },
});

export const presentPermission = (p: { key: string; description: string }): PermissionOut => ({ key: p.key, description: p.description });

export const presentSubuser = (s: SubuserView): SubuserOut => ({
  userId: s.userId,
  email: s.email,
  name: s.name,
  permissions: s.permissions,
  paths: s.paths,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
});

export const presentActivity = (a: ActivityEntry): ActivityOut => ({
  id: a.id,
  event: a.event,
  serverId: a.serverId,
  actor: a.actor,
  apiTokenId: a.apiTokenId,
  ip: a.ip,
  properties: a.properties,
  createdAt: a.createdAt,
});

/** A backup record (an entity, or one as it travels on the bus with its `serverId`). */
export const presentBackup = (b: Backup): BackupOut => ({
  id: b.id,
  serverId: (b as Backup & { serverId?: string }).serverId ?? b.server.id,
  name: b.name,
  status: b.status,
  locked: b.locked,
  ignored: b.ignored,
  size: Number(b.size),
  files: b.files,
  sha256: b.sha256,
  error: b.error,
  createdAt: b.createdAt,
  completedAt: b.completedAt,
});

export const presentSchedule = (s: ScheduleView): ScheduleOut => ({
  id: s.id,
  serverId: s.serverId,
  name: s.name,
  cron: s.cron,
  timezone: s.timezone,
  enabled: s.enabled,
  onlyWhenOnline: s.onlyWhenOnline,
  tasks: s.tasks.map((t) => ({ sequence: t.sequence, action: t.action, payload: t.payload, offsetSeconds: t.offsetSeconds, continueOnFailure: t.continueOnFailure })),
  lastRunAt: s.lastRunAt,
  nextRunAt: s.nextRunAt,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
});

export const presentScheduleRun = (r: ScheduleRunView): ScheduleRunOut => ({
  id: r.id,
  trigger: r.trigger,
  status: r.status,
  startedAt: r.startedAt,
  finishedAt: r.finishedAt,
  tasks: r.tasks.map((t) => ({ sequence: t.sequence, status: t.status, error: t.error })),
});

export const presentStartup = (s: StartupView): StartupOut => ({
  startup: s.startup,
  variables: s.variables.map((v) => ({
    key: v.key,
    name: v.name,
    description: v.description,
    default: v.default,
    rules: v.rules,
    userEditable: v.userEditable,
    value: v.value,
  })),
});
