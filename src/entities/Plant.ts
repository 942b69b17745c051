import { OptionalProps, Entity, PrimaryKey, Property } from '@mikro-orm/core';

/** The sample plant store. The id is an int64 kept exactly (a string in JS). */
@Entity({ tableName: 'plants' })
export class Plant {
  [OptionalProps]?: 'createdAt' | 'tag';

  @PrimaryKey({ type: 'bigint', autoincrement: false })
  id!: string;

  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'text', nullable: true })
  tag: string | null = null;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();
}
