import { Migration } from '@mikro-orm/migrations';

/** What a node could not be told when it happened, kept until it takes it (src/nodes/node-notices.ts). */
export class Migration20261130000000NodeNotices extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "node_notices" ("id" bigserial primary key, "node_id" uuid not null, "path" varchar(200) not null, "body" jsonb not null, "created_at" timestamptz not null default now());`);
    this.addSql(`create index "node_notices_node_id_id_index" on "node_notices" ("node_id", "id");`);
    this.addSql(`alter table "node_notices" add constraint "node_notices_node_id_foreign" foreign key ("node_id") references "nodes" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "node_notices" cascade;`);
  }
}
