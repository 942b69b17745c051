import { Migration } from '@mikro-orm/migrations';

/** Backups (kept by the nodes; their records here), each server's backup limit, and its `restoring` status. */
export class Migration20261125110000Backups extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "backups" ("id" uuid not null, "server_id" uuid not null, "name" varchar(100) not null, "status" text check ("status" in ('pending', 'completed', 'failed')) not null default 'pending', "locked" boolean not null default false, "ignored" jsonb not null, "size" bigint not null default 0, "files" int not null default 0, "sha256" varchar(64) null, "error" text null, "created_at" timestamptz not null, "completed_at" timestamptz null, constraint "backups_pkey" primary key ("id"));`);
    this.addSql(`create index "backups_server_id_created_at_index" on "backups" ("server_id", "created_at");`);
    this.addSql(`alter table "backups" add constraint "backups_server_id_foreign" foreign key ("server_id") references "servers" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "servers" add column "backup_limit" int not null default 5;`);
    this.addSql(`alter table "servers" drop constraint if exists "servers_status_check";`);
    this.addSql(`alter table "servers" add constraint "servers_status_check" check ("status" in ('installing', 'install_failed', 'offline', 'starting', 'running', 'stopping', 'restoring'));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "backups" cascade;`);
    this.addSql(`alter table "servers" drop column "backup_limit";`);
    this.addSql(`alter table "servers" drop constraint if exists "servers_status_check";`);
    this.addSql(`alter table "servers" add constraint "servers_status_check" check ("status" in ('installing', 'install_failed', 'offline', 'starting', 'running', 'stopping'));`);
  }
}
