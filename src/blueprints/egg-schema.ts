/**
 * The shape of a Pterodactyl egg (PTDL_v1 and PTDL_v2 exports) or a Pelican one (PLCN_v1 to PLCN_v3:
 * `startup_commands`, `tags`, `uuid`, `variables[].sort`, `config.*` as objects), checked before anything is
 * mapped: eggs come from anywhere, so every string has a length limit and every list a size limit. A
 * field of the wrong shape is a 422 naming it (`config.startup.done`, `variables.2.rules`, …).
 * Fields the mapping does not read are only bounded (they end up in the import's warnings).
 */
import { z } from 'zod';
import { variableNameProblem } from '../shared/variable-names.js';
import { isWellFormed, UNICODE_MESSAGE } from '../validation/common.js';

const text = (max: number) =>
  z
    .string({ message: 'must be a string' })
    .max(max, `must be at most ${max} characters`)
    .refine((s) => !s.includes('\u0000'), 'must not contain NUL characters')
    .refine(isWellFormed, UNICODE_MESSAGE);

/** Eggs store parts of `config` as a string of JSON; both that and the object itself are accepted. */
const jsonOf = <S extends z.ZodType>(schema: S) =>
  z.preprocess((v) => {
    if (typeof v !== 'string') return v;
    if (v.length > 65536) return 0; // too long to parse: refused as not an object
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return v; // the schema says what it should have been
    }
  }, schema).meta({ description: 'A JSON object, or a string holding one (as Pterodactyl exports it).' });

const flag = z.union([z.boolean(), z.literal(0), z.literal(1)], { message: 'must be true or false' }).nullish();

export const eggVariable = z.object({
  name: text(191).refine((s) => s.trim() !== '', 'must not be empty'),
  description: text(2000).nullish(),
  env_variable: z.string({ message: 'must be a string' }).superRefine((s, ctx) => {
    const message = variableNameProblem(s);
    if (message) ctx.addIssue({ code: 'custom', message });
  }),
  default_value: z.union([text(8192), z.number(), z.boolean()], { message: 'must be a string' }).nullish(),
  user_viewable: flag,
  user_editable: flag,
  rules: z.union([text(1000), z.array(text(1000)).max(50, 'at most 50 rules')], { message: 'must be a string (or a list of rules)' }).nullish(),
  field_type: text(50).nullish(),
  sort: z.number({ message: 'must be a number' }).int('must be an integer').nullish(),
});
export type EggVariable = z.output<typeof eggVariable>;

const done = z.union([text(255), z.array(text(255)).max(20, 'at most 20 patterns')], { message: 'must be a string or a list of strings' });

const startupConfig = z.object({ done: done.nullish() }, { message: 'must be a JSON object (or a string of one) with `done`' });

/** `config.files` / `config.logs`: any JSON object (not mapped yet), bounded by the string limit above. */
const anyObject = z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())], { message: 'must be a JSON object (or a string of one)' });

export const EGG_VERSIONS = ['PTDL_v1', 'PTDL_v2', 'PLCN_v1', 'PLCN_v2', 'PLCN_v3'] as const;
const VERSIONS = 'PTDL_v1, PTDL_v2, PLCN_v1, PLCN_v2 or PLCN_v3';

const command = text(4096).refine((s) => s.trim() !== '', 'must not be empty');

export const eggSchema = z.object({
  meta: z.object({ version: z.enum(EGG_VERSIONS, { message: `must be ${VERSIONS}` }), update_url: text(2048).nullish() }, { message: `must be an object with version ${VERSIONS}` }),
  name: text(100).refine((s) => s.trim() !== '', 'must not be empty'),
  uuid: text(64).nullish(),
  author: text(254).nullish(),
  description: text(2000).nullish(),
  tags: z.array(text(100)).max(50, 'at most 50 tags').nullish(),
  features: z.array(text(100)).max(50, 'at most 50 features').nullish(),
  docker_images: z.record(text(200), text(500)).nullish(),
  images: z.array(text(500)).max(50, 'at most 50 images').nullish(),
  file_denylist: z.union([z.array(text(4096)).max(1000, 'at most 1000 entries'), text(65536)]).nullish(),
  startup: command.nullish(),
  /** Pelican (PLCN_v3): name → command; the first one is imported. */
  startup_commands: z
    .record(text(100), command, { message: 'must be an object: name → command' })
    .refine((c) => Object.keys(c).length <= 20, 'at most 20 commands')
    .nullish(),
  config: z.object(
    {
      files: jsonOf(anyObject).nullish(),
      startup: jsonOf(startupConfig),
      logs: jsonOf(anyObject).nullish(),
      stop: text(255).refine((s) => s.trim() !== '', 'must not be empty'),
      extends: text(100).nullish(),
    },
    { message: 'must be an object' },
  ),
  scripts: z
    .object({
      installation: z.object({ script: text(65536).nullish(), container: text(500).nullish(), entrypoint: text(100).nullish() }).nullish(),
    })
    .nullish(),
  variables: z.array(eggVariable, { message: 'must be a list' }).max(100, 'at most 100 variables').nullish(),
}).superRefine((egg, ctx) => {
  if (!egg.startup && !Object.keys(egg.startup_commands ?? {}).length) ctx.addIssue({ code: 'custom', path: ['startup'], message: 'is required (a command, or Pelican\'s startup_commands)' });
});
export type Egg = z.output<typeof eggSchema>;
