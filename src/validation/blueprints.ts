/**
 * Inputs of blueprint management (administrators): create and update. The startup template, the
 * ready pattern and every variable's rules are checked here, so that a saved blueprint always runs.
 */
import { z } from 'zod';
import { splitTemplate } from '../agent/environment/template.js';
import { AMBIGUOUS_REPEAT, repeatsAmbiguousGroup } from '../blueprints/ambiguous-repeat.js';
import { rulesProblem } from '../blueprints/rules.js';
import { CONFIG_LIMITS, configFileNameProblem, configKeyProblem, configValueProblem, parserKeyProblem, placeholderProblem } from '../shared/config-file-checks.js';
import { CONFIG_PARSERS } from '../shared/config-files.js';
import { INSTALL_SHELLS } from '../shared/node-protocol.js';
import { variableNameProblem } from '../shared/variable-names.js';
import { displayName, plainText } from './common.js';
import { cpu, description, disk, memory } from './servers.js';

const text = plainText;

const problem = (check: (s: string) => string | null) => (s: string, ctx: z.RefinementCtx) => {
  const message = check(s);
  if (message) ctx.addIssue({ code: 'custom', message });
};

export const blueprintKey = z
  .string({ message: 'must be a string' })
  .regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'must be 1-64 lower-case letters, digits or dashes, starting with a letter or digit')
  .meta({ description: 'Stable slug, unique.', example: 'paper' });

export const variableKey = z.string({ message: 'must be a string' }).superRefine(problem(variableNameProblem)).meta({ example: 'SERVER_JARFILE' });

export const variableRules = text(1000)
  .superRefine(problem(rulesProblem))
  .meta({ description: 'A `|`-separated rule list, e.g. `required|integer|between:1,100` (docs/blueprints.md).', example: 'required|string|max:64' });

export const startupTemplate = text(4096)
  .refine((s) => s.trim() !== '', 'must not be empty')
  .superRefine(problem(templateProblem))
  .meta({ description: 'Command template: argv words with `{{VARIABLES}}` (spawned without a shell).' });

export const stopCommand = text(255)
  .refine((s) => s.trim() !== '', 'must not be empty')
  .meta({ description: 'A line written to standard input (e.g. `stop`) or a signal (`SIGTERM`, `SIGINT`, `^C`, `^D`).' });

export const readyPattern = text(255)
  .superRefine(problem(patternProblem))
  .nullable()
  .meta({ description: 'Regular expression of the line that says the server is ready; null: running at once.' });

export const blueprintVariableInput = z.object({
  key: variableKey,
  name: displayName(100).optional().meta({ description: 'Shown to people; default: the key.' }),
  description: description.optional(),
  default: text(8192).optional().meta({ description: 'Default value; default empty.' }),
  rules: variableRules.optional(),
  userViewable: z.boolean({ message: 'must be true or false' }).optional().meta({ description: "The server's users may see it; default true." }),
  userEditable: z.boolean({ message: 'must be true or false' }).optional().meta({ description: "The server's users may change it; default true." }),
});

const variableList = z
  .array(blueprintVariableInput, { message: 'must be an array' })
  .max(100, 'at most 100 variables')
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((v, i) => {
      if (seen.has(v.key)) ctx.addIssue({ code: 'custom', path: [i, 'key'], message: 'is used by another variable' });
      seen.add(v.key);
    });
  });

/** gitignore-style patterns (src/shared/file-denylist.ts), one per entry. */
const fileDenylist = z
  .array(
    z
      .string({ message: 'must be a list of patterns' })
      .min(1, 'must not be empty')
      .max(4096, 'must be at most 4096 characters')
      .refine((s) => !/[\u0000\r\n]/.test(s), 'must be one line without NUL'),
    { message: 'must be a list of patterns' },
  )
  .max(1000, 'at most 1000 patterns')
  .meta({ description: "Files the server's users may not touch through the file manager or SFTP: gitignore-style patterns (`server.jar`, `config/`, `*.sh`). Default none; replaces the whole list on PATCH.", example: ['server.jar'] });

