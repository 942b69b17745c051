import { Field, ID, InputType, ObjectType } from 'type-graphql';
import { Role } from './enums.js';
import { Paginated } from './page.js';

@ObjectType('User', { simpleResolvers: true, description: 'An account. Never carries a password hash.' })
export class UserType {
  @Field(() => ID)
  id!: string;

  @Field()
  email!: string;

  @Field()
  name!: string;

  @Field(() => Role)
  role!: string;

  @Field()
  createdAt!: Date;

  @Field()
  updatedAt!: Date;
}

@ObjectType('UserPage', { simpleResolvers: true })
export class UserPage extends Paginated(UserType) {}

/** PATCH /users/me. Every field optional; a password or email change needs currentPassword. */
@InputType('UpdateMeInput')
export class UpdateMeInput {
  @Field({ nullable: true })
  name?: string;

  @Field({ nullable: true, description: 'A new email requires currentPassword.' })
  email?: string;

  @Field({ nullable: true, description: '8..128 characters; requires currentPassword; ends your other sessions.' })
  password?: string;

  @Field({ nullable: true })
  currentPassword?: string;
}

/** PATCH /admin/users/:id (administrators only). Every field optional. */
@InputType('UpdateUserInput')
export class UpdateUserInput {
  @Field({ nullable: true })
  name?: string;

  @Field({ nullable: true })
  email?: string;

  @Field({ nullable: true, description: "8..128 characters; ends all of the account's sessions and closes its console sockets and SFTP sessions (its API tokens stay)." })
  password?: string;

  @Field(() => Role, { nullable: true, description: "Taking `admin` away closes the account's GraphQL sockets, console sockets and SFTP sessions at once; the last administrator keeps it (INVALID_STATE)." })
  role?: string;
}
