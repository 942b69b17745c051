import type { Constructor } from '@mikro-orm/core';
import type { Migration } from '@mikro-orm/migrations';
import { Migration20261123000000Initial } from './Migration20261123000000Initial.js';
import { Migration20261124000000SpecRevision } from './Migration20261124000000SpecRevision.js';
import { Migration20261125000000SharedAccess } from './Migration20261125000000SharedAccess.js';
import { Migration20261125100000Sftp } from './Migration20261125100000Sftp.js';
import { Migration20261125110000Backups } from './Migration20261125110000Backups.js';
import { Migration20261126000000Schedules } from './Migration20261126000000Schedules.js';
import { Migration20261127000000FileDenylist } from './Migration20261127000000FileDenylist.js';
import { Migration20261127000000InstallShell } from './Migration20261127000000InstallShell.js';
import { Migration20261127010000ConfigFiles } from './Migration20261127010000ConfigFiles.js';
import { Migration20261128000000BackupDeleting } from './Migration20261128000000BackupDeleting.js';
import { Migration20261129000000NodeNonces } from './Migration20261129000000NodeNonces.js';
import { Migration20261129010000ScheduleRunAlive } from './Migration20261129010000ScheduleRunAlive.js';
import { Migration20261129020000StatusSeq } from './Migration20261129020000StatusSeq.js';
import { Migration20261130000000NodeNotices } from './Migration20261130000000NodeNotices.js';

/** Every migration in order. New migrations are appended here (explicit list: works from ts and js). */
export const MIGRATIONS: { name: string; class: Constructor<Migration> }[] = [
  { name: 'Migration20261123000000Initial', class: Migration20261123000000Initial },
  { name: 'Migration20261124000000SpecRevision', class: Migration20261124000000SpecRevision },
  { name: 'Migration20261125000000SharedAccess', class: Migration20261125000000SharedAccess },
  { name: 'Migration20261125100000Sftp', class: Migration20261125100000Sftp },
  { name: 'Migration20261125110000Backups', class: Migration20261125110000Backups },
  { name: 'Migration20261126000000Schedules', class: Migration20261126000000Schedules },
  { name: 'Migration20261127000000FileDenylist', class: Migration20261127000000FileDenylist },
  { name: 'Migration20261127000000InstallShell', class: Migration20261127000000InstallShell },
  { name: 'Migration20261127010000ConfigFiles', class: Migration20261127010000ConfigFiles },
  { name: 'Migration20261128000000BackupDeleting', class: Migration20261128000000BackupDeleting },
  { name: 'Migration20261129000000NodeNonces', class: Migration20261129000000NodeNonces },
  { name: 'Migration20261129010000ScheduleRunAlive', class: Migration20261129010000ScheduleRunAlive },
  { name: 'Migration20261129020000StatusSeq', class: Migration20261129020000StatusSeq },
  { name: 'Migration20261130000000NodeNotices', class: Migration20261130000000NodeNotices },
];
