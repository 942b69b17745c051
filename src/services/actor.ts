import { AppError } from '../errors.js';
import type { UserRecord } from './records.js';

/** Who is calling: resolved once per request by the shared auth middleware (REST, GraphQL, WS). */
export interface Actor {
  /**
   * The caller's account as read with the credential: a plain read-only record, not a managed entity
   * (merging an entity into the request's identity map cost 4% of a REST page). A service that
   * changes the account loads the entity itself.
   */
  user: UserRecord;
  via: 'session' | 'api_token';
  /** The session id (via session) or the API token id (via api_token). */
  credentialId: string;
  credentialCreatedAt: Date;
  credentialExpiresAt: Date | null;
  /** The client address the request came from (behind a trusted proxy: the one it reports); for the activity log. */
  ip?: string | null;
}

export function requireActor(actor: Actor | null | undefined): Actor {
  if (!actor) throw AppError.unauthorized();
  return actor;
}

export function requireAdmin(actor: Actor | null | undefined): Actor {
  const a = requireActor(actor);
  if (a.user.role !== 'admin') throw AppError.forbidden('This action is for administrators only.');
  return a;
}

export const isAdmin = (actor: Actor) => actor.user.role === 'admin';
