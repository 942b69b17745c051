import { Migration } from '@mikro-orm/migrations';

/** Initial schema: accounts, sessions, API tokens, nodes, blueprints, servers, plants. */
export class Migration20261123000000Initial extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "blueprints" ("id" uuid not null, "key" varchar(64) not null, "name" varchar(100) not null, "description" text not null default '', "startup" text not null, "stop" varchar(255) not null, "ready" varchar(255) null, "install" text null, "variables" jsonb not null, "defaults" jsonb not null, "builtin" boolean not null default false, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "blueprints_pkey" primary key ("id"));`);
    this.addSql(`alter table "blueprints" add constraint "blueprints_key_unique" unique ("key");`);
    this.addSql(`create table "nodes" ("id" uuid not null, "name" varchar(100) not null, "fqdn" varchar(255) not null, "port" int not null default 5000, "scheme" text check ("scheme" in ('http', 'https')) not null default 'http', "memory" int not null, "cpu_cores" int null, "disk" int not null, "status" text check ("status" in ('online', 'offline')) not null default 'offline', "last_seen_at" timestamptz null, "token_hash" varchar(64) null, "key_enc" text null, "token_created_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "nodes_pkey" primary key ("id"));`);
    this.addSql(`alter table "nodes" add constraint "nodes_name_unique" unique ("name");`);
    this.addSql(`create table "plants" ("id" bigint not null, "name" text not null, "tag" text null, "created_at" timestamptz not null, constraint "plants_pkey" primary key ("id"));`);
    this.addSql(`create table "users" ("id" uuid not null, "email" varchar(254) not null, "name" varchar(100) not null, "password_hash" varchar(255) not null, "role" text check ("role" in ('admin', 'user')) not null default 'user', "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "users_pkey" primary key ("id"));`);
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email");`);
    this.addSql(`create table "sessions" ("id" uuid not null, "user_id" uuid not null, "token_hash" varchar(64) not null, "created_at" timestamptz not null, "expires_at" timestamptz not null, "last_used_at" timestamptz null, constraint "sessions_pkey" primary key ("id"));`);
    this.addSql(`alter table "sessions" add constraint "sessions_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "sessions_user_id_index" on "sessions" ("user_id");`);
    this.addSql(`create table "servers" ("id" uuid not null, "name" varchar(100) not null, "description" text not null default '', "owner_id" uuid not null, "node_id" uuid not null, "blueprint_id" uuid not null, "memory" int not null, "cpu" int not null, "disk" int not null, "status" text check ("status" in ('installing', 'install_failed', 'offline', 'starting', 'running', 'stopping')) not null default 'installing', "variables" jsonb not null, "auto_restart" boolean not null default false, "last_exit_code" int null, "last_crash_at" timestamptz null, "last_stop_reason" varchar(32) null, "crash_count" int not null default 0, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "servers_pkey" primary key ("id"));`);
    this.addSql(`create index "servers_node_id_index" on "servers" ("node_id");`);
    this.addSql(`create index "servers_status_index" on "servers" ("status");`);
    this.addSql(`create index "servers_created_at_id_index" on "servers" ("created_at", "id");`);
    this.addSql(`create index "servers_owner_id_created_at_id_index" on "servers" ("owner_id", "created_at", "id");`);
    this.addSql(`create table "api_tokens" ("id" uuid not null, "user_id" uuid not null, "name" varchar(100) not null, "token_hash" varchar(64) not null, "prefix" varchar(16) not null, "created_at" timestamptz not null, "expires_at" timestamptz null, "last_used_at" timestamptz null, "revoked_at" timestamptz null, constraint "api_tokens_pkey" primary key ("id"));`);
    this.addSql(`alter table "api_tokens" add constraint "api_tokens_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "api_tokens_user_id_created_at_index" on "api_tokens" ("user_id", "created_at");`);
    this.addSql(`alter table "sessions" add constraint "sessions_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "servers" add constraint "servers_owner_id_foreign" foreign key ("owner_id") references "users" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "servers" add constraint "servers_node_id_foreign" foreign key ("node_id") references "nodes" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "servers" add constraint "servers_blueprint_id_foreign" foreign key ("blueprint_id") references "blueprints" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "api_tokens" add constraint "api_tokens_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    for (const t of ['api_tokens', 'servers', 'sessions', 'users', 'plants', 'nodes', 'blueprints']) {
      this.addSql(`drop table if exists "${t}" cascade;`);
    }
  }
}
