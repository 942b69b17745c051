import { Migration } from '@mikro-orm/migrations';

/** The SFTP server of each node: its port and host key fingerprint, as the node's agent reports them. */
export class Migration20261125100000Sftp extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "nodes" add column "sftp_port" int null, add column "sftp_fingerprint" varchar(100) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "nodes" drop column "sftp_port", drop column "sftp_fingerprint";`);
  }
}
