import { Migration } from '@mikro-orm/migrations';

/** The nonces of accepted node requests, shared by the gateway instances of a scale-out (src/services/node-nonces.ts). */
export class Migration20261129000000NodeNonces extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "node_nonces" ("node_id" uuid not null, "nonce" varchar(64) not null, "expires_at" timestamptz not null, constraint "node_nonces_pkey" primary key ("node_id", "nonce"));`);
    this.addSql(`create index "node_nonces_expires_at_index" on "node_nonces" ("expires_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "node_nonces" cascade;`);
  }
}
