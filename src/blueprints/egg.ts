/**
 * A Pterodactyl or Pelican egg (checked by src/blueprints/egg-schema.ts) as a blueprint, with warnings for
 * everything that is not mapped. Nothing of the egg is executed here: its startup becomes a
 * template, its install script and configuration files are stored for the agent (egg-install.ts,
 * egg-config-files.ts), its rules strings are parsed, its regular expressions compiled (never run on
 * its text).
 */
import { constants as osConstants } from 'node:os';
import type { BlueprintVariable } from '../entities/Blueprint.js';
import { EggError, type ImportWarning } from './egg-errors.js';
import type { InstallShell } from '../shared/node-protocol.js';
import type { ConfigFile } from '../shared/config-files.js';
import { mapConfigFiles, usesPort } from './egg-config-files.js';
import { mapInstall } from './egg-install.js';
import { mapStartup, portVariable } from './egg-startup.js';
import type { Egg, EggVariable } from './egg-schema.js';
import { KNOWN_RULES, parseRules, rulesProblem, validateVariable } from './rules.js';

export type { ImportWarning };

export interface BlueprintDraft {
  name: string;
  description: string;
  startup: string;
  stop: string;
  ready: string | null;
  install: string | null;
  installShell: InstallShell | null;
  configFiles: ConfigFile[];
  variables: BlueprintVariable[];
  fileDenylist: string[];
  defaults: { memory: number; cpu: number; disk: number };
}

/** Servers of imported eggs: Java and Steam games need more than the panel's usual 512 MiB. */
export const IMPORT_DEFAULTS = { memory: 1024, cpu: 100, disk: 4096 };

export function eggToBlueprint(egg: Egg): { blueprint: BlueprintDraft; warnings: ImportWarning[] } {
  const warnings: ImportWarning[] = [];
  const variables = (egg.variables ?? []).map((v, i) => mapVariable(v, `variables.${i}`, warnings));
  assertUniqueKeys(variables);
  const command = startupOf(egg, warnings);
  const startup = mapStartup(command.line, variables, warnings, command.field);
  const install = mapInstall(egg, warnings);
  const configFiles = mapConfigFiles(egg.config.files, warnings);
  const blueprint: BlueprintDraft = {
    name: egg.name.trim(),
    description: (egg.description ?? '').trim(),
    startup: startup.template,
    stop: mapStop(egg.config.stop),
    ready: mapReady(egg.config.startup.done),
    ...install,
    configFiles,
    variables: withPort([...sortedAsEgg(variables, egg.variables ?? []), ...startup.added], configFiles, command.line, warnings),
    fileDenylist: mapDenylist(egg.file_denylist),
    defaults: { ...IMPORT_DEFAULTS },
  };
  warnUnmapped(egg, warnings);
  return { blueprint, warnings };
}

/** The startup command: `startup`, or the first of Pelican's `startup_commands` (the others are warned about). */
function startupOf(egg: Egg, warnings: ImportWarning[]): { line: string; field: string } {
  const commands = Object.entries(egg.startup_commands ?? {});
  if (!commands.length) return { line: egg.startup!, field: 'startup' };
  const [[name, line], ...others] = commands as [[string, string], ...[string, string][]];
  if (others.length) {
    warnings.push({ field: 'startup_commands', message: `a blueprint has one startup command: "${name}" is imported, not ${others.map(([n]) => `"${n}"`).join(', ')}` });
  }
  return { line, field: `startup_commands.${name}` };
}

/** Pelican's variables carry `sort`: in that order (those without keep theirs, after the others). */
function sortedAsEgg(variables: BlueprintVariable[], egg: EggVariable[]): BlueprintVariable[] {
  const rank = (i: number) => egg[i]?.sort ?? Number.POSITIVE_INFINITY;
  return variables.map((v, i) => ({ v, i })).sort((a, b) => rank(a.i) - rank(b.i) || a.i - b.i).map(({ v }) => v);
}

/** The egg's deny-list (a list, or one pattern a line) as patterns; blank lines and `#` comments left out. */
export function mapDenylist(list: string[] | string | null | undefined): string[] {
  const lines = Array.isArray(list) ? list : (list ?? '').split(/\r?\n/);
  return lines.map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
}

/** SERVER_PORT as a variable when the config files write the port and the startup did not add it. */
function withPort(variables: BlueprintVariable[], configFiles: ConfigFile[], startup: string, warnings: ImportWarning[]): BlueprintVariable[] {
  if (!usesPort(configFiles) || variables.some((v) => v.key === 'SERVER_PORT')) return variables;
  const port = portVariable(startup);
  warnings.push({ field: 'config.files', message: `SERVER_PORT: {{server.build.default.port}} is the server's SERVER_PORT variable (default ${port.default}): the panel allocates no ports` });
  return [...variables, port];
}

