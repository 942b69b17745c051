import { randomUUID } from 'node:crypto';
import { OptionalProps, Entity, Index, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Server } from './Server.js';
import { User } from './User.js';

/**
 * A user who shares a server they do not own, with the permission keys the owner granted and the
 * folders (`paths`, relative to the server's root) that their file keys are limited to (empty: the
 * whole server). Removed with the server or the account.
 */
@Entity({ tableName: 'subusers' })
@Unique({ properties: ['server', 'user'] })
@Index({ properties: ['user'] })
export class Subuser {
  [OptionalProps]?: 'createdAt' | 'updatedAt' | 'paths';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Server, { deleteRule: 'cascade' })
  server!: Server;

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @Property({ type: 'json' })
  permissions!: string[];

  @Property({ type: 'json' })
  paths: string[] = [];

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
