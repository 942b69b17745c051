import { Migration } from '@mikro-orm/migrations';

/** A backup being deleted on its node carries when that began (no transaction waits on the node). */
export class Migration20261128000000BackupDeleting extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "backups" add column "deleting_since" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "backups" drop column "deleting_since";`);
  }
}
