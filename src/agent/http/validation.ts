import { z } from 'zod';
import type { ServerSpec } from '../../shared/node-protocol';
import { CONFIG_PARSERS } from '../../shared/config-files';
import { CONFIG_LIMITS } from '../../shared/config-file-checks';
import { INSTALL_SHELLS, POWER_ACTIONS } from '../../shared/node-protocol';
import { AgentError } from '../errors';
import { VARIABLE_KEY_RE } from '../environment/env';
import { splitTemplate } from '../environment/template';

const validRegex = (s: string | null): boolean => {
  if (!s) return true;
  try {
    new RegExp(s);
    return true;
  } catch {
    return false;
  }
};

const validTemplate = (s: string): boolean => {
  try {
    return splitTemplate(s).length > 0;
  } catch {
    return false;
  }
};

export const serverSpecSchema = z.object({
  id: z.string().optional(),
  name: z.string().max(200).default(''),
  startup: z.string().min(1).max(8192).refine(validTemplate, 'must be a non-empty command template without unterminated quotes'),
  stop: z.string().max(512).nullable().default('SIGTERM'),
  ready: z.string().max(2048).nullable().default(null).refine(validRegex, 'must be a valid regular expression'),
  install: z.string().max(256 * 1024).nullable().default(null),
  installShell: z.enum(INSTALL_SHELLS).nullable().default(null),
  configFiles: z
    .array(
      z.object({
        file: z.string().min(1).max(CONFIG_LIMITS.file),
        parser: z.enum(CONFIG_PARSERS),
        find: z.record(z.string().min(1).max(CONFIG_LIMITS.key), z.string().max(CONFIG_LIMITS.value)).refine((f) => Object.keys(f).length <= CONFIG_LIMITS.keys, `at most ${CONFIG_LIMITS.keys} keys`),
      }),
    )
    .max(CONFIG_LIMITS.files)
    .default([]),
  variables: z
    .record(z.string().regex(VARIABLE_KEY_RE, 'invalid variable name'), z.union([z.string().max(65536), z.number(), z.boolean()]).nullable())
    .default({}),
  memory: z.number().int().min(1).max(16 * 1024 * 1024),
  cpu: z.number().int().min(0).max(100000),
  disk: z.number().int().min(1).max(1024 * 1024 * 1024),
  autoRestart: z.boolean().default(false),
  revision: z.number().int().min(0).default(0),
});

/** `at`: when the rights changed, on the panel's clock (ms); without it, now. */
export const revokeSchema = z.object({ userId: z.string().min(1).max(128), at: z.number().int().nonnegative().optional() });
/** Why a user's sessions end on the whole node: an administrator changed the account, or its own password changed. */
export const USER_REVOKE_REASONS = ['account', 'password'] as const;
export type UserRevokeReason = (typeof USER_REVOKE_REASONS)[number];
export const userRevokeSchema = revokeSchema.extend({ reason: z.enum(USER_REVOKE_REASONS).optional() });
export const powerSchema = z.object({ action: z.enum(POWER_ACTIONS as unknown as [string, ...string[]]) });
export const commandSchema = z.object({
  command: z
    .string()
    .min(1)
    .max(4096)
    .refine((s) => !/[\r\n\0]/.test(s), 'must be a single line'),
});

function validationError(err: z.ZodError): AgentError {
  const fields: Record<string, string> = {};
  for (const issue of err.issues) {
    const key = issue.path.map(String).join('.') || '_';
    if (!fields[key]) fields[key] = issue.message;
  }
  return new AgentError(422, 'VALIDATION_ERROR', 'Invalid request body', { fields });
}

export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const r = schema.safeParse(body);
  if (!r.success) throw validationError(r.error);
  return r.data;
}

export function parseSpec(id: string, body: unknown): ServerSpec {
  const s = parseBody(serverSpecSchema, body);
  if (s.id !== undefined && s.id !== id) throw new AgentError(422, 'VALIDATION_ERROR', 'Invalid request body', { fields: { id: 'must match the id in the path' } });
  const variables: Record<string, string> = {};
  for (const [k, v] of Object.entries(s.variables)) variables[k] = v === null ? '' : String(v);
  return {
    id,
    name: s.name,
    startup: s.startup,
    stop: s.stop ?? 'SIGTERM',
    ready: s.ready || null,
    install: s.install || null,
    installShell: s.installShell,
    configFiles: s.configFiles,
    variables,
    memory: s.memory,
    cpu: s.cpu,
    disk: s.disk,
    autoRestart: s.autoRestart,
    revision: s.revision,
  };
}
