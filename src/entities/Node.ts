import { randomUUID } from 'node:crypto';
import { OptionalProps, Entity, Enum, PrimaryKey, Property } from '@mikro-orm/core';

export type NodeStatus = 'online' | 'offline';
export type NodeScheme = 'http' | 'https';

/** A machine that hosts servers, running the node agent. */
@Entity({ tableName: 'nodes' })
export class Node {
  [OptionalProps]?: 'createdAt' | 'updatedAt' | 'port' | 'scheme' | 'status' | 'lastSeenAt' | 'tokenHash' | 'keyEnc' | 'tokenCreatedAt' | 'cpuCores' | 'sftpPort' | 'sftpFingerprint';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'string', length: 100, unique: true })
  name!: string;

  @Property({ type: 'string', length: 255 })
  fqdn!: string;

  @Property({ type: 'integer' })
  port: number = 5000;

  @Enum({ items: ['http', 'https'], type: 'string' })
  scheme: NodeScheme = 'http';

  /** Allocatable memory in MiB. */
  @Property({ type: 'integer' })
  memory!: number;

  /** CPU cores of the machine (reported by the agent, or given at registration); bounds a server's cpu. */
  @Property({ type: 'integer', nullable: true })
  cpuCores: number | null = null;

  /** Allocatable disk in MiB. */
  @Property({ type: 'integer' })
  disk!: number;

  @Enum({ items: ['online', 'offline'], type: 'string' })
  status: NodeStatus = 'offline';

  @Property({ type: 'datetime', nullable: true })
  lastSeenAt: Date | null = null;

  /** The agent's SFTP port, as it reports it; null until it does (or when it serves no SFTP). */
  @Property({ type: 'integer', nullable: true })
  sftpPort: number | null = null;

  /** The SFTP host key's fingerprint (`SHA256:…`), for users to check on their first connection. */
  @Property({ type: 'string', length: 100, nullable: true })
  sftpFingerprint: string | null = null;

  /** SHA-256 of the current node token; null until one is issued. */
  @Property({ type: 'string', length: 64, nullable: true, hidden: true })
  tokenHash: string | null = null;

  /** The node key K derived from the token, encrypted with the panel's master key. */
  @Property({ type: 'text', nullable: true, hidden: true })
  keyEnc: string | null = null;

  @Property({ type: 'datetime', nullable: true })
  tokenCreatedAt: Date | null = null;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
