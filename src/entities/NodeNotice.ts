import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { Node } from './Node.js';

/**
 * Something a node must hear that it could not be told when it happened (a revocation: an account's
 * or a subuser's rights taken away), kept until the node takes it: src/nodes/node-notices.ts writes,
 * sends and deletes it in SQL (this entity describes the table, for the schema check). Removed with
 * the node.
 */
@Entity({ tableName: 'node_notices' })
@Index({ properties: ['node', 'id'] })
export class NodeNotice {
  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  @ManyToOne(() => Node, { deleteRule: 'cascade', index: false })
  node!: Node;

  /** the agent's route, called with POST */
  @Property({ type: 'string', length: 200 })
  path!: string;

  @Property({ type: 'json' })
  body!: Record<string, unknown>;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt!: Date;
}
