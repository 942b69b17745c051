/**
 * The response shapes of the REST API as zod schemas: the OpenAPI document (src/openapi/document.ts)
 * is generated from them, and the presenters (src/rest/presenters.ts) are typed against them
 * (`z.infer`), so a presenter that drifts from the documented shape fails `tsc`. Services whose
 * results are sent as they are (stats, tokens, session) are checked at the bottom of this file.
 *
 * Timestamps are `z.date()`: the presenters hold `Date`s, JSON carries them as ISO-8601 UTC strings,
 * and the document says `type: string, format: date-time`.
 *
 * `.meta({ id })` names a schema: it becomes `#/components/schemas/<id>` wherever it is used.
 */
import { z } from 'zod';
import type { ErrorCode } from '../errors.js';
import type { PlatformStats } from '../services/admin.service.js';
import type { AuthService } from '../services/auth.service.js';
import type { IssuedNodeToken } from '../services/nodes.service.js';
import type { PlantView } from '../services/plants.service.js';
import type { ConsoleTicket } from '../services/power.service.js';
import { CONFIG_PARSERS } from '../shared/config-files.js';
import { INSTALL_SHELLS, SERVER_STATUSES, type NodeStats, type ServerStatus } from '../shared/node-protocol.js';

const timestamp = (description = 'ISO-8601 UTC timestamp.') => z.date().meta({ description, example: '2026-01-01T12:00:00.000Z' });
const id = (description: string) => z.uuid().meta({ description, example: '0b6c3a52-5d0e-4b7e-9a57-1e7f1f6f2c11' });
const int = () => z.number().int();
const mib = (description: string) => int().meta({ description: `${description} (MiB).` });

export const ServerStatusSchema = z.enum(SERVER_STATUSES as [ServerStatus, ...ServerStatus[]]).meta({
  id: 'ServerStatus',
  description:
    'installing → offline (or install_failed); start: offline → starting → running; stop: starting/running → stopping → offline; kill: → offline at once. A process that exits on its own while running → offline (recorded as a crash).',
});

