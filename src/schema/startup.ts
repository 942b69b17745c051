import { Field, ObjectType } from 'type-graphql';

@ObjectType('StartupVariable', { simpleResolvers: true, description: 'A user-viewable variable of a server\u2019s blueprint, with the server\u2019s value (REST: GET /servers/:id/startup).' })
export class StartupVariableType {
  @Field()
  key!: string;
  @Field({ description: 'Shown to people.' })
  name!: string;
  @Field()
  description!: string;
  @Field({ description: 'The blueprint\u2019s default.' })
  default!: string;
  @Field({ description: 'e.g. `required|integer|between:1,1000`.' })
  rules!: string;
  @Field({ description: 'May be set with updateServerStartup; false: read-only here.' })
  userEditable!: boolean;
  @Field({ description: 'The server\u2019s value (the default when never set).' })
  value!: string;
}

@ObjectType('ServerStartup', { simpleResolvers: true, description: 'A server\u2019s startup command with its user-viewable variables in place, and those variables.' })
export class ServerStartupType {
  @Field({ description: 'Hidden variables and the agent\u2019s own placeholders stay as written ({{NAME}}).' })
  startup!: string;
  @Field(() => [StartupVariableType])
  variables!: StartupVariableType[];
}
