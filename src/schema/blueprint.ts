import { Field, ID, Int, ObjectType } from 'type-graphql';
import { Paginated } from './page.js';

@ObjectType('BlueprintVariable', { simpleResolvers: true, description: 'A variable of a blueprint; `rules` is a `|`-separated rule list (e.g. `required|integer|between:1,100`).' })
export class BlueprintVariableType {
  @Field()
  key!: string;

  @Field()
  description!: string;

  @Field()
  default!: string;

  @Field()
  rules!: string;
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

  @Field(() => [BlueprintVariableType])
  variables!: BlueprintVariableType[];

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
