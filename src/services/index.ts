import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import type { MasterKey } from '../security/master-key.js';
import { AuthService } from './auth.service.js';
import { UsersService } from './users.service.js';

/** The domain layer: REST routes and GraphQL resolvers call these and nothing below them. */
export interface Services {
  auth: AuthService;
  users: UsersService;
}

export function createServices(orm: MikroORM, config: Config, masterKey: MasterKey): Services {
  return {
    auth: new AuthService(orm, config),
    users: new UsersService(orm),
  };
}
