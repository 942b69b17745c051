import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * A nonce of a signed node request that a gateway instance accepted, shared by the instances of a
 * scale-out (REDIS_URL) until it expires: src/services/node-nonces.ts writes and reads it in SQL (this
 * entity only describes the table, for the schema check).
 */
@Entity({ tableName: 'node_nonces' })
@Index({ properties: ['expiresAt'] })
export class NodeNonce {
  @PrimaryKey({ type: 'uuid' })
  nodeId!: string;

  @PrimaryKey({ type: 'string', length: 64 })
  nonce!: string;

  @Property({ type: 'datetime' })
  expiresAt!: Date;
}