/**
 * `^C` is SIGINT; `^` and a signal's name (`^SIGTERM`, `^TERM`) is that signal, as Pterodactyl turns
 * it into one; anything else is a line written to the server's standard input (`^D`, `^Z` and `^\\`
 * as the agent reads them).
 */
export function mapStop(stop: string): string {
  const s = stop.trim();
  if (s.toUpperCase() === '^C') return 'SIGINT';
  const named = /^\^(?:SIG)?([A-Za-z][A-Za-z0-9]+)$/i.exec(s);
  const signal = named ? `SIG${named[1]!.toUpperCase()}` : null;
  return signal && signal in osConstants.signals ? signal : s;
}

/**
 * `done` (one string or a list): an entry matches as plain text anywhere in a line, as in Pterodactyl;
 * one that starts with `regex:` is a pattern, as Wings reads it.
 */
export function mapReady(done: string | string[] | null | undefined): string | null {
  const list = (Array.isArray(done) ? done : [done ?? '']).filter((d) => d !== '');
  if (!list.length) return null;
  const parts = list.map((d) => (d.startsWith('regex:') ? { regex: true, source: readyPattern(d.slice('regex:'.length)) } : { regex: false, source: escapeRegExp(d) }));
  // a pattern joined with others keeps its own alternatives to itself
  const pattern = parts.length === 1 ? parts[0]!.source : parts.map((p) => (p.regex ? `(?:${p.source})` : p.source)).join('|');
  if (pattern.length > 255) throw new EggError({ 'config.startup.done': 'the ready patterns are longer than 255 characters together' });
  return pattern;
}

/** A `regex:` entry's pattern, once it compiles here (Wings' Go patterns and JavaScript's agree on what eggs use). */
function readyPattern(source: string): string {
  try {
    new RegExp(source);
  } catch (err) {
    throw new EggError({ 'config.startup.done': `"regex:${source.slice(0, 80)}" is not a pattern this panel can read (${(err as Error).message}): write it as plain text or as a JavaScript regular expression` });
  }
  return source;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function mapVariable(v: EggVariable, field: string, warnings: ImportWarning[]): BlueprintVariable {
  const key = v.env_variable;
  const raw = Array.isArray(v.rules) ? v.rules.join('|') : (v.rules ?? '');
  const kept = parseRules(raw).filter((r) => {
    if (KNOWN_RULES.has(r.name)) return true;
    warnings.push({ field: `${field}.rules`, message: `${key}: the rule "${r.name}" is not supported and is not enforced` });
    return false;
  });
  const rules = kept.map((r) => (r.arg !== '' ? `${r.name}:${r.arg}` : r.name)).join('|');
  const problem = rulesProblem(rules);
  if (problem) throw new EggError({ [`${field}.rules`]: problem });
  const value = v.default_value === null || v.default_value === undefined ? '' : String(v.default_value);
  const invalid = validateVariable(rules, value);
  if (invalid) warnings.push({ field: `${field}.default_value`, message: `${key}: the default ${invalid}, so every server must set it` });
  return {
    key,
    name: v.name.trim(),
    description: (v.description ?? '').trim(),
    default: value,
    rules,
    userViewable: Boolean(v.user_viewable),
    userEditable: Boolean(v.user_editable),
  };
}

function assertUniqueKeys(variables: BlueprintVariable[]): void {
  const seen = new Set<string>();
  variables.forEach((v, i) => {
    if (seen.has(v.key)) throw new EggError({ [`variables.${i}.env_variable`]: 'is used by another variable' });
    seen.add(v.key);
  });
}

function warnUnmapped(egg: Egg, warnings: ImportWarning[]): void {
  const images = [...Object.values(egg.docker_images ?? {}), ...(egg.images ?? [])];
  if (images.length) {
    const field = egg.docker_images ? 'docker_images' : 'images';
    warnings.push({ field, message: `the egg's container image is not used (${images.join(', ')}): servers run directly on the node, so the programs the game needs must be installed there` });
  }
  if (hasContent(egg.config.logs)) warnings.push({ field: 'config.logs', message: 'log settings are not used' });
  if (egg.features?.length) warnings.push({ field: 'features', message: `panel features are not supported: ${egg.features.join(', ')}` });
  if (egg.tags?.length) warnings.push({ field: 'tags', message: `tags are not kept: ${egg.tags.join(', ')}` });
  if (egg.config.extends) warnings.push({ field: 'config.extends', message: 'configuration inherited from another egg is not imported' });
}

function hasContent(v: unknown): boolean {
  return Boolean(v) && typeof v === 'object' && Object.keys(v as object).length > 0;
}
