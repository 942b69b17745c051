/** Inputs of the nodes resource (admin only). */
import { isIP } from 'node:net';
import { z } from 'zod';
import { displayName } from './common.js';
import { INT32_MAX } from './servers.js';

const HOSTNAME = /^(?=.{1,253}$)(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\.?$/;

/** A hostname (RFC 1123 labels) or an IPv4/IPv6 address; stored lower-cased. */
export const fqdn = z
  .string({ message: 'must be a string' })
  .trim()
  .min(1, 'must not be empty')
  .max(253, 'must be at most 253 characters')
  .refine((s) => isIP(s) !== 0 || (HOSTNAME.test(s) && !/^[0-9.]+$/.test(s)), 'must be a hostname or an IP address')
  .transform((s) => s.toLowerCase())
  .meta({ description: 'Hostname or IP address of the node agent (stored lower-cased).', example: 'node1.example.com' });

const int = (min: number, max: number) =>
  z
    .number({ message: 'must be an integer' })
    .int('must be an integer')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

export const createNodeInput = z.object({
  name: displayName(100),
  fqdn,
  port: int(1, 65535).default(5000).meta({ description: 'Port of the node agent (HTTP API and console channel).' }),
  scheme: z.enum(['http', 'https'], { message: 'must be http or https' }).default('http').meta({ description: '`https`: the console address is `wss://`, else `ws://`.' }),
  /** Allocatable memory, MiB. */
  memory: int(64, INT32_MAX).meta({ description: 'Allocatable memory in MiB.', example: 8192 }),
  /** Allocatable disk, MiB. */
  disk: int(128, INT32_MAX).meta({ description: 'Allocatable disk in MiB.', example: 65536 }),
  /** CPU cores of the machine; bounds a server's cpu (cores × 100). Reported by the agent when absent. */
  cpuCores: int(1, 4096).nullable().optional().meta({ description: "CPU cores of the machine; bounds a server's cpu (cores × 100). Reported by the agent when absent." }),
});
export type CreateNodeInput = z.output<typeof createNodeInput>;

const { port, scheme } = createNodeInput.shape;

/**
 * `PATCH /nodes/:id`: the fields of the create body with its rules, each optional and without a
 * default (an absent field keeps its value). `cpuCores: null` lets the agent's heartbeat fill it in.
 */
export const updateNodeInput = createNodeInput
  .extend({ port: port.unwrap().meta(port.meta() ?? {}), scheme: scheme.unwrap().meta(scheme.meta() ?? {}) })
  .partial();
export type UpdateNodeInput = z.output<typeof updateNodeInput>;
