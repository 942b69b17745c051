/**
 * A server's variable values against its blueprint: each value checked by its variable's rules
 * (src/blueprints/rules.ts). Server create/update (all variables) and the startup endpoint (the
 * user-editable ones) both check values here, so a value means the same everywhere.
 */
import { validateVariable } from '../blueprints/builtin.js';
import type { Blueprint, BlueprintVariable } from '../entities/Blueprint.js';

const has = (o: Record<string, string>, key: string) => Object.prototype.hasOwnProperty.call(o, key);

/** What is wrong with `value` for the variable, or null when its rules allow it. */
export function variableProblem(v: BlueprintVariable, value: string): string | null {
  try {
    return validateVariable(v.rules ?? '', value);
  } catch {
    return null; // a broken rule (bad regex) is the blueprint's bug, not the user's
  }
}

/** The server's value of a variable: its stored value, else the blueprint's default. */
export function valueOf(v: BlueprintVariable, current: Record<string, string>): string {
  return has(current, v.key) ? current[v.key]! : String(v.default ?? '');
}

/**
 * Blueprint defaults, then the current values, then the given ones; every value checked against
 * its variable's rules. Unknown keys are errors (a typo would otherwise be silently ignored).
 * Problems go into `fields` as `variables.<KEY>`.
 */
export function resolveVariables(
  blueprint: Blueprint,
  current: Record<string, string>,
  given: Record<string, string>,
  fields: Record<string, string>,
): Record<string, string> {
  const defs = blueprint.variables ?? [];
  const known = new Set(defs.map((v) => v.key));
  for (const key of Object.keys(given)) {
    if (!known.has(key)) fields[`variables.${key}`] = 'is not a variable of this blueprint';
  }
  const out: Record<string, string> = {};
  for (const v of defs) {
    const value = has(given, v.key) ? given[v.key]! : valueOf(v, current);
    const problem = variableProblem(v, value);
    if (problem) fields[`variables.${v.key}`] = problem;
    out[v.key] = value;
  }
  return out;
}
