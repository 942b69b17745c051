/** Types of the file manager (text contents only; uploads and downloads stay REST). */
import { Field, Float, Int, ObjectType } from 'type-graphql';

@ObjectType('FileEntry', { simpleResolvers: true, description: 'A file, folder or symlink of a server.' })
export class FileEntryType {
  @Field()
  name!: string;
  @Field({ description: 'From the server\u2019s root.' })
  path!: string;
  @Field({ description: 'file, directory, symlink or other' })
  type!: string;
  @Field(() => Float, { description: 'Bytes (0 for anything but a file); a Float, as files pass 2 GiB (Int is 32 bits).' })
  size!: number;
  @Field({ description: 'Permission bits, octal (0644).' })
  mode!: string;
  @Field()
  modifiedAt!: string;
}

@ObjectType('FilePage', { simpleResolvers: true })
export class FilePageType {
  @Field(() => [FileEntryType])
  items!: FileEntryType[];
  @Field(() => Int)
  total!: number;
  @Field(() => Int)
  page!: number;
  @Field(() => Int)
  limit!: number;
}

@ObjectType('FileContents', { simpleResolvers: true, description: 'A text file\u2019s contents (UTF-8, at most FILE_EDIT_MAX_BYTES).' })
export class FileContentsType {
  @Field()
  path!: string;
  @Field()
  contents!: string;
}

@ObjectType('SftpDetails', { simpleResolvers: true, description: 'How to connect to a server over SFTP: `sftp -P <port> <username>@<host>`, with the account\u2019s password.' })
export class SftpDetailsType {
  @Field({ description: 'The node\u2019s address.' })
  host!: string;
  @Field(() => Int, { nullable: true, description: 'Null until the node reported its SFTP server.' })
  port!: number | null;
  @Field({ description: '`<account email>.<first 8 characters of the server id>`' })
  username!: string;
  @Field(() => String, { nullable: true, description: 'The node\u2019s host key fingerprint (`SHA256:…`), to compare with what the client shows on the first connection.' })
  fingerprint!: string | null;
}
