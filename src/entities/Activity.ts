import { randomUUID } from 'node:crypto';
import { OptionalProps, Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * One entry of the activity log: who did what, when, from where. Rows are only ever inserted (and
 * pruned after the retention period); no API changes them. The server, actor and token are kept as
 * plain ids, so an entry outlives what it names; the actor's email is copied at the time of the action.
 * Never a password, token, cookie or file content in `properties`.
 */
@Entity({ tableName: 'activity' })
@Index({ properties: ['createdAt', 'id'] })
@Index({ properties: ['serverId', 'createdAt'] })
@Index({ properties: ['actorId', 'createdAt'] })
export class Activity {
  [OptionalProps]?: 'createdAt' | 'serverId' | 'actorId' | 'actorEmail' | 'apiTokenId' | 'ip' | 'properties';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  /** `area:action`, e.g. `server:power.start`. */
  @Property({ type: 'string', length: 64 })
  event!: string;

  @Property({ type: 'uuid', nullable: true })
  serverId: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  actorId: string | null = null;

  @Property({ type: 'string', length: 254, nullable: true })
  actorEmail: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  apiTokenId: string | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  ip: string | null = null;

  @Property({ type: 'json' })
  properties: Record<string, unknown> = {};

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();
}
