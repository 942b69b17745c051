import type { MikroORM } from '@mikro-orm/postgresql';
import { User } from '../entities/User.js';
import { escapeLike } from '../validation/admin.js';
import type { Paginated } from '../validation/pagination.js';
import { SERVER_STATUSES, type ServerStatus } from '../shared/node-protocol.js';
import type { Actor } from './actor.js';
import { requireAdmin } from './actor.js';
import type { AdminUsersQuery } from '../validation/admin.js';

export interface PlatformStats {
  users: number;
  servers: { total: number; byStatus: Record<ServerStatus, number> };
  nodes: { total: number; online: number };
  blueprints: number;
  /** MiB */
  memory: { allocated: number; total: number };
  /** MiB */
  disk: { allocated: number; total: number };
}

/** The admin area (admin only): users and platform statistics. */
export class AdminService {
  constructor(private readonly orm: MikroORM) {}

  private get em() {
    return this.orm.em;
  }

  async users(actor: Actor | null, { page, search }: AdminUsersQuery): Promise<Paginated<User>> {
    requireAdmin(actor);
    const term = search?.trim();
    const where = term ? { $or: [{ email: { $ilike: `%${escapeLike(term)}%` } }, { name: { $ilike: `%${escapeLike(term)}%` } }] } : {};
    const [items, total] = await this.em.findAndCount(User, where, { orderBy: { createdAt: 'asc', id: 'asc' }, limit: page.limit, offset: page.offset });
    return { items, meta: { total, page: page.page, limit: page.limit } };
  }

  async stats(actor: Actor | null): Promise<PlatformStats> {
    requireAdmin(actor);
    const [row] = await this.em.execute<Record<string, string | null>[]>(`
      select
        (select count(*) from "users")::bigint as "users",
        (select count(*) from "blueprints")::bigint as "blueprints",
        (select count(*) from "nodes")::bigint as "nodes",
        (select count(*) from "nodes" where "status" = 'online')::bigint as "nodes_online",
        (select coalesce(sum("memory"), 0) from "nodes")::bigint as "memory_total",
        (select coalesce(sum("disk"), 0) from "nodes")::bigint as "disk_total",
        (select coalesce(sum("memory"), 0) from "servers")::bigint as "memory_allocated",
        (select coalesce(sum("disk"), 0) from "servers")::bigint as "disk_allocated"`);
    const byStatusRows = await this.em.execute<{ status: ServerStatus; n: string }[]>(
      `select "status", count(*)::bigint as "n" from "servers" group by "status"`,
    );
    const byStatus = Object.fromEntries(SERVER_STATUSES.map((s) => [s, 0])) as Record<ServerStatus, number>;
    let total = 0;
    for (const r of byStatusRows) {
      byStatus[r.status] = Number(r.n);
      total += Number(r.n);
    }
    const n = (k: string) => Number(row?.[k] ?? 0);
    return {
      users: n('users'),
      servers: { total, byStatus },
      nodes: { total: n('nodes'), online: n('nodes_online') },
      blueprints: n('blueprints'),
      memory: { allocated: n('memory_allocated'), total: n('memory_total') },
      disk: { allocated: n('disk_allocated'), total: n('disk_total') },
    };
  }
}
