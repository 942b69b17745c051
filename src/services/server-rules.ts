/**
 * Who may create which servers, and how much: the per-user quota, the rule for blueprints that run a
 * user-chosen command, and how many backups a server may keep. Administrators are exempt from all
 * three (they may give a user more, a shell server whose command they chose, or room for more
 * backups); servers count against their owner.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { runsUserCommand } from '../blueprints/builtin.js';
import type { UserQuota } from '../config.js';
import { AppError } from '../errors.js';
import type { Actor } from './actor.js';
import { isAdmin } from './actor.js';

export interface ServerRules {
  userCommandBlueprints: 'everyone' | 'admins';
  /** 0 = no limit. */
  quota: UserQuota;
  /** backups a new server may keep unless told otherwise (BACKUP_LIMIT_DEFAULT) */
  backupLimitDefault?: number;
}

/** No quota, every blueprint for everyone (services built without a configuration, e.g. in tools). */
export const OPEN_RULES: ServerRules = { userCommandBlueprints: 'everyone', quota: { servers: 0, memory: 0, cpu: 0, disk: 0 } };

/** What one server holds (memory and disk in MiB, cpu in percent of one core). */
export interface Resources {
  memory: number;
  cpu: number;
  disk: number;
}

const NOTHING: Resources = { memory: 0, cpu: 0, disk: 0 };

/** A non-administrator may not create a server from a user-command blueprint when the panel keeps them to admins. */
export function assertMayUseBlueprint(actor: Actor, blueprint: { key: string; builtin: boolean; name: string }, rules: ServerRules): void {
  if (rules.userCommandBlueprints !== 'admins' || isAdmin(actor) || !runsUserCommand(blueprint)) return;
  throw AppError.validation(
    { blueprintId: 'runs a command of your choice: on this panel only an administrator may create such a server' },
    `The "${blueprint.name}" blueprint runs a command of your choice; on this panel an administrator must create such servers. Ask an administrator, or pick another blueprint.`,
  );
}

/** A non-administrator may not change the variables (the command) of a user-command server either. */
export function assertMayChangeVariables(actor: Actor, blueprint: { key: string; builtin: boolean }, rules: ServerRules): void {
  if (rules.userCommandBlueprints !== 'admins' || isAdmin(actor) || !runsUserCommand(blueprint)) return;
  throw AppError.validation(
    { variables: 'set the command of this server: on this panel only an administrator may change it' },
    'This server runs a command chosen by an administrator; on this panel only an administrator may change it.',
  );
}

/** BACKUP_LIMIT_DEFAULT where a service was built without a configuration. */
export const BACKUP_LIMIT_FALLBACK = 5;

/**
 * The most backups a non-administrator may give a server: its limit now (`current`; none for a new
 * server) or BACKUP_LIMIT_DEFAULT, whichever is larger, so that an owner may lower the limit and raise
 * it back, and keep what an administrator gave. Backups take the node's disk and count against no
 * quota: more is the hosting operator's to give. 422 VALIDATION_ERROR (fields.backupLimit), as for
 * the other values only an administrator may choose (variables of a user-command server).
 */
export function assertMayKeepBackups(actor: Actor, wanted: number | undefined, current: number | undefined, rules: ServerRules): void {
  if (wanted === undefined || isAdmin(actor)) return;
  const most = Math.max(current ?? 0, rules.backupLimitDefault ?? BACKUP_LIMIT_FALLBACK);
  if (wanted <= most) return;
  throw AppError.validation(
    { backupLimit: `at most ${most}; an administrator can raise it` },
    `This server may keep at most ${most} backups unless an administrator raises its limit.`,
  );
}

function quotaApplies(actor: Actor, quota: UserQuota): boolean {
  return !isAdmin(actor) && (quota.servers > 0 || quota.memory > 0 || quota.cpu > 0 || quota.disk > 0);
}

/**
 * Throws QUOTA_EXCEEDED when the owner's servers would go over a quota. Runs inside the caller's
 * transaction and takes a transaction-scoped lock per owner first, so concurrent creates and resizes
 * of one user's servers take turns (each sees what the previous one committed). Callers hold their
 * node's row lock already: the order is always node, then owner.
 *
 * `had` is what the server holds before the change (nothing for a new one); only growth is checked,
 * so a user over a lowered quota can always shrink.
 */
export async function assertWithinQuota(
  em: EntityManager,
  actor: Actor,
  ownerId: string,
  want: Resources,
  rules: ServerRules,
  existing?: { id: string; had: Resources },
): Promise<void> {
  const quota = rules.quota;
  if (!quotaApplies(actor, quota)) return;
  await em.execute(`select pg_advisory_xact_lock(hashtext('hostpanel:user-quota:' || ?))`, [ownerId]);
  const rows = await em.execute<{ servers: string; memory: string; cpu: string; disk: string }[]>(
    `select count(*)::bigint as "servers", coalesce(sum("memory"), 0)::bigint as "memory",
            coalesce(sum("cpu"), 0)::bigint as "cpu", coalesce(sum("disk"), 0)::bigint as "disk"
       from "servers" where "owner_id" = ? and "id" <> ?`,
    [ownerId, existing?.id ?? '00000000-0000-0000-0000-000000000000'],
  );
  const r = rows[0]!;
  const used = { servers: Number(r.servers), memory: Number(r.memory), cpu: Number(r.cpu), disk: Number(r.disk) };
  const had = existing?.had ?? NOTHING;
  const exceeded: (keyof UserQuota)[] = [];
  const fields: Record<string, string> = {};
  if (!existing && quota.servers > 0 && used.servers + 1 > quota.servers) exceeded.push('servers');
  const units = { memory: 'MiB of memory', cpu: '% cpu', disk: 'MiB of disk' } as const;
  for (const k of ['memory', 'cpu', 'disk'] as const) {
    if (quota[k] > 0 && want[k] > had[k] && used[k] + want[k] > quota[k]) {
      exceeded.push(k);
      fields[k] = `your servers may use ${quota[k]} ${units[k]} in total; ${used[k]} are in use by your other servers, so at most ${Math.max(0, quota[k] - used[k])} are left`;
    }
  }
  if (!exceeded.length) return;
  const message = exceeded.includes('servers')
    ? `You have reached your limit of ${quota.servers} servers: delete one, or ask an administrator.`
    : `This would take your servers over your ${exceeded.join(' and ')} quota: choose less, shrink another server, or ask an administrator.`;
  throw new AppError('QUOTA_EXCEEDED', message, {
    exceeded,
    limits: quota,
    used,
    requested: existing ? want : { servers: 1, ...want },
    fields,
  });
}
