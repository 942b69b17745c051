import type { MikroORM } from '@mikro-orm/postgresql';
import { Blueprint } from '../entities/Blueprint.js';
import { AppError } from '../errors.js';
import { parseId } from '../validation/common.js';
import type { Paginated } from '../validation/pagination.js';
import type { Actor } from './actor.js';
import { requireActor } from './actor.js';
import type { Page } from '../validation/pagination.js';

/** Blueprints are readable by every signed-in user (they pick one when creating a server). */
export class BlueprintsService {
  constructor(private readonly orm: MikroORM) {}

  private get em() {
    return this.orm.em;
  }

  async list(actor: Actor | null, page: Page): Promise<Paginated<Blueprint>> {
    requireActor(actor);
    const [items, total] = await this.em.findAndCount(Blueprint, {}, { orderBy: { createdAt: 'asc', id: 'asc' }, limit: page.limit, offset: page.offset });
    return { items, meta: { total, page: page.page, limit: page.limit } };
  }

  async get(actor: Actor | null, id: string): Promise<Blueprint> {
    requireActor(actor);
    const blueprint = await this.em.findOne(Blueprint, { id: parseId(id, 'Blueprint') });
    if (!blueprint) throw AppError.notFound('Blueprint');
    return blueprint;
  }
}
