import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { Paginated } from './page.js';

@ObjectType('Backup', { simpleResolvers: true, description: 'A backup of a server\u2019s files, kept by its node (REST: /servers/:id/backups).' })
export class BackupType {
  @Field(() => ID)
  id!: string;
  @Field(() => ID)
  serverId!: string;
  @Field()
  name!: string;
  @Field({ description: 'pending (files and size count what is done), completed or failed.' })
  status!: string;
  @Field()
  locked!: boolean;
  @Field(() => [String], { description: 'Ignore patterns given (gitignore style).' })
  ignored!: string[];
  @Field(() => Number, { description: 'Bytes of the files in it.' })
  size!: number;
  @Field(() => Int)
  files!: number;
  @Field(() => String, { nullable: true })
  sha256!: string | null;
  @Field(() => String, { nullable: true })
  error!: string | null;
  @Field()
  createdAt!: Date;
  @Field(() => Date, { nullable: true })
  completedAt!: Date | null;
}

@ObjectType('BackupPage', { simpleResolvers: true })
export class BackupPage extends Paginated(BackupType) {}

@InputType('CreateBackupInput')
export class CreateBackupInput {
  @Field({ nullable: true })
  name?: string;
  @Field(() => [String], { nullable: true, description: 'gitignore-style patterns; default: .hostpanelignore at the server\u2019s root.' })
  ignored?: string[];
  @Field({ nullable: true })
  locked?: boolean;
}
