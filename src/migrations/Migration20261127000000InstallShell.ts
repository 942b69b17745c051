import { Migration } from '@mikro-orm/migrations';

/** blueprints.install_shell: the interpreter of the install script (an egg's entrypoint). */
export class Migration20261127000000InstallShell extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "blueprints" add column "install_shell" varchar(16) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "blueprints" drop column "install_shell";`);
  }
}
