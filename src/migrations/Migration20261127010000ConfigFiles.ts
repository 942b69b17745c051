import { Migration } from '@mikro-orm/migrations';

/** blueprints.config_files: keys the agent writes into a server's files at each start (an egg's `config.files`). */
export class Migration20261127010000ConfigFiles extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "blueprints" add column "config_files" jsonb not null default '[]';`);
    this.addSql(`alter table "blueprints" alter column "config_files" drop default;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "blueprints" drop column "config_files";`);
  }
}
