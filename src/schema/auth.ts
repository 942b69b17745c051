import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { CredentialKind } from './enums.js';
import { Paginated } from './page.js';
import { UserType } from './user.js';

@ObjectType('AuthPayload', { simpleResolvers: true, description: 'A new session: the token is the session secret (also set as the HTTP-only cookie).' })
export class AuthPayload {
  @Field(() => UserType)
  user!: UserType;

  @Field()
  token!: string;

  @Field()
  expiresAt!: Date;
}

@ObjectType('Session', { simpleResolvers: true })
export class SessionType {
  @Field(() => ID, { description: 'The session id, or the API token id when authenticated by an API token.' })
  id!: string;

  @Field(() => CredentialKind)
  kind!: string;

  @Field()
  createdAt!: Date;

  @Field(() => Date, { nullable: true, description: 'Null for an API token without expiry.' })
  expiresAt!: Date | null;
}

@ObjectType('SessionInfo', { simpleResolvers: true })
export class SessionInfo {
  @Field(() => SessionType)
  session!: SessionType;

  @Field(() => UserType)
  user!: UserType;
}

@InputType('SignUpInput')
export class SignUpInput {
  @Field()
  email!: string;

  @Field({ description: '8..128 characters.' })
  password!: string;

  @Field()
  name!: string;
}

@InputType('SignInInput')
export class SignInInput {
  @Field()
  email!: string;

  @Field()
  password!: string;
}

@ObjectType('ApiToken', { simpleResolvers: true })
export class ApiTokenType {
  @Field(() => ID)
  id!: string;

  @Field()
  name!: string;

  @Field({ description: 'The first characters of the secret, to recognise it.' })
  prefix!: string;

  @Field()
  createdAt!: Date;

  @Field(() => Date, { nullable: true })
  expiresAt!: Date | null;

  @Field(() => Date, { nullable: true })
  lastUsedAt!: Date | null;
}

@ObjectType('CreatedApiToken', { simpleResolvers: true, description: 'A new API token; `token` is the secret, shown this once only.' })
export class CreatedApiToken extends ApiTokenType {
  @Field()
  token!: string;
}

@ObjectType('ApiTokenPage', { simpleResolvers: true })
export class ApiTokenPage extends Paginated(ApiTokenType) {}

@InputType('CreateApiTokenInput')
export class CreateApiTokenInput {
  @Field()
  name!: string;

  @Field(() => Int, { nullable: true, description: 'Lifetime in days (1..3650); no expiry when absent.' })
  expiresInDays?: number;
}
