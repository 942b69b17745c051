import { Migration } from '@mikro-orm/migrations';

/** servers.status_seq: the node's number of the recorded status, so that an older one cannot replace it (see ServerStateEvent.seq). */
export class Migration20261129020000StatusSeq extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "servers" add column "status_seq" bigint null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "servers" drop column if exists "status_seq";`);
  }
}