/** Every key of `find` passes the checks of src/shared/config-file-checks.ts; a refused placeholder is a 422 here. */
function checkFind(find: Record<string, string>, ctx: z.RefinementCtx): void {
  const keys = Object.keys(find);
  if (!keys.length) ctx.addIssue({ code: 'custom', message: 'must name at least one key' });
  if (keys.length > CONFIG_LIMITS.keys) ctx.addIssue({ code: 'custom', message: `at most ${CONFIG_LIMITS.keys} keys` });
  for (const key of keys) {
    const message = configKeyProblem(key) ?? configValueProblem(find[key]!) ?? placeholderProblem(find[key]!);
    if (message) ctx.addIssue({ code: 'custom', path: [key], message });
  }
}

export const configFileInput = z
  .object({
    file: z.string({ message: 'must be a string' }).superRefine(problem(configFileNameProblem)).meta({ description: "Relative to the server's directory.", example: 'server.properties' }),
    parser: z.enum(CONFIG_PARSERS, { message: `must be one of ${CONFIG_PARSERS.join(', ')}` }),
    find: z
      .record(z.string(), z.string({ message: 'must be a string' }), { message: 'must be an object of key → value' })
      .superRefine(checkFind)
      .meta({ description: 'Key → value (one line); values may hold the allowed placeholders only (docs/blueprints.md).', example: { 'server-port': '{{server.build.default.port}}' } }),
  })
  .superRefine((f, ctx) => {
    for (const key of Object.keys(f.find)) {
      const message = parserKeyProblem(f.parser, key);
      if (message) ctx.addIssue({ code: 'custom', path: ['find', key], message });
    }
  })
  .meta({ id: 'BlueprintConfigFileInput' });

const configFiles = z
  .array(configFileInput, { message: 'must be a list of { file, parser, find }' })
  .max(CONFIG_LIMITS.files, `at most ${CONFIG_LIMITS.files} files`)
  .meta({ description: "Keys the node writes into the server's files before each start (as an egg's `config.files`). Default none; replaces the whole list on PATCH." });

const defaults = z.object({ memory, cpu, disk }, { message: 'must be an object with memory, cpu and disk' });

export const createBlueprintInput = z.object({
  key: blueprintKey,
  name: displayName(100),
  description: description.optional(),
  startup: startupTemplate,
  stop: stopCommand,
  ready: readyPattern.optional(),
  install: text(65536).nullable().optional().meta({ description: 'A script run once in the server directory at install; null: none.' }),
  installShell: z
    .enum(INSTALL_SHELLS, { message: `must be one of ${INSTALL_SHELLS.join(', ')}` })
    .nullable()
    .optional()
    .meta({ description: 'The interpreter of `install`: `sh`, `bash` or `ash` (an egg\'s entrypoint); null: /bin/sh.' }),
  variables: variableList.optional(),
  fileDenylist: fileDenylist.optional(),
  configFiles: configFiles.optional(),
  defaults: defaults.optional().meta({ description: 'For servers created without memory/cpu/disk; default 1024 MiB, 100, 4096 MiB.' }),
});
export type CreateBlueprintInput = z.output<typeof createBlueprintInput>;

export const updateBlueprintInput = createBlueprintInput.partial();
export type UpdateBlueprintInput = z.output<typeof updateBlueprintInput>;
export type BlueprintVariableInput = z.output<typeof blueprintVariableInput>;

function templateProblem(s: string): string | null {
  try {
    splitTemplate(s);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

function patternProblem(s: string): string | null {
  let re: RegExp;
  try {
    re = new RegExp(s); // as the agent compiles it
  } catch {
    return 'is not a valid regular expression';
  }
  return repeatsAmbiguousGroup(re.source) ? AMBIGUOUS_REPEAT : null;
}
