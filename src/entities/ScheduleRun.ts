import { randomUUID } from 'node:crypto';
import { OptionalProps, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { Schedule } from './Schedule.js';

export type RunTrigger = 'cron' | 'manual';
export type RunStatus = 'running' | 'completed' | 'failed' | 'skipped';
export type RunTaskStatus = 'pending' | 'running' | 'completed' | 'failed' | 'skipped';

export interface RunTask {
  sequence: number;
  status: RunTaskStatus;
  error: string | null;
}

/** One run of a schedule (due by cron or started by hand) and how each of its tasks went. */
@Entity({ tableName: 'schedule_runs' })
@Index({ properties: ['schedule', 'startedAt'] })
export class ScheduleRun {
  [OptionalProps]?: 'finishedAt' | 'startedAt' | 'aliveAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Schedule, { deleteRule: 'cascade' })
  schedule!: Schedule;

  @Property({ type: 'string', length: 16 })
  trigger!: RunTrigger;

  @Property({ type: 'string', length: 16 })
  status!: RunStatus;

  @Property({ type: 'json' })
  tasks!: RunTask[];

  @Property({ type: 'datetime' })
  startedAt: Date = new Date();

  @Property({ type: 'datetime', nullable: true })
  finishedAt: Date | null = null;

  /** The last sign of life of the instance running it (null: none since it started); src/schedules/abandoned.ts. */
  @Property({ type: 'datetime', nullable: true })
  aliveAt: Date | null = null;
}
