import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { Paginated } from './page.js';

@ObjectType('BlueprintVariable', { simpleResolvers: true, description: 'A variable of a blueprint; `rules` is a `|`-separated rule list (e.g. `required|integer|between:1,100`).' })
export class BlueprintVariableType {
  @Field()
  key!: string;

  @Field({ description: 'Shown to people.' })
  name!: string;

  @Field()
  description!: string;

  @Field()
  default!: string;

  @Field()
  rules!: string;

  @Field({ description: "The server's users may see it." })
  userViewable!: boolean;

  @Field({ description: "The server's users may change it." })
  userEditable!: boolean;
}

@ObjectType('ResourceDefaults', { simpleResolvers: true, description: 'memory and disk in MiB, cpu in percent of one core.' })
export class ResourceDefaultsType {
  @Field(() => Int)
  memory!: number;

  @Field(() => Int)
  cpu!: number;

  @Field(() => Int)
  disk!: number;
}

@ObjectType('BlueprintConfigFile', { simpleResolvers: true, description: "A file whose keys the node writes before each start of a server (an egg's config.files)." })
export class BlueprintConfigFileType {
  @Field({ description: "Relative to the server's directory." })
  file!: string;

  @Field({ description: 'properties, file, ini, json, yaml or xml.' })
  parser!: string;

  @Field(() => GraphQLJSONObject, { description: 'Key → value; values may hold the allowed placeholders (docs/blueprints.md).' })
  find!: Record<string, string>;
}

@ObjectType('Blueprint', { simpleResolvers: true, description: 'A template for servers: how to install, start, detect readiness and stop.' })
export class BlueprintType {
  @Field(() => ID)
  id!: string;

  @Field({ description: 'Stable slug of the blueprint.' })
  key!: string;

  @Field()
  name!: string;

  @Field()
  description!: string;

  @Field({ description: 'Command template with {{VARIABLES}}.' })
  startup!: string;

  @Field({ description: 'Stop command written to stdin, or a signal (SIGTERM, SIGINT, ^C, ^D).' })
  stop!: string;

  @Field(() => String, { nullable: true, description: 'Regular expression of the "ready" line; null: running at once.' })
  ready!: string | null;

  @Field(() => String, { nullable: true })
  install!: string | null;

  @Field(() => String, { nullable: true, description: 'The interpreter of install (sh, bash, ash); null: /bin/sh.' })
  installShell!: string | null;

  @Field(() => [BlueprintConfigFileType], { description: "Keys written into the server's files before each start (an egg's config.files)." })
  configFiles!: BlueprintConfigFileType[];

  @Field(() => [BlueprintVariableType], { description: 'For everyone but administrators, without the variables hidden from users (`userViewable: false`).' })
  variables!: BlueprintVariableType[];

  @Field(() => [String], { description: "Files the server's users may not touch through the file manager or SFTP: gitignore-style patterns (Pterodactyl's file_denylist)." })
  fileDenylist!: string[];

  @Field(() => ResourceDefaultsType)
  defaults!: ResourceDefaultsType;

  @Field()
  builtin!: boolean;

  @Field()
  createdAt!: Date;

  @Field()
  updatedAt!: Date;
}

@ObjectType('BlueprintPage', { simpleResolvers: true })
export class BlueprintPage extends Paginated(BlueprintType) {}

@ObjectType('ImportWarning', { simpleResolvers: true, description: 'Something of the egg that the blueprint does not do.' })
export class ImportWarningType {
  @Field({ description: "The egg's field, e.g. `config.files`." })
  field!: string;

  @Field()
  message!: string;
}

@ObjectType('ImportedBlueprint', { simpleResolvers: true, description: 'POST /admin/blueprints/import: the blueprint and what of the egg it does not do.' })
export class ImportedBlueprintType {
  @Field(() => BlueprintType)
  blueprint!: BlueprintType;

  @Field(() => [ImportWarningType])
  warnings!: ImportWarningType[];
}

