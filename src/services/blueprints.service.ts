import { isDeepStrictEqual } from 'node:util';
import { ForeignKeyConstraintViolationException, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { eggToBlueprint, type BlueprintDraft, type ImportWarning } from '../blueprints/egg.js';
import { EggError } from '../blueprints/egg-errors.js';
import { eggSchema } from '../blueprints/egg-schema.js';
import { parseEggYaml } from '../blueprints/egg-yaml.js';
import { Blueprint, type BlueprintVariable } from '../entities/Blueprint.js';
import { Server } from '../entities/Server.js';
import { AppError } from '../errors.js';
import { createBlueprintInput, updateBlueprintInput, type BlueprintVariableInput, type UpdateBlueprintInput } from '../validation/blueprints.js';
import { parseId, parseInput } from '../validation/common.js';
import type { Page, Paginated } from '../validation/pagination.js';
import { noRecorder, type ActivityRecorder } from './activity.service.js';
import type { Actor } from './actor.js';
import { requireActor, requireAdmin } from './actor.js';

export interface ImportedBlueprint {
  blueprint: Blueprint;
  warnings: ImportWarning[];
}

const DEFAULTS = { memory: 1024, cpu: 100, disk: 4096 };

/**
 * Blueprints are readable by every signed-in user (they pick one when creating a server);
 * administrators create, change, import and delete them. Built-in ones belong to the panel (the
 * seeder rewrites them at every start), so they cannot be changed or deleted.
 */
export class BlueprintsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly activity: ActivityRecorder = noRecorder,
  ) {}

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

  async create(actor: Actor | null, input: unknown): Promise<Blueprint> {
    requireAdmin(actor);
    const data = parseInput(createBlueprintInput, input);
    const values = {
      key: data.key,
      name: data.name,
      description: data.description ?? '',
      startup: data.startup,
      stop: data.stop.trim(),
      ready: data.ready ?? null,
      install: data.install ?? null,
      installShell: data.installShell ?? null,
      configFiles: data.configFiles ?? [],
      variables: (data.variables ?? []).map(variableOf),
      fileDenylist: data.fileDenylist ?? [],
      defaults: data.defaults ?? { ...DEFAULTS },
    };
    return this.insert(actor, values, 'blueprint:create');
  }

  async update(actor: Actor | null, id: string, input: unknown): Promise<Blueprint> {
    requireAdmin(actor);
    const { id: blueprintId } = await this.editable(id, 'changed');
    const data = parseInput(updateBlueprintInput, input);
    const sent = Object.keys(data).filter((k) => (data as Record<string, unknown>)[k] !== undefined);
    try {
      return await this.em.transactional(async (em) => {
        const blueprint = await em.findOne(Blueprint, { id: blueprintId }, { refresh: true });
        if (!blueprint) throw AppError.notFound('Blueprint'); // deleted meanwhile
        // the entry names the fields that changed, not every field a whole form sent back
        // (compared as values: the database gives a JSON object's keys back in its own order)
        const stored = (b: Blueprint) => sent.map((k) => structuredClone((b as unknown as Record<string, unknown>)[k]));
        const before = stored(blueprint);
        applyUpdate(blueprint, data);
        const after = stored(blueprint);
        const fields = sent.filter((_, i) => !isDeepStrictEqual(before[i], after[i]));
        await this.activity.record({ event: 'blueprint:update', actor, properties: { blueprintId, key: blueprint.key, fields } }, em);
        return blueprint;
      });
    } catch (err) {
      throw keyTaken(err);
    }
  }

  /** 422 INVALID_STATE while servers use it (`details.servers`: how many). */
  async remove(actor: Actor | null, id: string): Promise<void> {
    requireAdmin(actor);
    const blueprint = await this.editable(id, 'deleted');
    const servers = await this.em.count(Server, { blueprint: blueprint.id });
    if (servers) throw inUse(servers);
    try {
      await this.em.transactional(async (em) => {
        em.remove(em.getReference(Blueprint, blueprint.id));
        await this.activity.record({ event: 'blueprint:delete', actor, properties: { blueprintId: blueprint.id, key: blueprint.key, name: blueprint.name } }, em);
      });
    } catch (err) {
      // a server created meanwhile (servers.blueprint_id is `on delete restrict`)
      if (!(err instanceof ForeignKeyConstraintViolationException)) throw err;
      throw inUse(await this.orm.em.fork().count(Server, { blueprint: blueprint.id }));
    }
  }

  /** A Pterodactyl or Pelican egg (PTDL_v1/v2, PLCN_v1/v2/v3) as a new blueprint, with what could not be mapped. */
  async importEgg(actor: Actor | null, input: unknown): Promise<ImportedBlueprint> {
    requireAdmin(actor);
    return this.importParsed(actor, input);
  }

  /** The same egg as YAML text (422 `fields.egg` when it does not parse). */
  async importEggYaml(actor: Actor | null, text: unknown): Promise<ImportedBlueprint> {
    requireAdmin(actor);
    return this.importParsed(actor, eggInput(() => parseEggYaml(text)));
  }

  private async importParsed(actor: Actor | null, input: unknown): Promise<ImportedBlueprint> {
    const egg = parseInput(eggSchema, input);
    const draft: { blueprint: BlueprintDraft; warnings: ImportWarning[] } = eggInput(() => eggToBlueprint(egg));
    // imports of one egg at once may pick the same free key: the one that loses takes the next
    for (let attempt = 1; ; attempt++) {
      const key = await this.freeKey(slugOf(draft.blueprint.name));
      try {
        const blueprint = await this.insert(actor, { key, ...draft.blueprint }, 'blueprint:import', { warnings: draft.warnings.length });
        return { blueprint, warnings: draft.warnings };
      } catch (err) {
        if (attempt >= IMPORT_KEY_ATTEMPTS || !(err instanceof AppError && err.code === 'ALREADY_EXISTS')) throw err;
      }
    }
  }

  private async insert(actor: Actor | null, values: Omit<Blueprint, 'id' | 'builtin' | 'createdAt' | 'updatedAt'>, event: string, extra: Record<string, unknown> = {}): Promise<Blueprint> {
    if (await this.em.count(Blueprint, { key: values.key })) throw keyTaken();
    try {
      return await this.em.transactional(async (em: EntityManager) => {
        const blueprint = em.create(Blueprint, { ...values, builtin: false });
        await this.activity.record({ event, actor, properties: { blueprintId: blueprint.id, key: blueprint.key, name: blueprint.name, ...extra } }, em);
        return blueprint;
      });
    } catch (err) {
      throw keyTaken(err);
    }
  }

  /** The blueprint when an administrator may change it: not a built-in one. */
  private async editable(id: string, what: 'changed' | 'deleted'): Promise<Blueprint> {
    const blueprint = await this.em.findOne(Blueprint, { id: parseId(id, 'Blueprint') });
    if (!blueprint) throw AppError.notFound('Blueprint');
    if (blueprint.builtin) throw AppError.invalidState(`Built-in blueprints belong to the panel and cannot be ${what}.`);
    return blueprint;
  }

  /** `slug`, else `slug-2`, `slug-3`, …: importing an egg twice gives two blueprints. */
  private async freeKey(slug: string): Promise<string> {
    const taken = new Set((await this.em.find(Blueprint, { key: { $like: `${slug}%` } }, { fields: ['key'] })).map((b) => b.key));
    for (let i = 1; ; i++) {
      const key = i === 1 ? slug : `${slug.slice(0, 58)}-${i}`;
      if (!taken.has(key)) return key;
    }
  }
}

