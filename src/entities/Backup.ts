import { randomUUID } from 'node:crypto';
import { OptionalProps, Entity, Enum, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { Server } from './Server.js';

export type BackupStatus = 'pending' | 'completed' | 'failed';
export const BACKUP_STATUSES: readonly BackupStatus[] = ['pending', 'completed', 'failed'];

/**
 * A backup of a server's files, kept by its node (content-addressed: src/agent/backups). `files` and
 * `size` count what is done while it is pending, and all of it once completed. Removed with the server.
 */
@Entity({ tableName: 'backups' })
@Index({ properties: ['server', 'createdAt'] })
export class Backup {
  [OptionalProps]?: 'createdAt' | 'status' | 'locked' | 'ignored' | 'size' | 'files' | 'sha256' | 'error' | 'completedAt' | 'deletingSince';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Server, { deleteRule: 'cascade' })
  server!: Server;

  @Property({ type: 'string', length: 100 })
  name!: string;

  @Enum({ items: [...BACKUP_STATUSES], type: 'string' })
  status: BackupStatus = 'pending';

  @Property({ type: 'boolean' })
  locked: boolean = false;

  @Property({ type: 'json' })
  ignored: string[] = [];

  /** bytes of the files */
  @Property({ type: 'bigint', runtimeType: 'number' })
  size: number = 0;

  @Property({ type: 'integer' })
  files: number = 0;

  @Property({ type: 'string', length: 64, nullable: true })
  sha256: string | null = null;

  @Property({ type: 'text', nullable: true })
  error: string | null = null;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', nullable: true })
  completedAt: Date | null = null;

  /** when a delete began asking the node (src/services/backups.service.ts); not shown in the API */
  @Property({ type: 'datetime', nullable: true })
  deletingSince: Date | null = null;
}
