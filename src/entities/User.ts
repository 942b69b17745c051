import { randomUUID } from 'node:crypto';
import { OptionalProps, Entity, Enum, PrimaryKey, Property } from '@mikro-orm/core';

export type Role = 'admin' | 'user';

@Entity({ tableName: 'users' })
export class User {
  [OptionalProps]?: 'createdAt' | 'updatedAt' | 'role';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  /** Stored lower-cased: emails are unique case-insensitively. */
  @Property({ type: 'string', length: 254, unique: true })
  email!: string;

  @Property({ type: 'string', length: 100 })
  name!: string;

  @Property({ type: 'string', length: 255, hidden: true, lazy: false })
  passwordHash!: string;

  @Enum({ items: ['admin', 'user'], type: 'string' })
  role: Role = 'user';

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
