import { Migration } from '@mikro-orm/migrations';

/** servers.spec_revision: orders the specs pushed to a node (see ServerSpec.revision). */
export class Migration20261124000000SpecRevision extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "servers" add column "spec_revision" int not null default 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "servers" drop column "spec_revision";`);
  }
}
