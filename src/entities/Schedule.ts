import { randomUUID } from 'node:crypto';
import { OptionalProps, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { Server } from './Server.js';

export type TaskAction = 'command' | 'power' | 'backup';

/** One step of a schedule; `sequence` is its position (1..10). */
export interface ScheduleTask {
  sequence: number;
  action: TaskAction;
  payload: Record<string, unknown>;
  /** Seconds to wait after the previous task (before the first: after the run starts). */
  offsetSeconds: number;
  continueOnFailure: boolean;
}

/**
 * A cron schedule of a server: five-field `cron` read in the IANA `timezone`, and the tasks it runs
 * in order. `nextRunAt` is the instant of the next due run (null while disabled); the runners of
 * every panel instance claim a due run by moving it forward (src/schedules/claim.ts). Removed with
 * the server.
 */
@Entity({ tableName: 'schedules' })
@Index({ properties: ['server', 'createdAt'] })
@Index({ properties: ['nextRunAt'] })
export class Schedule {
  [OptionalProps]?: 'createdAt' | 'updatedAt' | 'lastRunAt' | 'nextRunAt' | 'enabled' | 'onlyWhenOnline' | 'timezone';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Server, { deleteRule: 'cascade' })
  server!: Server;

  @Property({ type: 'string', length: 100 })
  name!: string;

  @Property({ type: 'string', length: 200 })
  cron!: string;

  @Property({ type: 'string', length: 64 })
  timezone: string = 'UTC';

  @Property({ type: 'boolean' })
  enabled: boolean = true;

  @Property({ type: 'boolean' })
  onlyWhenOnline: boolean = false;

  @Property({ type: 'json' })
  tasks!: ScheduleTask[];

  @Property({ type: 'datetime', nullable: true })
  lastRunAt: Date | null = null;

  @Property({ type: 'datetime', nullable: true })
  nextRunAt: Date | null = null;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
