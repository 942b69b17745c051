import { Migration } from '@mikro-orm/migrations';

/** Subusers (shared access with permission keys) and the activity log. */
export class Migration20261125000000SharedAccess extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "subusers" ("id" uuid not null, "server_id" uuid not null, "user_id" uuid not null, "permissions" jsonb not null, "paths" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "subusers_pkey" primary key ("id"));`);
    this.addSql(`alter table "subusers" add constraint "subusers_server_id_user_id_unique" unique ("server_id", "user_id");`);
    this.addSql(`create index "subusers_user_id_index" on "subusers" ("user_id");`);
    this.addSql(`alter table "subusers" add constraint "subusers_server_id_foreign" foreign key ("server_id") references "servers" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "subusers" add constraint "subusers_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`create table "activity" ("id" uuid not null, "event" varchar(64) not null, "server_id" uuid null, "actor_id" uuid null, "actor_email" varchar(254) null, "api_token_id" uuid null, "ip" varchar(64) null, "properties" jsonb not null, "created_at" timestamptz not null, constraint "activity_pkey" primary key ("id"));`);
    this.addSql(`create index "activity_created_at_id_index" on "activity" ("created_at", "id");`);
    this.addSql(`create index "activity_server_id_created_at_index" on "activity" ("server_id", "created_at");`);
    this.addSql(`create index "activity_actor_id_created_at_index" on "activity" ("actor_id", "created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "subusers" cascade;`);
    this.addSql(`drop table if exists "activity" cascade;`);
  }
}
