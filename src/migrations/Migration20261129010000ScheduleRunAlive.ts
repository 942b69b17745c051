import { Migration } from '@mikro-orm/migrations';

/** A run's last sign of life, so that a run whose panel died is ended (src/schedules/abandoned.ts). */
export class Migration20261129010000ScheduleRunAlive extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "schedule_runs" add column "alive_at" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "schedule_runs" drop column if exists "alive_at";`);
  }
}
