/**
 * What one file request may reach besides the server's directory: the caller's folder scopes and,
 * beyond listing, the blueprint's deny-list. The panel and the SFTP server check the paths they are
 * given; the worker checks, with these, where the descriptors it opened really are, so a link made
 * by the server's own process (or swapped in during the request) cannot lead a scoped subuser out of
 * their folders or anyone onto a denied file.
 */
import { AgentError } from '../errors';
import { deniedMessage, denylistMatcher, type DenylistMatcher } from '../../shared/file-denylist';
import { onTheWay, withinScopes } from '../../shared/scopes';

export interface Reach {
  /** folders the caller's file keys are limited to (normalised); absent or empty: everywhere */
  scopes?: string[];
  /** the deny-list's patterns, for requests beyond listing */
  denied?: string[];
}

/**
 * How a path is used: `object` is what the request acts on (it must lie in the scopes and not be
 * denied); `way` is a folder the request only goes through to reach its object (it may be a folder
 * on the way to a scope).
 */
export type Use = 'object' | 'way';

/** A Reach as a query parameter (the panel's calls to the agent are signed over their query). */
export const encodeReach = (r: Reach): string => Buffer.from(JSON.stringify(r)).toString('base64url');

/** A Reach from its query parameter; a malformed one is a 422 (the panel never sends one). */
export function decodeReach(raw: string | null): Reach | undefined {
  if (raw === null) return undefined;
  try {
    const r = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Reach;
    const strings = (v: unknown) => v === undefined || (Array.isArray(v) && v.every((s) => typeof s === 'string'));
    if (r && typeof r === 'object' && strings(r.scopes) && strings(r.denied)) return { scopes: r.scopes, denied: r.denied };
  } catch {
    // answered below
  }
  throw new AgentError(422, 'VALIDATION_ERROR', 'reach: not a valid reach parameter', { fields: { reach: 'base64url JSON { scopes?: string[], denied?: string[] }' } });
}

export class ReachCheck {
  private readonly scopes: readonly string[];
  private readonly deniedBy: DenylistMatcher;

  constructor(reach: Reach) {
    this.scopes = reach.scopes ?? [];
    this.deniedBy = denylistMatcher(reach.denied);
  }

  /** Whether the caller's file keys are limited to some folders. */
  get scoped(): boolean {
    return this.scopes.length > 0;
  }

  /** Throws 403 FORBIDDEN when `real` (where `shown` really is, `/a/b` in the server) is out of reach. */
  check(real: string, shown: string, use: Use): void {
    const inScope = use === 'object' ? withinScopes(this.scopes, real) : onTheWay(this.scopes, real);
    if (!inScope) throw new AgentError(403, 'FORBIDDEN', `${shown} leads to ${real} through a symlink, outside the folders your access is limited to (${this.scopes.join(', ')}).`);
    if (use === 'way') return;
    const pattern = this.deniedBy(real);
    if (pattern !== null) throw new AgentError(403, 'FORBIDDEN', real === shown ? deniedMessage(real, pattern) : `${shown} leads to ${real} through a symlink. ${deniedMessage(real, pattern)}`);
  }
}
