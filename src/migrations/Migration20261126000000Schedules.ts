import { Migration } from '@mikro-orm/migrations';

/** Schedules (cron, time zone, tasks) and the history of their runs. */
export class Migration20261126000000Schedules extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "schedules" ("id" uuid not null, "server_id" uuid not null, "name" varchar(100) not null, "cron" varchar(200) not null, "timezone" varchar(64) not null default 'UTC', "enabled" boolean not null default true, "only_when_online" boolean not null default false, "tasks" jsonb not null, "last_run_at" timestamptz null, "next_run_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "schedules_pkey" primary key ("id"));`);
    this.addSql(`create index "schedules_server_id_created_at_index" on "schedules" ("server_id", "created_at");`);
    this.addSql(`create index "schedules_next_run_at_index" on "schedules" ("next_run_at");`);
    this.addSql(`alter table "schedules" add constraint "schedules_server_id_foreign" foreign key ("server_id") references "servers" ("id") on update cascade on delete cascade;`);
    this.addSql(`create table "schedule_runs" ("id" uuid not null, "schedule_id" uuid not null, "trigger" varchar(16) not null, "status" varchar(16) not null, "tasks" jsonb not null, "started_at" timestamptz not null, "finished_at" timestamptz null, constraint "schedule_runs_pkey" primary key ("id"));`);
    this.addSql(`create index "schedule_runs_schedule_id_started_at_index" on "schedule_runs" ("schedule_id", "started_at");`);
    this.addSql(`alter table "schedule_runs" add constraint "schedule_runs_schedule_id_foreign" foreign key ("schedule_id") references "schedules" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "schedule_runs" cascade;`);
    this.addSql(`drop table if exists "schedules" cascade;`);
  }
}
