/**
 * Seeds the built-in blueprints (src/blueprints/builtin.ts) at every start, idempotently: new ones
 * are inserted, built-in ones already present are updated in place (same id, so servers keep
 * working). A blueprint created by an operator with the same key is left alone.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { BUILTIN_BLUEPRINTS, type BlueprintDefinition } from '../blueprints/builtin.js';
import { Blueprint } from '../entities/Blueprint.js';
import { childLogger } from '../logger.js';

const log = childLogger('blueprints');

export async function seedBuiltinBlueprints(orm: MikroORM, definitions: readonly BlueprintDefinition[] = BUILTIN_BLUEPRINTS): Promise<{ inserted: number; updated: number }> {
  const em = orm.em.fork();
  let inserted = 0;
  let updated = 0;
  await em.transactional(async (tx) => {
    // One seeder at a time (several gateway instances may start together).
    await tx.execute(`select pg_advisory_xact_lock(hashtext('hostpanel:seed-blueprints'))`);
    const existing = new Map((await tx.find(Blueprint, { key: { $in: definitions.map((d) => d.key) } })).map((b) => [b.key, b]));
    for (const d of definitions) {
      const values = {
        name: d.name,
        description: d.description,
        startup: d.startup,
        stop: d.stop,
        ready: d.ready,
        install: d.install,
        variables: d.variables.map((v) => ({ key: v.key, name: v.key, description: v.description, default: v.default, rules: v.rules, userViewable: true, userEditable: true })),
        defaults: { memory: d.defaults.memory, cpu: d.defaults.cpu, disk: d.defaults.disk },
      };
      const b = existing.get(d.key);
      if (!b) {
        tx.create(Blueprint, { key: d.key, builtin: true, ...values });
        inserted++;
      } else if (b.builtin) {
        const changed = (Object.keys(values) as (keyof typeof values)[]).some((k) => canonical(b[k]) !== canonical(values[k]));
        if (changed) {
          Object.assign(b, values);
          updated++;
        }
      }
    }
  });
  if (inserted || updated) log.info({ inserted, updated }, 'built-in blueprints seeded');
  return { inserted, updated };
}

/** JSON with sorted object keys (jsonb does not keep key order). */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x,
  );
}