/** How often an import looks for a free key again when another import took the one it found. */
const IMPORT_KEY_ATTEMPTS = 10;

/** `step`'s result; an EggError is the 422 it names. */
function eggInput<T>(step: () => T): T {
  try {
    return step();
  } catch (err) {
    if (err instanceof EggError) throw AppError.validation(err.fields, err.message);
    throw err;
  }
}

function applyUpdate(blueprint: Blueprint, data: UpdateBlueprintInput): void {
  const { variables, stop, ...rest } = data;
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) (blueprint as unknown as Record<string, unknown>)[k] = v;
  if (stop !== undefined) blueprint.stop = stop.trim();
  if (variables !== undefined) blueprint.variables = variables.map(variableOf);
}

function variableOf(v: BlueprintVariableInput): BlueprintVariable {
  return {
    key: v.key,
    name: v.name ?? v.key,
    description: v.description ?? '',
    default: v.default ?? '',
    rules: v.rules ?? '',
    userViewable: v.userViewable ?? true,
    userEditable: v.userEditable ?? true,
  };
}

/** The egg's name as a blueprint key (`Counter-Strike: Global Offensive` → `counter-strike-global-offensive`). */
export function slugOf(name: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 56)
    .replace(/-+$/, '');
  return slug || 'egg';
}

function inUse(servers: number): AppError {
  return AppError.invalidState('Servers use this blueprint: delete them first.', { servers });
}

function keyTaken(err?: unknown): unknown {
  if (err === undefined || err instanceof UniqueConstraintViolationException) return AppError.alreadyExists('key', 'A blueprint with this key already exists.');
  return err;
}
