import { randomUUID } from 'node:crypto';
import { OptionalProps, Entity, PrimaryKey, Property } from '@mikro-orm/core';
import type { ConfigFile } from '../shared/config-files.js';
import type { InstallShell } from '../shared/node-protocol.js';

export interface BlueprintVariable {
  key: string;
  /** shown to people; the key when absent (rows written before names existed) */
  name?: string;
  description: string;
  default: string;
  /** e.g. `required|string|max:64`, `integer|between:1,100`, `regex:^[a-z]+$` (src/blueprints/rules.ts) */
  rules: string;
  /** the server's users may see it (a later startup endpoint); true when absent */
  userViewable?: boolean;
  /** the server's users may change it (a later startup endpoint); true when absent */
  userEditable?: boolean;
}

export interface ResourceDefaults {
  memory: number;
  cpu: number;
  disk: number;
}

/** A template for servers: how to install, start, detect readiness and stop. */
@Entity({ tableName: 'blueprints' })
export class Blueprint {
  [OptionalProps]?: 'createdAt' | 'updatedAt' | 'description' | 'ready' | 'install' | 'installShell' | 'configFiles' | 'variables' | 'defaults' | 'builtin' | 'fileDenylist';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  /** Stable slug; built-in blueprints are seeded by it. */
  @Property({ type: 'string', length: 64, unique: true })
  key!: string;

  @Property({ type: 'string', length: 100 })
  name!: string;

  @Property({ type: 'text' })
  description: string = '';

  @Property({ type: 'text' })
  startup!: string;

  @Property({ type: 'string', length: 255 })
  stop!: string;

  @Property({ type: 'string', length: 255, nullable: true })
  ready: string | null = null;

  @Property({ type: 'text', nullable: true })
  install: string | null = null;

  /** The interpreter of `install` (`sh`, `bash`, `ash`, see INSTALL_SHELLS); null: /bin/sh. */
  @Property({ type: 'string', length: 16, nullable: true })
  installShell: InstallShell | null = null;

  /** Keys the agent writes into the server's files at each start (an egg's `config.files`). */
  @Property({ type: 'json' })
  configFiles: ConfigFile[] = [];

  @Property({ type: 'json' })
  variables: BlueprintVariable[] = [];

  /**
   * Files the server's users may not read or change through the file manager or SFTP: gitignore-style
   * patterns, as Pterodactyl's `file_denylist` (src/shared/file-denylist.ts).
   */
  @Property({ type: 'json' })
  fileDenylist: string[] = [];

  @Property({ type: 'json' })
  defaults: ResourceDefaults = { memory: 512, cpu: 100, disk: 1024 };

  @Property({ type: 'boolean' })
  builtin: boolean = false;

  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
