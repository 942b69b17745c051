import { randomUUID } from 'node:crypto';
import { OptionalProps, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { User } from './User.js';

/** A long-lived API token for integrations. Only the SHA-256 of the secret is stored. */
@Entity({ tableName: 'api_tokens' })
@Index({ properties: ['user', 'createdAt'] })
export class ApiToken {
  [OptionalProps]?: 'createdAt' | 'expiresAt' | 'lastUsedAt' | 'revokedAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @Property({ type: 'string', length: 100 })
  name!: string;

  @Property({ type: 'string', length: 64, unique: true })
  tokenHash!: string;

  /** The first characters of the secret, to recognise it in a list. */
  @Property({ type: 'string', length: 16 })
  prefix!: string;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', nullable: true })
  expiresAt: Date | null = null;

  @Property({ type: 'datetime', nullable: true })
  lastUsedAt: Date | null = null;

  @Property({ type: 'datetime', nullable: true })
  revokedAt: Date | null = null;
}
