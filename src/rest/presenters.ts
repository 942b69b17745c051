/** The JSON shapes of REST responses (the OpenAPI document describes the same shapes). */
import type { ApiToken } from '../entities/ApiToken.js';
import type { User } from '../entities/User.js';

export const presentUser = (u: User) => ({
  id: u.id,
  email: u.email,
  name: u.name,
  role: u.role,
  createdAt: u.createdAt,
  updatedAt: u.updatedAt,
});

export const presentApiToken = (t: ApiToken) => ({
  id: t.id,
  name: t.name,
  prefix: t.prefix,
  createdAt: t.createdAt,
  expiresAt: t.expiresAt,
  lastUsedAt: t.lastUsedAt,
});