export const UserSchema = z
  .object({
    id: id('User id.'),
    email: z.email().meta({ description: 'Lower-cased; unique case-insensitively.', example: 'ada@example.com' }),
    name: z.string().meta({ example: 'Ada' }),
    role: z.enum(['admin', 'user']).meta({ description: '`admin` may do everything; `user` sees and acts on its own servers only.' }),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .meta({ id: 'User', description: 'A user account. Never contains a password hash.' });

export const ApiTokenSchema = z
  .object({
    id: id('API token id.'),
    name: z.string().meta({ example: 'CI deploys' }),
    prefix: z.string().meta({ description: 'The first characters of the secret, to recognise it in a list.', example: 'hpt_Xy3k' }),
    createdAt: timestamp(),
    expiresAt: timestamp('When the token stops working; null: never.').nullable(),
    lastUsedAt: timestamp('Last use (updated at most once a minute); null: never used.').nullable(),
  })
  .meta({ id: 'ApiToken', description: 'A long-lived API token for integrations (the secret is not included).' });

export const CreatedApiTokenSchema = ApiTokenSchema.extend({
  token: z.string().meta({ description: 'The secret (prefix `hpt_`), shown this once: send it as `Authorization: Bearer <token>`.', example: 'hpt_Xy3k…' }),
}).meta({ id: 'CreatedApiToken', description: 'A new API token with its secret.' });

export const ServerSchema = z
  .object({
    id: id('Server id.'),
    name: z.string().meta({ example: 'Survival' }),
    description: z.string(),
    ownerId: id('The user that owns the server.'),
    nodeId: id('The node that hosts the server.'),
    blueprintId: id('The blueprint the server runs.'),
    memory: mib('Memory limit'),
    cpu: int().meta({ description: 'CPU limit in percent of one core (100 = one core).' }),
    disk: mib('Disk limit'),
    backupLimit: int().min(0).meta({ description: 'How many backups the server may keep (0: none); BACKUP_LIMIT_DEFAULT for a new server. Its owner may set it up to its limit now or BACKUP_LIMIT_DEFAULT, whichever is larger; only administrators may set more (up to 1000).', example: 5 }),
    status: ServerStatusSchema,
    variables: z.record(z.string(), z.string()).meta({ description: "Values of the blueprint's variables (blueprint defaults merged with the user's). Without the variables the blueprint hides from users (administrators see them); `{}` for a subuser without `startup.read`." }),
    autoRestart: z.boolean().meta({ description: 'Restart after a crash (with a crash-loop guard).' }),
    lastExitCode: int().nullable().meta({ description: 'Exit code of the last process end; null when killed by a signal or never run.' }),
    lastCrashAt: timestamp('Time of the last crash; null: never crashed.').nullable(),
    lastStopReason: z.string().nullable().meta({ description: 'Why the process last ended: stopped, killed, crashed, memory_limit, disk_limit, install_failed, agent_restart, program_missing (the startup command\'s program is not on the node), …' }),
    crashCount: int().meta({ description: 'Crashes so far.' }),
    permissions: z.array(z.string()).meta({ description: 'The permission keys you hold on this server: `["*"]` (every key) for its owner and administrators, the granted keys for a subuser (GET /permissions lists them).', example: ['*'] }),
    paths: z.array(z.string()).meta({ description: 'The folders your file keys are limited to on this server (a subuser\'s `paths`); empty: the whole server.', example: [] }),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .meta({ id: 'Server', description: 'A game or app server: a process run by the agent of its node.' });

export const NodeSchema = z
  .object({
    id: id('Node id.'),
    name: z.string().meta({ example: 'node-1' }),
    fqdn: z.string().meta({ description: 'Hostname or IP address of the node agent.', example: 'node1.example.com' }),
    port: int().meta({ description: 'Port of the node agent (HTTP API and console channel).', example: 5000 }),
    scheme: z.enum(['http', 'https']),
    memory: mib('Allocatable memory'),
    disk: mib('Allocatable disk'),
    cpuCores: int().nullable().meta({ description: 'CPU cores of the machine; null until the agent reports them.' }),
    status: z.enum(['online', 'offline']).meta({ description: 'online while the agent sends heartbeats.' }),
    lastSeenAt: timestamp('Last heartbeat of the agent; null: never seen.').nullable(),
    tokenCreatedAt: timestamp('When the current node token was issued (POST /nodes, POST /admin/nodes/:id/token); null: unknown.').nullable(),
    sftpPort: int().nullable().meta({ description: 'Port of the agent\'s SFTP server; null until the agent reports it.', example: 2022 }),
    sftpFingerprint: z.string().nullable().meta({ description: 'SHA-256 fingerprint of the SFTP host key, as OpenSSH shows it; null until the agent reports it.', example: 'SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU' }),
    allocated: z
      .object({ memory: mib('Memory allocated to servers'), disk: mib('Disk allocated to servers') })
      .meta({ description: 'What the servers on this node hold.' }),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .meta({ id: 'Node', description: 'A machine that hosts servers, running the node agent. Never contains the token hash or key.' });

export const NodeChoiceSchema = z
  .object({
    id: id('Node id.'),
    name: z.string().meta({ example: 'local' }),
    status: z.enum(['online', 'offline']),
    available: z
      .object({ memory: mib('Memory still free for new servers'), disk: mib('Disk still free for new servers') })
      .meta({ description: 'What the node can still allocate.' }),
  })
  .meta({ id: 'NodeChoice', description: 'A node a user may create servers on (GET /users/me/nodes): no address, no secrets.' });

export const CreatedNodeSchema = NodeSchema.extend({
  token: z.string().meta({ description: 'The node token (prefix `hpn_`) for its agent (`NODE_TOKEN`), shown this once.' }),
}).meta({ id: 'CreatedNode', description: 'A newly registered node with its first agent token.' });

export const BlueprintSchema = z
  .object({
    id: id('Blueprint id.'),
    key: z.string().meta({ description: 'Stable slug.', example: 'demo-game' }),
    name: z.string(),
    description: z.string(),
    startup: z.string().meta({ description: 'Startup command template with {{VARIABLES}}.' }),
    stop: z.string().meta({ description: 'A command written to standard input (e.g. `stop`), or a signal name (`^C`, `SIGTERM`).' }),
    ready: z.string().nullable().meta({ description: 'Regular expression: the server is `running` once an output line matches; null: at once.' }),
    install: z.string().nullable().meta({ description: 'Script run once at install; null: none.' }),
    configFiles: z
      .array(
        z
          .object({
            file: z.string().meta({ description: "Relative to the server's directory.", example: 'server.properties' }),
            parser: z.enum(CONFIG_PARSERS),
            find: z.record(z.string(), z.string()).meta({ description: 'Key → value; values may hold the allowed placeholders.', example: { 'server-port': '{{server.build.default.port}}' } }),
          })
          .meta({ id: 'BlueprintConfigFile' }),
      )
      .meta({ description: "Keys the node writes into the server's files before each start (an egg's `config.files`; set by an import)." }),
    installShell: z.enum(INSTALL_SHELLS).nullable().meta({ description: 'The interpreter of `install` (`sh`, `bash`, `ash`); null: /bin/sh.' }),
    variables: z.array(
      z
        .object({
          key: z.string().meta({ example: 'MOTD' }),
          name: z.string().meta({ description: 'Shown to people.' }),
          description: z.string(),
          default: z.string(),
          rules: z.string().meta({ description: 'e.g. `required|string|max:64`, `integer|between:1,100`, `regex:/^[a-z]+$/` (docs/blueprints.md).' }),
          userViewable: z.boolean().meta({ description: "The server's users may see it." }),
          userEditable: z.boolean().meta({ description: "The server's users may change it." }),
        })
        .meta({ id: 'BlueprintVariable' }),
    ).meta({ description: 'For everyone but administrators, without the variables hidden from users (`userViewable: false`).' }),
    fileDenylist: z.array(z.string()).meta({
      description: "Files the server's users may not read, write, rename, copy, chmod, archive or delete through the file manager or SFTP (403): gitignore-style patterns, as Pterodactyl's `file_denylist` (`server.jar`, `config/`, `*.sh`, `/eula.txt`).",
      example: ['server.jar', 'config/secrets.yml'],
    }),
    defaults: z
      .object({ memory: mib('Default memory'), cpu: int().meta({ description: 'Default cpu, percent of one core.' }), disk: mib('Default disk') })
      .meta({ description: 'Defaults for servers created without memory/cpu/disk.' }),
    builtin: z.boolean().meta({ description: 'Seeded with the panel.' }),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .meta({ id: 'Blueprint', description: 'A template for servers: how to install, start, detect readiness and stop.' });

export const StartupSchema = z
  .object({
    startup: z.string().meta({
      description: "The blueprint's startup command with this server's values in place of its user-viewable variables; other placeholders (hidden variables, `{{SERVER_MEMORY}}`, `{{NODE}}`) stay as written.",
      example: '{{NODE}} {{ASSETS_DIR}}/demo-game.js --motd Welcome --max-players 20 --port 25565',
    }),
    variables: z.array(
      z
        .object({
          key: z.string().meta({ example: 'MAX_PLAYERS' }),
          name: z.string().meta({ description: 'Shown to people.' }),
          description: z.string(),
          default: z.string().meta({ description: "The blueprint's default." }),
          rules: z.string().meta({ description: 'e.g. `required|integer|between:1,1000` (docs/blueprints.md).' }),
          userEditable: z.boolean().meta({ description: 'May be set with PUT /servers/{id}/startup; false: read-only here (an administrator changes it with PATCH /servers/{id}).' }),
          value: z.string().meta({ description: "The server's value (the default when never set).", example: '20' }),
        })
        .meta({ id: 'StartupVariable' }),
    ).meta({ description: 'The variables the blueprint marks user-viewable, in the blueprint\'s order; hidden ones are left out for everyone, administrators included.' }),
  })
  .meta({ id: 'Startup', description: "A server's startup command and its user-viewable variables." });

export const ImportWarningSchema = z
  .object({
    field: z.string().meta({ description: "The egg's field.", example: 'config.files' }),
    message: z.string().meta({ example: "configuration file parsers are not applied: the server's configuration files are not changed at start" }),
  })
  .meta({ id: 'ImportWarning', description: 'Something of the egg that the blueprint does not do.' });

/** The import's answer: the new blueprint, with `warnings` (what of the egg it does not do); `meta` is for lists only. */
export const ImportedBlueprintSchema = z.object({ data: BlueprintSchema.extend({ warnings: z.array(ImportWarningSchema).meta({ description: 'What of the egg the blueprint does not do, each with the egg\'s field.' }) }) });

export const AuthResultSchema = z
  .object({
    user: UserSchema,
    token: z.string().meta({ description: 'The session token (prefix `hps_`): send it as `Authorization: Bearer <token>`. The same value is set as the HTTP-only `hp_session` cookie.' }),
    expiresAt: timestamp('When the session ends.'),
  })
  .meta({ id: 'AuthResult' });

export const SessionInfoSchema = z
  .object({
    session: z.object({
      id: id('Session id (or API token id when authenticated with an API token).'),
      kind: z.enum(['session', 'api_token']).meta({ description: 'How the caller is authenticated.' }),
      createdAt: timestamp(),
      expiresAt: timestamp('When the credential stops working; null: never (API token without expiry).').nullable(),
    }),
    user: UserSchema,
  })
  .meta({ id: 'SessionInfo' });

export const ConsoleTicketSchema = z
  .object({
    token: z.string().meta({ description: "A JWT for the node's console channel: valid ≤ 10 minutes, bound to this server and user, verifiable by that node only." }),
    socket: z
      .string()
      .regex(/^wss?:\/\//)
      .meta({ description: "The node's console address: `wss://{fqdn}:{port}/console`, `ws://` when the node has no TLS.", example: 'wss://node1.example.com:5000/console' }),
    expiresAt: timestamp('When the token expires.'),
  })
  .meta({ id: 'ConsoleTicket' });

const nullableNumber = (description: string) => z.number().nullable().meta({ description });
const nullableInt = (description: string) => int().nullable().meta({ description });

export const NodeStatsSchema = z
  .object({
    online: z.boolean().meta({ description: 'false when the agent cannot be reached; every figure is then null.' }),
    cpu: z.object({
      cores: nullableInt('CPU cores.'),
      usage: nullableNumber('Usage in percent of the whole machine.'),
      load: z.array(z.number()).nullable().meta({ description: 'Load averages (1, 5, 15 minutes).' }),
    }),
    memory: z.object({ total: nullableNumber('Total memory (MiB).'), used: nullableNumber('Used memory (MiB).') }),
    disk: z.object({ total: nullableNumber('Total disk (MiB).'), used: nullableNumber('Used disk (MiB).') }),
    servers: z.object({ total: nullableInt('Servers on the node.'), running: nullableInt('Servers running.') }),
    uptime: nullableNumber('Uptime of the machine in seconds.'),
  })
  .meta({ id: 'NodeStats', description: 'Live figures from the node agent.' });

const allocation = (what: string) =>
  z.object({ allocated: mib(`${what} allocated to servers`), total: mib(`${what} of all nodes`) });

export const PlatformStatsSchema = z
  .object({
    users: int(),
    servers: z.object({
      total: int(),
      byStatus: z.object(Object.fromEntries(SERVER_STATUSES.map((s) => [s, int()])) as Record<ServerStatus, z.ZodNumber>).meta({ description: 'Servers per state (every state is present).' }),
    }),
    nodes: z.object({ total: int(), online: int() }),
    blueprints: int(),
    memory: allocation('Memory'),
    disk: allocation('Disk'),
  })
  .meta({ id: 'PlatformStats', description: 'Counts and allocations of the whole platform.' });

export const NodeTokenSchema = z
  .object({
    token: z.string().meta({ description: 'The new node token (prefix `hpn_`), shown this once; the previous one stopped working.' }),
    nodeId: id('The node.'),
    createdAt: timestamp(),
  })
  .meta({ id: 'NodeToken' });

export const PermissionSchema = z
  .object({
    key: z.string().meta({ description: 'The permission key.', example: 'control.start' }),
    description: z.string().meta({ description: 'What it allows.', example: 'Start the server' }),
  })
  .meta({ id: 'Permission', description: 'A permission key a server owner can grant to a subuser.' });

export const SubuserSchema = z
  .object({
    userId: id('The subuser\'s account id.'),
    email: z.string().meta({ description: 'The subuser\'s email.', example: 'friend@example.com' }),
    name: z.string().meta({ description: 'The subuser\'s display name.' }),
    permissions: z.array(z.string()).meta({ description: 'The keys granted on this server.', example: ['websocket.connect', 'control.console'] }),
    paths: z.array(z.string()).meta({ description: 'Folders that the file permissions are limited to; empty: the whole server.', example: ['/plugins'] }),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .meta({ id: 'Subuser', description: 'An account a server is shared with.' });

export const BackupSchema = z
  .object({
    id: id('Backup id.'),
    serverId: id('The server it is a backup of.'),
    name: z.string().meta({ example: 'Before the 1.21 update' }),
    status: z.enum(['pending', 'completed', 'failed']).meta({ description: '`pending` while the node makes it (`files` and `size` count what is done), then `completed` or `failed` (see `error`).' }),
    locked: z.boolean().meta({ description: 'A locked backup cannot be deleted (nor rotated out by a schedule).' }),
    ignored: z.array(z.string()).meta({ description: 'The ignore patterns given (gitignore style); empty: `.hostpanelignore` at the server\'s root was used, if any.', example: ['logs/', '*.tmp'] }),
    size: int().meta({ description: 'Bytes of the files in it.' }),
    files: int().meta({ description: 'Files in it.' }),
    sha256: z.string().nullable().meta({ description: 'The backup\'s identity: SHA-256 of its list of entries and their hashes; null until completed.' }),
    error: z.string().nullable().meta({ description: 'Why it failed; null otherwise.' }),
    createdAt: timestamp(),
    completedAt: timestamp('When it completed or failed; null while pending.').nullable(),
  })
  .meta({ id: 'Backup', description: 'A backup of a server\'s files, kept by its node: each file stored once by its SHA-256 across the server\'s backups.' });

export const ActivitySchema = z
  .object({
    id: id('Entry id.'),
    event: z.string().meta({ description: '`area:action`, e.g. `server:power.start`.', example: 'server:power.start' }),
    serverId: z.uuid().nullable().meta({ description: 'The server concerned, if any.' }),
    actor: z
      .object({ id: z.uuid(), email: z.string() })
      .nullable()
      .meta({ description: 'Who did it (their email at the time); null for anonymous actions and the system.' }),
    apiTokenId: z.uuid().nullable().meta({ description: 'The API token used, when the action came through one.' }),
    ip: z.string().nullable().meta({ description: 'The client address (behind a trusted proxy: the address the proxy reports); null for a reader who is neither the entry\'s actor nor an administrator.' }),
    properties: z.record(z.string(), z.unknown()).meta({ description: 'Details of the action; never a password, token or file content.' }),
    createdAt: timestamp(),
  })
  .meta({ id: 'Activity', description: 'An entry of the activity log.' });

export const ScheduleTaskSchema = z
  .object({
    sequence: int().min(1).max(10).meta({ description: 'Position in the list, from 1: tasks run in this order.' }),
    action: z.enum(['command', 'power', 'backup']),
    payload: z.record(z.string(), z.unknown()).meta({ description: '`command`: `{ command }`; `power`: `{ action }` (start, stop, restart, kill); `backup`: `{}`.', example: { command: 'say restarting in 5 minutes' } }),
    offsetSeconds: int().min(0).max(900).meta({ description: 'Seconds waited after the previous task (the first task: after the run starts).' }),
    continueOnFailure: z.boolean().meta({ description: 'Whether the next tasks run when this one fails.' }),
  })
  .meta({ id: 'ScheduleTask', description: 'One step of a schedule.' });

export const ScheduleSchema = z
  .object({
    id: id('Schedule id.'),
    serverId: id('The server.'),
    name: z.string().meta({ example: 'Nightly restart' }),
    cron: z.string().meta({ description: 'Five fields: minute hour day-of-month month day-of-week.', example: '30 4 * * *' }),
    timezone: z.string().meta({ description: 'IANA time zone the expression is read in.', example: 'Europe/Berlin' }),
    enabled: z.boolean(),
    onlyWhenOnline: z.boolean().meta({ description: 'Runs are skipped (and recorded) while the server is not running.' }),
    tasks: z.array(ScheduleTaskSchema),
    lastRunAt: timestamp('When it last ran (by cron or by hand); null if never.').nullable(),
    nextRunAt: timestamp('The next run due by cron; null while disabled.').nullable(),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .meta({ id: 'Schedule', description: 'A cron schedule of a server and the tasks it runs.' });

const runTaskStatus = z.enum(['pending', 'running', 'completed', 'failed', 'skipped']);

export const ScheduleRunSchema = z
  .object({
    id: id('Run id.'),
    trigger: z.enum(['cron', 'manual']),
    status: z.enum(['running', 'completed', 'failed', 'skipped']).meta({ description: '`failed` when a task failed; `skipped`: missed by more than 60 s, or the server was not running (onlyWhenOnline).' }),
    startedAt: timestamp(),
    finishedAt: timestamp('Null while running.').nullable(),
    tasks: z.array(
      z.object({
        sequence: int().min(1),
        status: runTaskStatus,
        error: z.string().nullable().meta({ description: 'Why it failed or was skipped.', example: 'NODE_UNAVAILABLE: The node hosting this server cannot be reached right now.' }),
      }),
    ),
  })
  .meta({ id: 'ScheduleRun', description: 'One run of a schedule and how each task went.' });

export const FileEntrySchema = z
  .object({
    name: z.string().meta({ example: 'config.yml' }),
    path: z.string().meta({ description: 'From the server\'s root.', example: '/plugins/config.yml' }),
    type: z.enum(['file', 'directory', 'symlink', 'other']),
    size: int().meta({ description: 'Bytes (0 for anything but a file).' }),
    mode: z.string().meta({ description: 'Permission bits, octal.', example: '0644' }),
    modifiedAt: z.string().meta({ description: 'ISO-8601 UTC timestamp.', example: '2026-01-01T12:00:00.000Z' }),
  })
  .meta({ id: 'FileEntry', description: 'A file, folder or symlink of a server.' });

export const SftpDetailsSchema = z
  .object({
    host: z.string().meta({ description: 'The node\'s address.', example: 'node1.example.com' }),
    port: int().nullable().meta({ description: 'Null until the node reported its SFTP server.', example: 2022 }),
    username: z.string().meta({ description: '`<account email>.<first 8 characters of the server id>`.', example: 'alex@example.com.3f2a9c1d' }),
    fingerprint: z.string().nullable().meta({ description: 'The node\'s host key fingerprint, to compare with what the client shows on the first connection.' }),
  })
  .meta({ id: 'SftpDetails', description: 'How to connect over SFTP: `sftp -P <port> <username>@<host>` with the account\'s password.' });

export const FilePageMetaSchema = z
  .object({ total: int(), page: int().min(1), limit: int().min(1).max(1000) })
  .meta({ id: 'FilePageMeta', description: 'A page of a folder: `limit` 1..1000 (default 500).' });

export const PageMetaSchema = z
  .object({
    total: int().min(0).meta({ description: 'Total number of items (all pages).' }),
    page: int().min(1).meta({ description: 'Current page.' }),
    limit: int().min(1).max(100).meta({ description: 'Page size.' }),
  })
  .meta({ id: 'PageMeta' });

export const ERROR_CODES = [
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'VALIDATION_ERROR',
  'ALREADY_EXISTS',
  'INVALID_STATE',
  'NODE_HAS_SERVERS',
  'NODE_UNAVAILABLE',
  'CAPACITY_EXCEEDED',
  'QUOTA_EXCEEDED',
  'INVALID_PATH',
  'DISK_LIMIT',
  'BACKUP_LIMIT',
  'FILE_TOO_LARGE',
  'INVALID_ARCHIVE',
  'RATE_LIMITED',
  'INTERNAL_ERROR',
] as const satisfies readonly ErrorCode[];

export const ErrorCodeSchema = z.enum(ERROR_CODES).meta({
  id: 'ErrorCode',
  description:
    '400 BAD_REQUEST · 401 UNAUTHORIZED · 403 FORBIDDEN · 404 NOT_FOUND · 422 VALIDATION_ERROR, ALREADY_EXISTS, INVALID_STATE, NODE_HAS_SERVERS, NODE_UNAVAILABLE, CAPACITY_EXCEEDED, QUOTA_EXCEEDED (the owner\'s per-user quota of servers, memory, cpu or disk: `details.exceeded` names which, with `limits`, `used` and `requested`), INVALID_PATH (a file path that is not text, holds NUL or leads outside the server\'s directory, lexically or through a symlink), DISK_LIMIT (a write would pass the server\'s disk limit; nothing half-written stays), BACKUP_LIMIT (the server keeps as many backups as its `backupLimit` allows: delete one first), FILE_TOO_LARGE (over the editor\'s limit: download it instead), INVALID_ARCHIVE (an archive that is damaged, not .tar.gz/.tgz/.tar/.zip, or holds an entry landing outside the destination, an absolute name, a link pointing outside or a device: nothing is written) · 429 RATE_LIMITED · 500 INTERNAL_ERROR',
});

export const ErrorSchema = z
  .object({
    error: z.object({
      code: ErrorCodeSchema,
      message: z.string().meta({ description: 'For humans; never a stack trace or SQL.' }),
      details: z
        .object({
          fields: z
            .record(z.string(), z.string())
            .optional()
            .meta({ description: '422 VALIDATION_ERROR / ALREADY_EXISTS / CAPACITY_EXCEEDED / QUOTA_EXCEEDED: each bad field (dotted path, `body` for the whole body) with a message.' }),
          retryAfter: int().optional().meta({ description: '429: seconds until the window ends (also in `Retry-After`).' }),
        })
        .catchall(z.unknown())
        .meta({ description: 'Always an object (often empty).' }),
    }),
  })
  .meta({ id: 'Error', description: 'The error body of every error under /api/v1.' });

export const PlantSchema = z
  .object({
    name: z.string().meta({ description: 'Name of the plant.', example: 'Monstera' }),
    tag: z.string().optional().meta({ description: 'Tag specifying the type (omitted when the plant has none).', example: 'indoor' }),
  })
  .meta({ id: 'Plant' });

export const PlantErrorSchema = z
  .object({
    error: int().min(-2147483648).max(2147483647).meta({ format: 'int32', description: 'Error number: the HTTP status.', example: 400 }),
    message: z.string().meta({ description: 'Error text.' }),
  })
  .meta({ id: 'PlantError', description: 'The error shape of the plant store (no envelope).' });

/** `{ data }` */
export const envelope = <T extends z.ZodType>(data: T) => z.object({ data });
/** `{ data: [...], meta: { total, page, limit } }` */
export const listEnvelope = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), meta: PageMetaSchema });

// ---------------------------------------------------------------------------------------------
// Compile-time checks: what the services return is exactly what the schemas describe. A change on
// either side without the other fails `tsc`.

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
function sameShape<T extends true>(): T | void {}

sameShape<Same<NodeStats, z.infer<typeof NodeStatsSchema>>>();
sameShape<Same<PlatformStats, z.infer<typeof PlatformStatsSchema>>>();
sameShape<Same<ConsoleTicket, z.infer<typeof ConsoleTicketSchema>>>();
sameShape<Same<IssuedNodeToken, z.infer<typeof NodeTokenSchema>>>();
sameShape<Same<PlantView, z.infer<typeof PlantSchema>>>();
sameShape<Same<ReturnType<AuthService['session']>['session'], z.infer<typeof SessionInfoSchema>['session']>>();
sameShape<Same<ErrorCode, z.infer<typeof ErrorCodeSchema>>>();

export type UserOut = z.infer<typeof UserSchema>;
export type ApiTokenOut = z.infer<typeof ApiTokenSchema>;
export type ServerOut = z.infer<typeof ServerSchema>;
export type PermissionOut = z.infer<typeof PermissionSchema>;
export type SubuserOut = z.infer<typeof SubuserSchema>;
export type BackupOut = z.infer<typeof BackupSchema>;
export type ActivityOut = z.infer<typeof ActivitySchema>;
export type ScheduleOut = z.infer<typeof ScheduleSchema>;
export type ScheduleRunOut = z.infer<typeof ScheduleRunSchema>;
export type NodeOut = z.infer<typeof NodeSchema>;
export type NodeChoiceOut = z.infer<typeof NodeChoiceSchema>;
export type BlueprintOut = z.infer<typeof BlueprintSchema>;
export type StartupOut = z.infer<typeof StartupSchema>;