@InputType('BlueprintVariableInput')
export class BlueprintVariableInput {
  @Field()
  key!: string;

  @Field({ nullable: true, description: 'Default: the key.' })
  name?: string;

  @Field({ nullable: true })
  description?: string;

  @Field({ nullable: true, description: 'Default empty.' })
  default?: string;

  @Field({ nullable: true, description: 'e.g. `required|integer|between:1,100` (docs/blueprints.md).' })
  rules?: string;

  @Field({ nullable: true, description: 'Default true.' })
  userViewable?: boolean;

  @Field({ nullable: true, description: 'Default true.' })
  userEditable?: boolean;
}

@InputType('BlueprintConfigFileInput')
export class BlueprintConfigFileInput {
  @Field({ description: "Relative to the server's directory." })
  file!: string;

  @Field({ description: 'properties, file, ini, json, yaml or xml.' })
  parser!: string;

  @Field(() => GraphQLJSONObject, { description: 'Key → value (strings); values may hold the allowed placeholders only (docs/blueprints.md).' })
  find!: Record<string, unknown>;
}

@InputType('ResourceDefaultsInput')
export class ResourceDefaultsInput {
  @Field(() => Int)
  memory!: number;

  @Field(() => Int)
  cpu!: number;

  @Field(() => Int)
  disk!: number;
}

@InputType('CreateBlueprintInput')
export class CreateBlueprintInput {
  @Field({ description: 'Stable slug, unique.' })
  key!: string;

  @Field()
  name!: string;

  @Field({ nullable: true })
  description?: string;

  @Field({ description: 'Command template with {{VARIABLES}}.' })
  startup!: string;

  @Field({ description: 'Stop command written to stdin, or a signal (SIGTERM, SIGINT, ^C, ^D).' })
  stop!: string;

  @Field(() => String, { nullable: true, description: 'Regular expression of the "ready" line; null: running at once.' })
  ready?: string | null;

  @Field(() => String, { nullable: true })
  install?: string | null;

  @Field(() => String, { nullable: true, description: 'sh, bash or ash; null: /bin/sh.' })
  installShell?: string | null;

  @Field(() => [BlueprintVariableInput], { nullable: true })
  variables?: BlueprintVariableInput[];

  @Field(() => [String], { nullable: true, description: 'gitignore-style patterns of files users may not touch; default none.' })
  fileDenylist?: string[];

  @Field(() => [BlueprintConfigFileInput], { nullable: true, description: 'Default none.' })
  configFiles?: BlueprintConfigFileInput[];

  @Field(() => ResourceDefaultsInput, { nullable: true })
  defaults?: ResourceDefaultsInput;
}

@InputType('UpdateBlueprintInput')
export class UpdateBlueprintInput {
  @Field({ nullable: true })
  key?: string;

  @Field({ nullable: true })
  name?: string;

  @Field({ nullable: true })
  description?: string;

  @Field({ nullable: true })
  startup?: string;

  @Field({ nullable: true })
  stop?: string;

  @Field(() => String, { nullable: true, description: 'null: running at once.' })
  ready?: string | null;

  @Field(() => String, { nullable: true, description: 'null: no install script.' })
  install?: string | null;

  @Field(() => String, { nullable: true, description: 'sh, bash or ash; null: /bin/sh.' })
  installShell?: string | null;

  @Field(() => [BlueprintVariableInput], { nullable: true, description: 'Replaces the whole list.' })
  variables?: BlueprintVariableInput[];

  @Field(() => [String], { nullable: true, description: 'Replaces the whole list.' })
  fileDenylist?: string[];

  @Field(() => [BlueprintConfigFileInput], { nullable: true, description: 'Replaces the whole list.' })
  configFiles?: BlueprintConfigFileInput[];

  @Field(() => ResourceDefaultsInput, { nullable: true })
  defaults?: ResourceDefaultsInput;
}
