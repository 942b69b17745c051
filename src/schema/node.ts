import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { NodeScheme, NodeStatus } from './enums.js';
import { Paginated } from './page.js';

@ObjectType('Allocation', { simpleResolvers: true, description: 'Memory and disk (MiB) allocated to the servers of a node.' })
export class AllocationType {
  @Field(() => Int)
  memory!: number;

  @Field(() => Int)
  disk!: number;
}

@ObjectType('Node', { simpleResolvers: true, description: 'A machine that hosts servers, running the node agent.' })
export class NodeType {
  @Field(() => ID)
  id!: string;

  @Field()
  name!: string;

  @Field()
  fqdn!: string;

  @Field(() => Int)
  port!: number;

  @Field(() => NodeScheme)
  scheme!: string;

  @Field(() => Int, { description: 'Allocatable memory, MiB.' })
  memory!: number;

  @Field(() => Int, { description: 'Allocatable disk, MiB.' })
  disk!: number;

  @Field(() => Int, { nullable: true, description: 'CPU cores (bounds a server\'s cpu to cores × 100).' })
  cpuCores!: number | null;

  @Field(() => NodeStatus)
  status!: string;

  @Field(() => Date, { nullable: true })
  lastSeenAt!: Date | null;

  @Field(() => Int, { nullable: true, description: 'The agent\'s SFTP port; null until it reports one.' })
  sftpPort!: number | null;

  @Field(() => String, { nullable: true, description: 'The SFTP host key\'s fingerprint (SHA256:…); null until the agent reports it.' })
  sftpFingerprint!: string | null;

  @Field(() => Date, { nullable: true, description: 'When the current node token was issued.' })
  tokenCreatedAt!: Date | null;

  @Field()
  createdAt!: Date;

  @Field()
  updatedAt!: Date;

  // `allocated` is a field resolver (src/resolvers/nodes.resolver.ts), administrators only.
}

@ObjectType('NodePage', { simpleResolvers: true })
export class NodePage extends Paginated(NodeType) {}

@ObjectType('NodeChoice', { simpleResolvers: true, description: 'A node a user may create servers on (REST: GET /users/me/nodes): no address, no secrets.' })
export class NodeChoiceType {
  @Field(() => ID)
  id!: string;

  @Field()
  name!: string;

  @Field(() => NodeStatus)
  status!: string;

  @Field(() => AllocationType, { description: 'Memory and disk (MiB) the node can still allocate.' })
  available!: AllocationType;
}

@ObjectType({ simpleResolvers: true })
export class NodeChoicePage extends Paginated(NodeChoiceType) {}

@ObjectType('NodeToken', { simpleResolvers: true, description: 'A node agent secret, shown this once; the previous one stops working.' })
export class NodeTokenType {
  @Field()
  token!: string;

  @Field(() => ID)
  nodeId!: string;

  @Field()
  createdAt!: Date;
}

@ObjectType('RegisteredNode', { simpleResolvers: true, description: 'A new node and its first agent token (shown this once).' })
export class RegisteredNode {
  @Field(() => NodeType)
  node!: NodeType;

  @Field(() => NodeTokenType)
  token!: NodeTokenType;
}

@InputType('CreateNodeInput')
export class CreateNodeInput {
  @Field()
  name!: string;

  @Field({ description: 'Hostname or IP address of the node agent.' })
  fqdn!: string;

  @Field(() => Int, { nullable: true, description: 'Agent port, default 5000.' })
  port?: number;

  @Field(() => NodeScheme, { nullable: true, description: 'Default http.' })
  scheme?: string;

  @Field(() => Int, { description: 'Allocatable memory, MiB (≥ 64).' })
  memory!: number;

  @Field(() => Int, { description: 'Allocatable disk, MiB (≥ 128).' })
  disk!: number;

  @Field(() => Int, { nullable: true })
  cpuCores?: number;
}

@InputType('UpdateNodeInput', { description: 'PATCH /nodes/:id: the fields to change (any of CreateNodeInput\'s); the others keep their value.' })
export class UpdateNodeInput {
  @Field({ nullable: true })
  name?: string;

  @Field({ nullable: true, description: 'Hostname or IP address of the node agent.' })
  fqdn?: string;

  @Field(() => Int, { nullable: true, description: 'Agent port.' })
  port?: number;

  @Field(() => NodeScheme, { nullable: true })
  scheme?: string;

  @Field(() => Int, { nullable: true, description: 'Allocatable memory, MiB (≥ 64); not below what the node\'s servers have allocated.' })
  memory?: number;

  @Field(() => Int, { nullable: true, description: 'Allocatable disk, MiB (≥ 128); not below what the node\'s servers have allocated.' })
  disk?: number;

  @Field(() => Int, { nullable: true, description: 'null: the agent\'s heartbeat fills it in again.' })
  cpuCores?: number | null;
}
