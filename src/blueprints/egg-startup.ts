/**
 * An egg's startup command as a blueprint's startup template.
 *
 * Pterodactyl runs the startup through a shell, with `{{VAR}}` rewritten to `${VAR}` and the
 * variables in the environment. Here:
 *   - a plain command (no shell syntax once the placeholders are taken out) becomes an argv template,
 *     `${VAR}` and `{{VAR}}` both written `{{VAR}}`: spawned without a shell, each value one argument;
 *   - a command with shell syntax (`$( )`, `&&`, `;`, `$VAR`, …) becomes
 *     `/bin/bash -c "<command>"` with every placeholder written `${VAR}`, so values reach the
 *     shell as environment variables and are never pasted into the command's text.
 * `SERVER_PORT` and `SERVER_IP`, which Pterodactyl takes from the server's allocation, become
 * variables when the egg uses them (the panel has no allocations).
 */
import { splitTemplate } from '../agent/environment/template.js';
import type { BlueprintVariable } from '../entities/Blueprint.js';
import { EggError, type ImportWarning } from './egg-errors.js';

export const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const SHELL_SYNTAX = /[$`;&|<>()\n\r]/;
/** What the agent provides itself (src/agent/environment/env.ts). */
const AGENT_BUILTINS = new Set(['NODE', 'ASSETS_DIR', 'SERVER_ID', 'SERVER_DIR', 'SERVER_MEMORY', 'SERVER_CPU', 'SERVER_DISK']);

/** The port each game usually listens on, for the SERVER_PORT variable an import adds. */
const USUAL_PORTS: [RegExp, string][] = [
  [/srcds_run/, '27015'],
  [/ts3server/, '9987'],
  [/RustDedicated/, '28015'],
  [/ShooterGameServer/, '7777'],
];

/** `field`: where the egg has the command (`startup`, or `startup_commands.<name>` in Pelican's eggs). */
export function mapStartup(startup: string, variables: BlueprintVariable[], warnings: ImportWarning[], field = 'startup'): { template: string; added: BlueprintVariable[] } {
  const text = startup.trim();
  const shell = SHELL_SYNTAX.test(text.replace(PLACEHOLDER, ''));
  const template = shell ? shellTemplate(text) : argvTemplate(text, field);
  if (shell) warnings.push({ field, message: 'the startup uses shell syntax: it runs with /bin/bash -c (bash must be on the node), variables given as environment variables' });
  const added = addedVariables(text, variables, warnings, field);
  return { template, added };
}

function argvTemplate(text: string, field: string): string {
  const template = text.replace(PLACEHOLDER, (_m, a: string | undefined, b: string | undefined) => `{{${a ?? b}}}`);
  try {
    splitTemplate(template);
  } catch (err) {
    throw new EggError({ [field]: (err as Error).message });
  }
  return template;
}

/** One double-quoted template word: only `\` and `"` need escaping (src/agent/environment/template.ts). */
function shellTemplate(text: string): string {
  const script = text.replace(PLACEHOLDER, (_m, a: string | undefined, b: string | undefined) => `\${${a ?? b}}`);
  return `/bin/bash -c "${script.replace(/[\\"]/g, '\\$&')}"`;
}

function addedVariables(text: string, variables: BlueprintVariable[], warnings: ImportWarning[], field: string): BlueprintVariable[] {
  const declared = new Set(variables.map((v) => v.key));
  const used = new Set([...text.matchAll(PLACEHOLDER)].map((m) => (m[1] ?? m[2])!));
  const added: BlueprintVariable[] = [];
  for (const name of used) {
    if (declared.has(name) || AGENT_BUILTINS.has(name)) continue;
    if (name === 'SERVER_PORT') {
      const port = portVariable(text);
      added.push(port);
      warnings.push({ field, message: `SERVER_PORT: the panel allocates no ports, so it is a variable (default ${port.default}) that each server sets` });
    } else if (name === 'SERVER_IP') {
      added.push(allocationVariable('SERVER_IP', 'Server address', '0.0.0.0', 'required|ip'));
      warnings.push({ field, message: 'SERVER_IP: the panel allocates no addresses, so it is a variable (default 0.0.0.0) that each server sets' });
    } else {
      warnings.push({ field, message: `${name} is used by the startup but is not a variable of the egg: it is empty` });
    }
  }
  return added;
}

/** The SERVER_PORT variable an import adds (Pterodactyl's allocation), with the game's usual port. */
export function portVariable(startup: string): BlueprintVariable {
  const port = USUAL_PORTS.find(([re]) => re.test(startup))?.[1] ?? '25565';
  return allocationVariable('SERVER_PORT', 'Server port', port, 'required|integer|between:1,65535');
}

function allocationVariable(key: string, name: string, value: string, rules: string): BlueprintVariable {
  return { key, name, description: `${name} (Pterodactyl's allocation; added by the import)`, default: value, rules, userViewable: true, userEditable: false };
}
