import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Plant } from '../entities/Plant.js';
import { AppError } from '../errors.js';
import { parseNewPlant } from '../validation/plants.js';
import type { Actor } from './actor.js';
import { requireActor } from './actor.js';

/** The Plant shape of the plant store: `tag` is omitted when the plant has none. */
export interface PlantView {
  name: string;
  tag?: string;
}

/** The sample plant store. Every error is a 400 except 401/429/500. */
export class PlantsService {
  constructor(private readonly orm: MikroORM) {}

  private get em() {
    return this.orm.em;
  }

  /** Adds a plant from the raw JSON body text (the int64 id is read exactly from it). */
  async create(actor: Actor | null, rawBody: unknown): Promise<PlantView> {
    requireActor(actor);
    const p = parseNewPlant(rawBody);
    try {
      await this.em.insert(Plant, { id: p.id, name: p.name, tag: p.tag ?? null, createdAt: new Date() });
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw AppError.badRequest(`A plant with id ${p.id} already exists.`);
      throw err;
    }
    return p.tag === undefined ? { name: p.name } : { name: p.name, tag: p.tag };
  }

  /** Reads a plant back (for GraphQL's `plant` query); null when unknown. `id` is a decimal int64 string. */
  async get(actor: Actor | null, id: string): Promise<(PlantView & { id: string }) | null> {
    requireActor(actor);
    if (!/^-?(0|[1-9][0-9]*)$/.test(id)) return null;
    const n = BigInt(id);
    if (n < -(2n ** 63n) || n > 2n ** 63n - 1n) return null;
    const plant = await this.em.findOne(Plant, { id: n.toString() });
    if (!plant) return null;
    return plant.tag === null ? { id: plant.id, name: plant.name } : { id: plant.id, name: plant.name, tag: plant.tag };
  }
}
