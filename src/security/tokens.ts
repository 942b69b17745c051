import { createHash, randomBytes } from 'node:crypto';

/** Opaque secrets: a recognisable prefix plus 32 random bytes. Only `hashSecret(secret)` is stored. */
export const SESSION_PREFIX = 'hps_';
export const API_TOKEN_PREFIX = 'hpt_';

export function newSecret(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
