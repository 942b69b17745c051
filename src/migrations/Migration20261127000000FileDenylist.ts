import { Migration } from '@mikro-orm/migrations';

/** Blueprints keep the files their servers' users may not touch (Pterodactyl's `file_denylist`). */
export class Migration20261127000000FileDenylist extends Migration {
  override async up(): Promise<void> {
    // the default fills the rows there are; new rows get their list from the entity
    this.addSql(`alter table "blueprints" add column "file_denylist" jsonb not null default '[]';`);
    this.addSql(`alter table "blueprints" alter column "file_denylist" drop default;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "blueprints" drop column "file_denylist";`);
  }
}
