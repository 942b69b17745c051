import { randomUUID } from 'node:crypto';
import { BigIntType, OptionalProps, Entity, Enum, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import type { ServerRecord } from '../services/records.js';
import type { ServerStatus } from '../shared/node-protocol.js';
import { SERVER_STATUSES } from '../shared/node-protocol.js';
import { Blueprint } from './Blueprint.js';
import { Node } from './Node.js';
import { User } from './User.js';

/** A game or app server: a process run by the agent of its node. */
@Entity({ tableName: 'servers' })
@Index({ properties: ['owner', 'createdAt', 'id'] })
@Index({ properties: ['createdAt', 'id'] })
@Index({ properties: ['node'] })
@Index({ properties: ['status'] })
export class Server implements ServerRecord {
  [OptionalProps]?: 'createdAt' | 'updatedAt' | 'description' | 'status' | 'variables' | 'autoRestart' | 'lastExitCode' | 'lastCrashAt' | 'lastStopReason' | 'crashCount' | 'specRevision' | 'statusSeq' | 'ownerId' | 'nodeId' | 'blueprintId' | 'backupLimit';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'string', length: 100 })
  name!: string;

  @Property({ type: 'text' })
  description: string = '';

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  owner!: User;

  @ManyToOne(() => Node, { deleteRule: 'restrict' })
  node!: Node;

  @ManyToOne(() => Blueprint, { deleteRule: 'restrict' })
  blueprint!: Blueprint;

  /** MiB */
  @Property({ type: 'integer' })
  memory!: number;

  /** percent of one core */
  @Property({ type: 'integer' })
  cpu!: number;

  /** MiB */
  @Property({ type: 'integer' })
  disk!: number;

  /** How many backups the server may keep (0: none). */
  @Property({ type: 'integer' })
  backupLimit: number = 5;

  @Enum({ items: [...SERVER_STATUSES], type: 'string' })
  status: ServerStatus = 'installing';

  /**
   * The node's number of the recorded status (ServerStateEvent.seq): a status from the node is
   * recorded only over a lower one (null: none known, as from agents that predate it). Not in any output.
   */
  @Property({ type: new BigIntType('number'), nullable: true })
  statusSeq: number | null = null;

  @Property({ type: 'json' })
  variables: Record<string, string> = {};

  @Property({ type: 'boolean' })
  autoRestart: boolean = false;

  @Property({ type: 'integer', nullable: true })
  lastExitCode: number | null = null;

  @Property({ type: 'datetime', nullable: true })
  lastCrashAt: Date | null = null;

  /** Why the process last ended: stopped, killed, crashed, memory_limit, disk_limit, ... */
  @Property({ type: 'string', length: 32, nullable: true })
  lastStopReason: string | null = null;

  @Property({ type: 'integer' })
  crashCount: number = 0;

  /** Grows with every update; sent with the spec so that the node keeps the latest (ServerSpec.revision). */
  @Property({ type: 'integer' })
  specRevision: number = 0;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', onUpdate: () => new Date() })
  updatedAt: Date = new Date();

  /** The keys the caller holds on this server (`["*"]`: every key), set by the service that read it; not persisted. */
  permissions?: string[];

  /** The folders the caller's file keys are limited to (empty: the whole server), set with `permissions` by ServersService.access; not persisted. */
  paths?: string[];

  /** The variables the caller may see (the blueprint's viewable ones; absent for administrators: all); not persisted. */
  viewableVariables?: string[];

  /** The relations as ids (the ServerRecord shape); not persisted properties. */
  get ownerId(): string {
    return this.owner.id;
  }

  get nodeId(): string {
    return this.node.id;
  }

  get blueprintId(): string {
    return this.blueprint.id;
  }
}
