/**
 * A server's variable values against its blueprint: each value checked by its variable's rules
 * (src/blueprints/rules.ts), and what the server's users may see and change (the blueprint's
 * `userViewable` / `userEditable`). Server create/update and the startup endpoint both ask here, so a
 * value and a variable's visibility mean the same everywhere.
 */
import { validateVariable } from '../blueprints/builtin.js';
import type { Blueprint, BlueprintVariable } from '../entities/Blueprint.js';
import { isAdmin, type Actor } from './actor.js';

const has = (o: Record<string, string>, key: string) => Object.prototype.hasOwnProperty.call(o, key);

/** The server's users (everyone but administrators) see it. */
export const viewable = (v: BlueprintVariable): boolean => v.userViewable ?? true;
/** The server's users change it. */
export const editable = (v: BlueprintVariable): boolean => viewable(v) && (v.userEditable ?? true);

/** Who sets the values: administrators set every variable, the server's users the editable ones. */
export type Setter = 'admin' | 'user';

/**
 * The keys of the variables a server's users see: those the blueprint declares viewable. A value
 * stored under any other key (hidden, or no longer declared) is for administrators only.
 */
export function viewableKeys(blueprint: Pick<Blueprint, 'variables'>): string[] {
  return (blueprint.variables ?? []).filter(viewable).map((v) => v.key);
}

/**
 * The variables of a blueprint as `viewer` reads them: administrators all of them, everyone else the
 * user-viewable ones only (a hidden variable's default is the value its servers run with).
 */
export function variablesShownTo(viewer: Actor | null, blueprint: Pick<Blueprint, 'variables'>): BlueprintVariable[] {
  const all = blueprint.variables ?? [];
  return viewer && isAdmin(viewer) ? all : all.filter(viewable);
}

/** Why a server's user may not set the variable (unknown, hidden, read-only), or null. */
export function userMayNotSet(v: BlueprintVariable | undefined, unknown: string): string | null {
  if (!v || !viewable(v)) return unknown;
  if (!editable(v)) return 'is read-only: ask an administrator to change it';
  return null;
}

/**
 * Why a server's user may not give `value` to the variable, or null. A read-only one passes with its
 * current value when the caller may read it (a record sent back as read changes nothing); a hidden
 * one never does, nor a read-only one for a caller who may not read it (no guessing its value).
 */
export function userMayNotGive(v: BlueprintVariable | undefined, value: string, current: Record<string, string>, unknown: string, mayRead = true): string | null {
  const refused = userMayNotSet(v, unknown);
  // only a caller who may read the value (startup.read) sends it back: for anyone else the answer
  // must not depend on the value, or a wrong guess and the right one would answer differently
  return refused && !(mayRead && v && viewable(v) && value === valueOf(v, current)) ? refused : null;
}

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
 * its variable's rules. Unknown keys are errors (a typo would otherwise be silently ignored). A
 * server's user (`setter` 'user') may not set hidden variables, and may give a read-only one only
 * its current value (a record sent back as read changes nothing). Problems go into `fields`
 * as `variables.<KEY>`.
 */
export function resolveVariables(
  blueprint: Blueprint,
  current: Record<string, string>,
  given: Record<string, string>,
  fields: Record<string, string>,
  setter: Setter = 'admin',
): Record<string, string> {
  const defs = blueprint.variables ?? [];
  const byKey = new Map(defs.map((v) => [v.key, v]));
  const unknown = 'is not a variable of this blueprint';
  for (const [key, value] of Object.entries(given)) {
    const v = byKey.get(key);
    const refused = setter === 'user' ? userMayNotGive(v, value, current, unknown) : v ? null : unknown;
    if (refused) fields[`variables.${key}`] = refused;
  }
  const out: Record<string, string> = {};
  for (const v of defs) {
    if (fields[`variables.${v.key}`]) continue;
    const value = has(given, v.key) ? given[v.key]! : valueOf(v, current);
    const problem = variableProblem(v, value);
    if (problem) fields[`variables.${v.key}`] = problem;
    out[v.key] = value;
  }
  return out;
}
