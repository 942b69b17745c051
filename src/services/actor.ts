import type { User } from '../entities/User.js';
import { AppError } from '../errors.js';

/** Who is calling: resolved once per request by the shared auth middleware (REST, GraphQL, WS). */
export interface Actor {
  user: User;
  via: 'session' | 'api_token';
  /** The session id (via session) or the API token id (via api_token). */
  credentialId: string;
  credentialCreatedAt: Date;
  credentialExpiresAt: Date | null;
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
