/**
 * The OpenAPI 3.1 document of the panel's public HTTP API: `/api/v1` (REST) and `/plants`, built
 * with zod-to-openapi from the same zod schemas the services validate with (src/validation) and
 * the response schemas the presenters are typed against (src/openapi/responses.ts).
 *
 * Served at `GET /api/v1/openapi.json` (and rendered at `GET /docs`); committed as /openapi.json
 * (`npm run openapi`, checked by test/openapi/document.test.ts).
 *
 * Not in the document: the node agents' API `/api/agent/v1` (internal: machine-to-machine, signed
 * with the node key, see src/shared/node-protocol.ts; no user credential works there), `/graphql`
 * (its own schema: /schema.graphql) and the `/docs` page itself.
 */
import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { createApiTokenInput, signinInput, signupInput, updateMeInput } from '../validation/auth.js';
import { adminUpdateUserInput, adminUsersQuery } from '../validation/admin.js';
import { createNodeInput, updateNodeInput } from '../validation/nodes.js';
import { createBlueprintInput, updateBlueprintInput } from '../validation/blueprints.js';
import { eggSchema } from '../blueprints/egg-schema.js';
import { YAML_TYPES } from '../http/body.js';
import { paginationQuery } from '../validation/pagination.js';
import { newPlantBody } from '../validation/plants.js';
import { createServerInput, deleteServerQuery, serverListQuery, updateServerInput } from '../validation/servers.js';
import { activityFilter } from '../validation/activity.js';
import { createSubuserInput, updateSubuserInput } from '../validation/subusers.js';
import { createBackupInput, restoreBackupInput } from '../validation/backups.js';
import { updateStartupInput } from '../validation/startup.js';
import { createScheduleInput, MAX_SCHEDULES, updateScheduleInput } from '../validation/schedules.js';
import { chmodInput as chmodFileInput, compressInput as compressFilesInput, decompressInput as decompressFileInput, deleteInput as deleteFilesInput, listQuery as listFilesQuery, pathInput as filePathInput, renameInput as renameFileInput, searchQuery as searchFilesQuery } from '../validation/files.js';
import {
  ApiTokenSchema,
  AuthResultSchema,
  BlueprintSchema,
  ImportedBlueprintSchema,
  ConsoleTicketSchema,
  CreatedApiTokenSchema,
  CreatedNodeSchema,
  envelope,
  ErrorSchema,
  listEnvelope,
  NodeChoiceSchema,
  NodeSchema,
  NodeStatsSchema,
  NodeTokenSchema,
  PlantErrorSchema,
  PlantSchema,
  PlatformStatsSchema,
  ActivitySchema,
  PermissionSchema,
  ServerSchema,
  SubuserSchema,
  ScheduleSchema,
  ScheduleRunSchema,
  FileEntrySchema,
  SftpDetailsSchema,
  BackupSchema,
  FilePageMetaSchema,
  SessionInfoSchema,
  StartupSchema,
  UserSchema,
} from './responses.js';

export const API_PREFIX = '/api/v1';

/** The document's introduction (Markdown), kept in description.md beside this file. */
const DESCRIPTION = readDescription();

const TAGS = [
  { name: 'Auth', description: 'Sign-up, sign-in, sign-out and the current session (rate-limit bucket `auth`: 10/min per address).' },
  { name: 'Users', description: 'The signed-in user and its API tokens.' },
  { name: 'Servers', description: "Servers: users see and act on their own, admins on all. Another user's server is a 404." },
  { name: 'Power', description: 'Power actions and console tokens: these reach the node agent (422 NODE_UNAVAILABLE when it cannot be reached).' },
  { name: 'Shared access', description: 'Subusers: accounts a server is shared with, each with the permission keys granted and optional folder scopes.' },
  { name: 'Activity', description: 'The activity log: who did what, when, from where. Entries are never changed; they are pruned after ACTIVITY_RETENTION_DAYS.' },
  { name: 'Schedules', description: 'Cron schedules of a server: five-field expressions in an IANA time zone, tasks run in order, and the history of runs. Each due run is claimed by one panel instance only.' },
  { name: 'Files', description: 'A server\'s files, worked on by its node as the server\'s own user: nothing outside the server\'s directory can be reached, through `..` or symlinks.' },
  { name: 'Nodes', description: 'Machines that host servers (administrators only).' },
  { name: 'Blueprints', description: 'Templates for servers (every signed-in user may read them).' },
  { name: 'Admin', description: 'Administration (administrators only; rate-limit bucket `admin`: 30/min).' },
  { name: 'Plants', description: 'The sample plant store: `POST /plants`, its own error shape, bearer tokens only.' },
  { name: 'Meta', description: 'This document.' },
];

type Status = 400 | 401 | 403 | 404 | 422;
type Auth = 'none' | 'user' | 'admin';

interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** below /api/v1, OpenAPI style (`{id}`) */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  auth: Auth;
  pathId?: string;
  /** path parameters besides `id` (which `pathId` describes) */
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  bodyDescription?: string;
  /** a body that is not JSON: its content types */
  rawBody?: string[];
  /** `body` may come as YAML too (these content types, the same schema) */
  yamlBody?: string[];
  /** `raw`: the answer is bytes of these content types rather than JSON */
  success: { status: 200 | 201 | 204; description: string; schema?: z.ZodType; raw?: string[] };
  /** answers besides the success and the errors (206 of a Range) */
  more?: Record<number, string>;
  /** Error statuses besides 429 and 500 (always possible), each with what causes it here. */
  errors: Partial<Record<Status, string>>;
}

const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] as const;
const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const limitHeaders = (withRetryAfter = false) =>
  Object.fromEntries([...RATE_LIMIT_HEADERS, ...(withRetryAfter ? ['Retry-After'] : [])].map((h) => [h, ref('headers', h)]));
const json = (schema: z.ZodType) => ({ 'application/json': { schema } });
const BYTES = z.string().meta({ format: 'binary' });
const binary = (types: string[]) => Object.fromEntries(types.map((t) => [t, { schema: BYTES }]));
const jsonRef = (schema: { $ref: string }) => ({ 'application/json': { schema } });

const COMPONENT_RESPONSES: Record<Status | 429 | 500, { name: string; description: string }> = {
  400: { name: 'BadRequest', description: 'BAD_REQUEST: malformed JSON, a body that is not a JSON object, a Content-Type that is not JSON, a body over 1 MiB, or a path parameter that is not valid percent-encoding.' },
  401: { name: 'Unauthorized', description: 'UNAUTHORIZED: missing, malformed, unknown, revoked or expired credentials.' },
  403: { name: 'Forbidden', description: 'FORBIDDEN: authenticated but not allowed (role), or a cookie-authenticated write from another origin (CSRF).' },
  404: { name: 'NotFound', description: "NOT_FOUND: unknown id (an id that is not a UUID too), or another user's server." },
  422: { name: 'Unprocessable', description: 'Well-formed but invalid or impossible.' },
  429: { name: 'TooManyRequests', description: 'RATE_LIMITED: over the limit of the bucket; retry after `Retry-After` seconds.' },
  500: { name: 'InternalError', description: 'INTERNAL_ERROR: a bug on our side (logged; never a stack trace or SQL in the body).' },
};

const SECURITY: Record<Auth, RouteConfig['security']> = {
  none: [],
  user: [{ bearerAuth: [] }, { sessionCookie: [] }],
  admin: [{ bearerAuth: [] }, { sessionCookie: [] }],
};

const idParam = (what: string) => z.object({ id: z.uuid().meta({ description: `${what} id (anything but a UUID is a 404).` }) });
const listQuery = (extra?: z.ZodObject) => (extra ? paginationQuery.extend(extra.shape) : paginationQuery);
const scheduleParam = z.object({ scheduleId: z.uuid().meta({ description: 'Schedule id (anything but a UUID is a 404).' }) });
const scheduleErrors = (key: string, extra: Partial<Record<Status, string>> = {}): Partial<Record<Status, string>> => ({
  401: '',
  403: `FORBIDDEN: you lack \`${key}\` on this server.`,
  404: 'NOT_FOUND: no such server, or no such schedule on it.',
  ...extra,
});
const SCHEDULE_BODY_ERRORS = 'VALIDATION_ERROR: `fields.cron` (not five valid fields, a value out of its field\'s range, or syntax beyond lists, ranges, steps and names: a seconds field, `@daily`, `?`, `L`, `W` and `#` are refused), `fields.timezone` (not an IANA name), `fields.name`, or `fields.tasks…` (1..10 tasks; `offsetSeconds` 0..900; `command` needs `payload.command`, one line; `power` needs `payload.action`).';
const SCHEDULE_OPERATIONS: Operation[] = [
  { method: 'get', path: '/servers/{id}/schedules', operationId: 'listSchedules', tag: 'Schedules', summary: 'List a server\'s schedules', description: 'Needs `schedule.read`. Oldest first.', auth: 'user', pathId: 'Server', query: listQuery(), success: { status: 200, description: 'A page of schedules.', schema: listEnvelope(ScheduleSchema) }, errors: scheduleErrors('schedule.read', { 422: 'VALIDATION_ERROR: bad `page` or `limit`.' }) },
  {
    method: 'post', path: '/servers/{id}/schedules', operationId: 'createSchedule', tag: 'Schedules', summary: 'Create a schedule',
    description: 'Needs `schedule.create`. `cron` has five fields (minute hour day-of-month month day-of-week; lists, ranges, steps, names), read in `timezone` (default UTC). Every expression names wall-clock times: across a DST change a time that does not exist runs at the first valid instant after the gap (once, however many times the gap swallowed), and a time that happens twice runs once, at its first occurrence. Tasks (1..10) run in list order; `sequence` is the position. A `backup` task makes a backup named `Scheduled <date> <time> <zone>`; at the server\'s backup limit it first deletes the oldest unlocked completed one.',
    auth: 'user', pathId: 'Server', body: createScheduleInput, success: { status: 201, description: 'The new schedule, with `nextRunAt` (null when disabled).', schema: envelope(ScheduleSchema) },
    errors: scheduleErrors('schedule.create', { 400: '', 422: `${SCHEDULE_BODY_ERRORS} QUOTA_EXCEEDED: the server holds ${MAX_SCHEDULES} schedules, the most it may have (\`details.exceeded: ["schedules"]\`, with \`limits\`, \`used\` and \`requested\`): delete one first.` }),
  },
  { method: 'get', path: '/servers/{id}/schedules/{scheduleId}', operationId: 'getSchedule', tag: 'Schedules', summary: 'Get a schedule', description: 'Needs `schedule.read`.', auth: 'user', pathId: 'Server', params: scheduleParam, success: { status: 200, description: 'The schedule.', schema: envelope(ScheduleSchema) }, errors: scheduleErrors('schedule.read') },
  {
    method: 'patch', path: '/servers/{id}/schedules/{scheduleId}', operationId: 'updateSchedule', tag: 'Schedules', summary: 'Change a schedule',
    description: 'Needs `schedule.update`. Fields given replace the old ones (`tasks` as a whole list). A change of `cron`, `timezone` or `enabled` computes `nextRunAt` again from now.',
    auth: 'user', pathId: 'Server', params: scheduleParam, body: updateScheduleInput, success: { status: 200, description: 'The schedule.', schema: envelope(ScheduleSchema) },
    errors: scheduleErrors('schedule.update', { 400: '', 422: SCHEDULE_BODY_ERRORS }),
  },
  { method: 'delete', path: '/servers/{id}/schedules/{scheduleId}', operationId: 'deleteSchedule', tag: 'Schedules', summary: 'Delete a schedule', description: 'Needs `schedule.delete`. Its history of runs goes with it.', auth: 'user', pathId: 'Server', params: scheduleParam, success: { status: 204, description: 'Deleted.' }, errors: scheduleErrors('schedule.delete') },
  {
    method: 'post', path: '/servers/{id}/schedules/{scheduleId}/run', operationId: 'runSchedule', tag: 'Schedules', summary: 'Run a schedule now',
    description: 'Needs `schedule.update`. Starts a run at once, enabled or not (`nextRunAt` does not move), and answers before its tasks are done: follow it in `GET …/runs`.',
    auth: 'user', pathId: 'Server', params: scheduleParam, success: { status: 201, description: 'The run just started (`status: running`); its tasks go on after this answer.', schema: envelope(ScheduleRunSchema) }, errors: scheduleErrors('schedule.update'),
  },
  { method: 'get', path: '/servers/{id}/schedules/{scheduleId}/runs', operationId: 'listScheduleRuns', tag: 'Schedules', summary: 'A schedule\'s runs', description: 'Needs `schedule.read`. Newest first.', auth: 'user', pathId: 'Server', params: scheduleParam, query: listQuery(), success: { status: 200, description: 'A page of runs.', schema: listEnvelope(ScheduleRunSchema) }, errors: scheduleErrors('schedule.read', { 422: 'VALIDATION_ERROR: bad `page` or `limit`.' }) },
];

const subuserParam = z.object({ userId: z.uuid().meta({ description: 'The subuser\'s account id (anything but a UUID is a 404).' }) });

const fileErrors = (key: string, extra: Partial<Record<Status, string>> = {}): Partial<Record<Status, string>> => ({
  401: '',
  403: `FORBIDDEN: you lack \`${key}\` on this server, or the path is outside your folders${key === 'file.read' ? '' : ", or the server's blueprint denies the path (its `fileDenylist`; `details: { path, pattern }`; owners and administrators included, listings and searches excepted)"}.`,
  404: 'NOT_FOUND: no such server, or no such file or folder.',
  422: 'INVALID_PATH: the path is not text, holds NUL, or leads outside the server (`..` or a symlink); NODE_UNAVAILABLE; VALIDATION_ERROR.',
  ...extra,
});
const filePath = z.object({ path: z.string().meta({ description: 'Relative to the server\'s root (a leading `/` is that root).', example: '/plugins/config.yml' }) });
const backupParam = z.object({ backupId: z.uuid().meta({ description: 'Backup id (anything but a UUID is a 404).' }) });
const backupErrors = (key: string, extra: Partial<Record<Status, string>> = {}): Partial<Record<Status, string>> => ({
  401: '',
  403: `FORBIDDEN: you lack \`${key}\` on this server.`,
  404: 'NOT_FOUND: no such server, or no such backup of it.',
  ...extra,
});
const BACKUP_OPERATIONS: Operation[] = [
  { method: 'get', path: '/servers/{id}/backups', operationId: 'listBackups', tag: 'Backups', summary: 'List a server\'s backups', description: 'Needs `backup.read`. Newest first.', auth: 'user', pathId: 'Server', query: listQuery(), success: { status: 200, description: 'A page of backups.', schema: listEnvelope(BackupSchema) }, errors: backupErrors('backup.read', { 422: 'VALIDATION_ERROR: bad `page` or `limit`.' }) },
  { method: 'post', path: '/servers/{id}/backups', operationId: 'createBackup', tag: 'Backups', summary: 'Back up a server', description: 'Needs `backup.create`. Answers at once with a `pending` backup; the node makes it in the background (the server may keep running): `GET` it, or subscribe to `serverBackups` over GraphQL, to follow `files` and `size` until it is `completed` or `failed`. Each file is stored once by its SHA-256 across the server\'s backups, so a backup of an unchanged server adds almost nothing. At the server\'s `backupLimit` (counting all but failed backups) → 422 BACKUP_LIMIT, checked with the server locked, so concurrent requests cannot pass it.', auth: 'user', pathId: 'Server', body: createBackupInput, success: { status: 201, description: 'The new backup, pending.', schema: envelope(BackupSchema) }, errors: backupErrors('backup.create', { 400: '', 422: 'BACKUP_LIMIT; VALIDATION_ERROR; NODE_UNAVAILABLE (the backup is recorded as failed).' }) },
  { method: 'get', path: '/servers/{id}/backups/{backupId}', operationId: 'getBackup', tag: 'Backups', summary: 'A backup', description: 'Needs `backup.read`.', auth: 'user', pathId: 'Server', params: backupParam, success: { status: 200, description: 'The backup.', schema: envelope(BackupSchema) }, errors: backupErrors('backup.read') },
  { method: 'get', path: '/servers/{id}/backups/{backupId}/download', operationId: 'downloadBackup', tag: 'Backups', summary: 'Download a backup', description: 'Needs `backup.download`. A `.tar.gz` made on the fly from the stored files (nothing is staged on disk): folders, files with their modes, symlinks.', auth: 'user', pathId: 'Server', params: backupParam, success: { status: 200, description: 'The archive.', raw: ['application/gzip'] }, errors: backupErrors('backup.download', { 422: 'INVALID_STATE: the backup is not completed; NODE_UNAVAILABLE.' }) },
  { method: 'post', path: '/servers/{id}/backups/{backupId}/restore', operationId: 'restoreBackup', tag: 'Backups', summary: 'Restore a backup', description: 'Needs `backup.restore`. The server must be offline; it is `restoring` until the node is done (it cannot start meanwhile), then `offline`, with `server:backup.restore-complete` or `server:backup.restore-fail` in the activity log. Every file is checked against its stored SHA-256 as it is written: a damaged one fails the restore, is named in the entry\'s error, and stays as it was. Files are written whole (a temporary file renamed over the old one); with `truncate`, files the backup does not have are deleted first.', auth: 'user', pathId: 'Server', params: backupParam, body: restoreBackupInput, success: { status: 200, description: 'The backup being restored.', schema: envelope(BackupSchema) }, errors: backupErrors('backup.restore', { 400: '', 422: 'INVALID_STATE: the server is not offline, or the backup is not completed; VALIDATION_ERROR; NODE_UNAVAILABLE.' }) },
  { method: 'post', path: '/servers/{id}/backups/{backupId}/lock', operationId: 'lockBackup', tag: 'Backups', summary: 'Lock a backup', description: 'Needs `backup.delete`. A locked backup cannot be deleted.', auth: 'user', pathId: 'Server', params: backupParam, success: { status: 200, description: 'The backup.', schema: envelope(BackupSchema) }, errors: backupErrors('backup.delete') },
  { method: 'post', path: '/servers/{id}/backups/{backupId}/unlock', operationId: 'unlockBackup', tag: 'Backups', summary: 'Unlock a backup', description: 'Needs `backup.delete`.', auth: 'user', pathId: 'Server', params: backupParam, success: { status: 200, description: 'The backup.', schema: envelope(BackupSchema) }, errors: backupErrors('backup.delete') },
  { method: 'delete', path: '/servers/{id}/backups/{backupId}', operationId: 'deleteBackup', tag: 'Backups', summary: 'Delete a backup', description: 'Needs `backup.delete`. Frees on the node only what no other backup of the server holds.', auth: 'user', pathId: 'Server', params: backupParam, success: { status: 204, description: 'Deleted.' }, errors: backupErrors('backup.delete', { 422: 'INVALID_STATE: the backup is locked, or a restore of the server is under way; NODE_UNAVAILABLE.' }) },
];
const startupErrors = (key: string, extra: Partial<Record<Status, string>> = {}): Partial<Record<Status, string>> => ({
  401: '',
  403: `FORBIDDEN: you lack \`${key}\` on this server.`,
  404: 'NOT_FOUND: no such server.',
  ...extra,
});
const STARTUP_OPERATIONS: Operation[] = [
  {
    method: 'get', path: '/servers/{id}/startup', operationId: 'getServerStartup', tag: 'Servers', summary: "A server's startup variables",
    description: "Needs `startup.read`. The variables the blueprint marks user-viewable (`userViewable`), with the server's values, and the startup command with those values in place. Owner, subusers and administrators see the same list: hidden variables are never shown here (administrators read and change every value through `GET`/`PATCH /servers/{id}`).",
    auth: 'user', pathId: 'Server', success: { status: 200, description: 'The startup command and variables.', schema: envelope(StartupSchema) }, errors: startupErrors('startup.read'),
  },
  {
    method: 'put', path: '/servers/{id}/startup', operationId: 'updateServerStartup', tag: 'Servers', summary: "Change a server's startup variables",
    description: "Needs `startup.update`. Sets the named user-editable variables (the others keep their values); each value is checked by its variable's rules, and nothing is saved unless all pass. The server's node gets the new values at once; a running server uses them from its next start. Records `server:startup.edit` in the activity log with the keys changed (never the values). `{}` changes nothing and records nothing. On a panel with `USER_COMMAND_BLUEPRINTS=admins`, only administrators change the variables of a built-in user-command server (422 `fields.variables`).",
    auth: 'user', pathId: 'Server', body: updateStartupInput, success: { status: 200, description: 'The startup command and variables, as GET answers them after the change; for a caller without `startup.read`, only the variables sent and the startup template with its placeholders.', schema: envelope(StartupSchema) },
    errors: startupErrors('startup.update', { 400: '', 422: 'VALIDATION_ERROR: `fields["variables.<KEY>"]` for each key that is not a user-viewable variable of the blueprint ("is not a startup variable of this server"), is viewable but not user-editable ("is read-only"), or whose value breaks its rules (the rule\'s message, the same as on server create and update); `fields.variables` when the body\'s `variables` is not an object of strings.' }),
  },
];

const FILE_OPERATIONS: Operation[] = [
  { method: 'get', path: '/servers/{id}/files', operationId: 'listFiles', tag: 'Files', summary: 'List a folder', description: 'Needs `file.read`. Folders first, then by name; `limit` 1..1000 (default 500). A symlink is listed as a symlink.', auth: 'user', pathId: 'Server', query: listFilesQuery, success: { status: 200, description: 'A page of entries.', schema: z.object({ data: z.array(FileEntrySchema), meta: FilePageMetaSchema }) }, errors: fileErrors('file.read') },
  { method: 'get', path: '/servers/{id}/files/search', operationId: 'searchFiles', tag: 'Files', summary: 'Search by name', description: 'Needs `file.read`. Entries below `path` whose name contains `query` (case-insensitive), at most 1,000; symlinks are not followed.', auth: 'user', pathId: 'Server', query: searchFilesQuery, success: { status: 200, description: 'The entries found.', schema: envelope(z.array(FileEntrySchema)) }, errors: fileErrors('file.read') },
  { method: 'get', path: '/servers/{id}/files/contents', operationId: 'readFile', tag: 'Files', summary: 'Read a file (editor)', description: 'Needs `file.read-content`. The raw bytes: `text/plain; charset=utf-8` when they are UTF-8, else `application/octet-stream`. Over FILE_EDIT_MAX_BYTES (4 MiB): 422 FILE_TOO_LARGE (download it instead).', auth: 'user', pathId: 'Server', query: filePath, success: { status: 200, description: 'The file\'s bytes.', raw: ['text/plain', 'application/octet-stream'] }, errors: fileErrors('file.read-content', { 422: 'INVALID_PATH, FILE_TOO_LARGE, NODE_UNAVAILABLE.' }) },
  { method: 'put', path: '/servers/{id}/files/contents', operationId: 'writeFile', tag: 'Files', summary: 'Write a file', description: 'Needs `file.update` (`file.create` when the file is new). The raw body is streamed to the node and written atomically (a reader sees the old or the new file). The folder must exist.', auth: 'user', pathId: 'Server', query: filePath, rawBody: ['application/octet-stream', 'text/plain'], success: { status: 200, description: 'The entry written.', schema: envelope(FileEntrySchema) }, errors: fileErrors('file.update', { 400: '', 422: 'INVALID_PATH; DISK_LIMIT (nothing is left half-written); ALREADY_EXISTS: the caller may create the file but not update it, and a file was made at the path during the upload (it is kept); VALIDATION_ERROR: over FILE_UPLOAD_MAX_BYTES; NODE_UNAVAILABLE.' }) },
  { method: 'get', path: '/servers/{id}/files/download', operationId: 'downloadFile', tag: 'Files', summary: 'Download a file', description: 'Needs `file.read-content`. Streamed, any size, `Content-Disposition: attachment`; one `Range: bytes=a-b` (or `a-`) is honoured (206); one that lies past the end is ignored (the whole file, 200).', auth: 'user', pathId: 'Server', query: filePath, success: { status: 200, description: 'The file.', raw: ['application/octet-stream'] }, more: { 206: 'The range asked for.' }, errors: fileErrors('file.read-content') },
  { method: 'post', path: '/servers/{id}/files/upload', operationId: 'uploadFiles', tag: 'Files', summary: 'Upload files', description: 'Needs `file.create`. `multipart/form-data`, one part per file, written into the folder `path` (each streamed to the node, each at most FILE_UPLOAD_MAX_BYTES, all within the disk limit).', auth: 'user', pathId: 'Server', query: filePath, rawBody: ['multipart/form-data'], success: { status: 201, description: 'The entries written.', schema: envelope(z.array(FileEntrySchema)) }, errors: fileErrors('file.create', { 400: 'BAD_REQUEST: not multipart/form-data.', 422: 'INVALID_PATH; DISK_LIMIT; VALIDATION_ERROR: no file, or a file over FILE_UPLOAD_MAX_BYTES.' }) },
  { method: 'post', path: '/servers/{id}/files/rename', operationId: 'renameFile', tag: 'Files', summary: 'Rename or move', description: 'Needs `file.update` for both paths.', auth: 'user', pathId: 'Server', body: renameFileInput, success: { status: 200, description: 'The entry at its new path.', schema: envelope(FileEntrySchema) }, errors: fileErrors('file.update', { 400: '', 422: 'INVALID_PATH; ALREADY_EXISTS: `to` exists; VALIDATION_ERROR.' }) },
  { method: 'post', path: '/servers/{id}/files/copy', operationId: 'copyFile', tag: 'Files', summary: 'Copy a file beside itself', description: 'Needs `file.create`. Named `name copy.ext`, `name copy 2.ext`, …', auth: 'user', pathId: 'Server', body: filePathInput, success: { status: 201, description: 'The copy.', schema: envelope(FileEntrySchema) }, errors: fileErrors('file.create', { 400: '', 422: 'INVALID_PATH; DISK_LIMIT; VALIDATION_ERROR.' }) },
  { method: 'post', path: '/servers/{id}/files/delete', operationId: 'deleteFiles', tag: 'Files', summary: 'Delete files and folders', description: 'Needs `file.delete`. 1..1000 paths; folders with everything in them; a symlink is removed, never what it points to.', auth: 'user', pathId: 'Server', body: deleteFilesInput, success: { status: 204, description: 'Deleted.' }, errors: fileErrors('file.delete', { 400: '' }) },
  { method: 'post', path: '/servers/{id}/files/directory', operationId: 'createDirectory', tag: 'Files', summary: 'Create a folder', description: 'Needs `file.create`. The parent must exist.', auth: 'user', pathId: 'Server', body: filePathInput, success: { status: 201, description: 'The new folder.', schema: envelope(FileEntrySchema) }, errors: fileErrors('file.create', { 400: '', 422: 'INVALID_PATH; ALREADY_EXISTS; VALIDATION_ERROR.' }) },
  { method: 'post', path: '/servers/{id}/files/chmod', operationId: 'chmodFile', tag: 'Files', summary: 'Change permission bits', description: 'Needs `file.update`. `mode` is an octal string of permission bits (`644`; no setuid, setgid or sticky bit); never through a symlink.', auth: 'user', pathId: 'Server', body: chmodFileInput, success: { status: 200, description: 'The entry.', schema: envelope(FileEntrySchema) }, errors: fileErrors('file.update', { 400: '' }) },
  { method: 'post', path: '/servers/{id}/files/compress', operationId: 'compressFiles', tag: 'Files', summary: 'Compress into a .tar.gz', description: 'Needs `file.archive` for every path and the destination. Folders with everything in them; entries are named from the folder the paths share; symlinks are stored as links, never followed. `destination` is the archive\'s path (it must not exist); by default `archive-<date>_<time>.tar.gz` in the folder the paths share (for a subuser limited to folders, in their folder that holds the paths when the shared one lies above it). Within the disk limit: past it, 422 DISK_LIMIT and no archive.', auth: 'user', pathId: 'Server', body: compressFilesInput, success: { status: 201, description: 'The new archive.', schema: envelope(FileEntrySchema) }, errors: fileErrors('file.archive', { 400: '', 422: 'INVALID_PATH; ALREADY_EXISTS: the destination exists; DISK_LIMIT; VALIDATION_ERROR; NODE_UNAVAILABLE.' }) },
  { method: 'post', path: '/servers/{id}/files/decompress', operationId: 'decompressFile', tag: 'Files', summary: 'Decompress an archive', description: 'Needs `file.archive` for the archive and the destination, and `file.update` there to replace a file that exists (without it nothing is replaced: 422 ALREADY_EXISTS naming the file, nothing written). `.tar.gz`, `.tgz`, `.tar` and `.zip` (told by their first bytes), into the folder `destination` (by default the archive\'s own; made when missing). Existing files of the same name are replaced (with `file.update`; without it nothing is replaced: 422 ALREADY_EXISTS). Every entry is checked before anything is written: one that would land outside the destination, an absolute name, a link pointing outside it, an entry below a link the archive makes, or a device is 422 INVALID_ARCHIVE and nothing is written; more than the disk limit allows is 422 DISK_LIMIT and nothing is written (an expansion that passes it anyway stops and removes what it wrote). Hard links are written as copies.', auth: 'user', pathId: 'Server', body: decompressFileInput, success: { status: 200, description: 'The entries made or replaced at the top of the destination.', schema: envelope(z.array(FileEntrySchema)) }, errors: fileErrors('file.archive', { 400: '', 422: 'INVALID_PATH; INVALID_ARCHIVE; DISK_LIMIT; ALREADY_EXISTS: a file of the archive would replace one and you lack `file.update`; INVALID_STATE: a file of the archive would replace a folder; VALIDATION_ERROR; NODE_UNAVAILABLE.' }) },
  { method: 'get', path: '/servers/{id}/sftp', operationId: 'getSftpDetails', tag: 'Files', summary: 'SFTP connection details', description: 'Needs `file.sftp`. The node serves SFTP on its own port with its own host key: log in as `username` with your account\'s password. The session has your keys and folder scopes on this server, the disk limit holds on every upload, and it ends within a second of your access being taken away or your password being changed. Uploads are written whole and in order (resuming at an offset is refused); setstat changes permission bits only.', auth: 'user', pathId: 'Server', success: { status: 200, description: 'How to connect.', schema: envelope(SftpDetailsSchema) }, errors: { 401: '', 403: 'FORBIDDEN: you lack `file.sftp` on this server.', 404: 'NOT_FOUND: no such server.' } },
];

const OPERATIONS: Operation[] = [
  // --- auth
  {
    method: 'post',
    path: '/auth/signup',
    operationId: 'signUp',
    tag: 'Auth',
    summary: 'Sign up',
    description: 'Creates a `user` account and signs it in: returns a session token and sets the `hp_session` cookie. Can be turned off by the operator (`ALLOW_SIGNUP=false`).',
    auth: 'none',
    body: signupInput,
    success: { status: 201, description: 'Signed up and signed in (the `hp_session` cookie is set too).', schema: envelope(AuthResultSchema) },
    errors: { 400: '', 403: 'FORBIDDEN: sign-up is turned off on this panel.', 422: 'VALIDATION_ERROR (details.fields), or ALREADY_EXISTS: the email is taken (case-insensitively).' },
  },
  {
    method: 'post',
    path: '/auth/signin',
    operationId: 'signIn',
    tag: 'Auth',
    summary: 'Sign in',
    description: 'Returns a new session token and sets the `hp_session` cookie. A wrong email and a wrong password get the same 401 in about the same time.',
    auth: 'none',
    body: signinInput,
    success: { status: 200, description: 'Signed in (the `hp_session` cookie is set too).', schema: envelope(AuthResultSchema) },
    errors: { 400: '', 401: 'UNAUTHORIZED: invalid email or password (the same answer for both).', 422: 'VALIDATION_ERROR: a field is missing or not a string.' },
  },
  {
    method: 'post',
    path: '/auth/signout',
    operationId: 'signOut',
    tag: 'Auth',
    summary: 'Sign out',
    description: 'Ends the credential it is sent with, at once, and clears the cookie: a session is signed out, and an API token is revoked (as DELETE /users/me/api-tokens/{id} does; a script that only wants to leave should not call this with its token).',
    auth: 'user',
    success: { status: 204, description: 'Signed out.' },
    errors: { 400: '', 401: '', 403: '' },
  },
  {
    method: 'get',
    path: '/auth/session',
    operationId: 'getSession',
    tag: 'Auth',
    summary: 'The current session and user',
    auth: 'user',
    success: { status: 200, description: 'The credential in use and its user.', schema: envelope(SessionInfoSchema) },
    errors: { 401: '' },
  },
  // --- users
  {
    method: 'get',
    path: '/users/me',
    operationId: 'getMe',
    tag: 'Users',
    summary: 'The signed-in user',
    auth: 'user',
    success: { status: 200, description: 'The user.', schema: envelope(UserSchema) },
    errors: { 401: '' },
  },
  {
    method: 'patch',
    path: '/users/me',
    operationId: 'updateMe',
    tag: 'Users',
    summary: 'Update the signed-in user',
    description: "Changes name, email or password. A password change, and an email change, need `currentPassword` (422 `fields.currentPassword` when it is missing or wrong); a password change ends the user's other sessions.",
    auth: 'user',
    body: updateMeInput,
    success: { status: 200, description: 'The updated user.', schema: envelope(UserSchema) },
    errors: {
      400: '',
      401: '',
      403: '',
      422: 'VALIDATION_ERROR (e.g. `currentPassword` missing or wrong), or ALREADY_EXISTS: the email is taken.',
    },
  },
  {
    method: 'get',
    path: '/users/me/nodes',
    operationId: 'listNodeChoices',
    tag: 'Users',
    summary: 'Nodes you may create servers on',
    description:
      'Every node with its name, status and the memory/disk it can still allocate (MiB), for choosing `nodeId` in POST /servers. ' +
      'Unlike /nodes (administrators only), it shows no address or other node details.',
    auth: 'user',
    query: listQuery(),
    success: { status: 200, description: 'A page of nodes.', schema: listEnvelope(NodeChoiceSchema) },
    errors: { 401: '', 422: 'VALIDATION_ERROR: bad `page` or `limit`.' },
  },
  {
    method: 'get',
    path: '/users/me/api-tokens',
    operationId: 'listApiTokens',
    tag: 'Users',
    summary: "List the user's API tokens",
    description: 'Active tokens (not revoked), without their secrets.',
    auth: 'user',
    query: listQuery(),
    success: { status: 200, description: 'A page of API tokens.', schema: listEnvelope(ApiTokenSchema) },
    errors: { 401: '', 422: 'VALIDATION_ERROR: bad `page` or `limit`.' },
  },
  {
    method: 'post',
    path: '/users/me/api-tokens',
    operationId: 'createApiToken',
    tag: 'Users',
    summary: 'Create an API token',
    description: 'The secret (`hpt_…`) is in the response, this once; only its hash is stored.',
    auth: 'user',
    body: createApiTokenInput,
    success: { status: 201, description: 'The token with its secret.', schema: envelope(CreatedApiTokenSchema) },
    errors: { 400: '', 401: '', 403: '', 422: 'VALIDATION_ERROR.' },
  },
  {
    method: 'delete',
    path: '/users/me/api-tokens/{id}',
    operationId: 'revokeApiToken',
    tag: 'Users',
    summary: 'Revoke an API token',
    description: 'The token gives 401 at once. Only its user may revoke it.',
    auth: 'user',
    pathId: 'API token',
    success: { status: 204, description: 'Revoked.' },
    errors: { 400: '', 401: '', 403: '', 404: "NOT_FOUND: no such token of this user (another user's token too)." },
  },
  // --- servers
  {
    method: 'get',
    path: '/servers',
    operationId: 'listServers',
    tag: 'Servers',
    summary: 'List servers',
    description: 'Own servers; all servers for administrators.',
    auth: 'user',
    query: listQuery(serverListQuery),
    success: { status: 200, description: 'A page of servers.', schema: listEnvelope(ServerSchema) },
    errors: { 401: '', 422: 'VALIDATION_ERROR: bad `page`, `limit`, `status` or `nodeId`.' },
  },
  {
    method: 'post',
    path: '/servers',
    operationId: 'createServer',
    tag: 'Servers',
    summary: 'Create a server',
    description:
      'Creates the server on the node and installs it (status `installing`, then `offline` or `install_failed`). memory/cpu/disk default to the blueprint\'s `defaults`; variables are checked against the blueprint\'s rules.',
    auth: 'user',
    body: createServerInput,
    success: { status: 201, description: 'The new server.', schema: envelope(ServerSchema) },
    errors: {
      400: '',
      401: '',
      403: 'FORBIDDEN: `ownerId` of another user given by a non-administrator.',
      422: 'VALIDATION_ERROR (unknown node or blueprint, bad variables, cpu over the node\'s cores × 100, a blueprint that runs a user-chosen command when the operator keeps those to administrators (`fields.blueprintId`), a `backupLimit` above BACKUP_LIMIT_DEFAULT from a non-administrator (`fields.backupLimit`), …), CAPACITY_EXCEEDED: the node has not enough unallocated memory or disk, or QUOTA_EXCEEDED: the owner\'s per-user quota of servers, memory, cpu or disk (`details.exceeded` says which; administrators are exempt).',
    },
  },
  {
    method: 'get',
    path: '/servers/{id}',
    operationId: 'getServer',
    tag: 'Servers',
    summary: 'Get a server',
    auth: 'user',
    pathId: 'Server',
    success: { status: 200, description: 'The server.', schema: envelope(ServerSchema) },
    errors: { 401: '', 404: '' },
  },
  {
    method: 'patch',
    path: '/servers/{id}',
    operationId: 'updateServer',
    tag: 'Servers',
    summary: 'Update a server',
    description: 'name, description, memory, cpu, disk, backupLimit, variables and autoRestart; resources take effect at the next start. `nodeId`, `blueprintId` and `ownerId` cannot change (422).',
    auth: 'user',
    pathId: 'Server',
    body: updateServerInput,
    success: { status: 200, description: 'The updated server.', schema: envelope(ServerSchema) },
    errors: { 400: '', 401: '', 403: '', 404: '', 422: 'VALIDATION_ERROR (`fields.variables` when a non-administrator changes the command of a user-command server that the operator keeps to administrators; `fields.backupLimit` when a non-administrator sets more than the server\'s limit now or BACKUP_LIMIT_DEFAULT, whichever is larger), CAPACITY_EXCEEDED: the node cannot allocate the new memory or disk, or QUOTA_EXCEEDED: growing memory, cpu or disk would take the owner over a per-user quota.' },
  },
  {
    method: 'delete',
    path: '/servers/{id}',
    operationId: 'deleteServer',
    tag: 'Servers',
    summary: 'Delete a server',
    description: 'The node kills the process and removes its files, then the record is deleted. When the node cannot be reached the record stays (422 NODE_UNAVAILABLE) unless an administrator passes `force=true`.',
    auth: 'user',
    pathId: 'Server',
    query: deleteServerQuery,
    success: { status: 204, description: 'Deleted.' },
    errors: {
      400: '',
      401: '',
      403: 'FORBIDDEN: `force` by a non-administrator.',
      404: '',
      422: 'NODE_UNAVAILABLE: the node cannot be reached; or VALIDATION_ERROR: bad `force`.',
    },
  },
  {
    method: 'post',
    path: '/servers/{id}/reinstall',
    operationId: 'reinstallServer',
    tag: 'Servers',
    summary: 'Reinstall a server',
    description:
      "Runs the blueprint's install script again, as at create: `installing`, then `offline` or `install_failed` (the install's lines are in the console). The node gets the blueprint as it is now, so this is the way back from a failed install once an administrator has fixed the script. The server's files stay: the script runs over them (as in Pterodactyl), and a blueprint without a script leaves the server `offline` at once. The owner and administrators only (a subuser gets 403, whatever keys they hold). The server must not be running: offline or `install_failed`. Records `server:reinstall` in the activity log.",
    auth: 'user',
    pathId: 'Server',
    success: { status: 200, description: 'The server, `installing` (the install goes on after the answer: follow its status).', schema: envelope(ServerSchema) },
    errors: {
      400: '',
      401: '',
      403: 'FORBIDDEN: a subuser (reinstalling is the owner\'s and administrators\').',
      404: '',
      422: 'INVALID_STATE: the server is starting, running or stopping (stop it first), already installing, or a backup is being restored; NODE_UNAVAILABLE: the node cannot be reached (the server keeps its status).',
    },
  },
  ...(['start', 'stop', 'restart', 'kill'] as const).map(
    (action): Operation => ({
      method: 'post',
      path: `/servers/{id}/${action}`,
      operationId: `${action}Server`,
      tag: 'Power',
      summary: { start: 'Start a server', stop: 'Stop a server', restart: 'Restart a server', kill: 'Kill a server' }[action],
      description: {
        start: 'offline → starting → running. A no-op 200 when starting or running.',
        stop: 'starting/running → stopping → offline: the stop command (or signal), then a kill after the grace period. A no-op 200 when offline or stopping.',
        restart: 'Stop (if needed), then start.',
        kill: 'Kills the process at once → offline.',
      }[action],
      auth: 'user',
      pathId: 'Server',
      success: { status: 200, description: 'The server right after the request (usually `starting`/`stopping`).', schema: envelope(ServerSchema) },
      errors: {
        400: '',
        401: '',
        403: '',
        404: '',
        422: `NODE_UNAVAILABLE: the node agent cannot be reached${action === 'kill' ? '' : '; or INVALID_STATE: the server is still installing'}.`,
      },
    }),
  ),
  {
    method: 'get',
    path: '/servers/{id}/console-token',
    operationId: 'getConsoleToken',
    tag: 'Power',
    summary: 'Get a console token',
    description: "A short-lived token and the address of the node's console channel (see *The console channel* above).",
    auth: 'user',
    pathId: 'Server',
    success: { status: 200, description: 'The console token and socket address.', schema: envelope(ConsoleTicketSchema) },
    errors: { 401: '', 404: '', 422: 'NODE_UNAVAILABLE: the node has no token yet, so it could not verify a console token.' },
  },
  // --- shared access and the activity log
  {
    method: 'get',
    path: '/permissions',
    operationId: 'listPermissions',
    tag: 'Shared access',
    summary: 'List permission keys',
    description: 'Every key a server owner can grant to a subuser, with what it allows. The owner and administrators hold every key.',
    auth: 'user',
    success: { status: 200, description: 'The permission keys.', schema: envelope(z.array(PermissionSchema)) },
    errors: { 401: '' },
  },
  {
    method: 'get',
    path: '/servers/{id}/subusers',
    operationId: 'listSubusers',
    tag: 'Shared access',
    summary: 'List a server\'s subusers',
    description: 'Needs `user.read`.',
    auth: 'user',
    pathId: 'Server',
    query: listQuery(),
    success: { status: 200, description: 'A page of subusers, oldest first.', schema: listEnvelope(SubuserSchema) },
    errors: { 401: '', 403: 'FORBIDDEN: you lack `user.read` on this server.', 404: '', 422: 'VALIDATION_ERROR: bad `page` or `limit`.' },
  },
  {
    method: 'post',
    path: '/servers/{id}/subusers',
    operationId: 'createSubuser',
    tag: 'Shared access',
    summary: 'Share a server with an account',
    description:
      'Needs `user.create`. `email` names an existing account (not the owner). You can only grant keys you hold yourself, and a subuser limited to some folders can only give scopes inside them. `paths` are folders relative to the server root; empty or absent: the whole server.',
    auth: 'user',
    pathId: 'Server',
    body: createSubuserInput,
    success: { status: 201, description: 'The new subuser.', schema: envelope(SubuserSchema) },
    errors: {
      400: '',
      401: '',
      403: 'FORBIDDEN: you lack `user.create`, or grant a key (or a scope) you do not hold.',
      404: '',
      422: 'VALIDATION_ERROR (`fields.email`: no such account, or the owner; `fields.permissions`: unknown keys; `fields.paths`: `..`, NUL or control characters), or ALREADY_EXISTS: already a subuser.',
    },
  },
  {
    method: 'patch',
    path: '/servers/{id}/subusers/{userId}',
    operationId: 'updateSubuser',
    tag: 'Shared access',
    summary: 'Change a subuser\'s permissions or folders',
    description: 'Needs `user.update`. Nobody changes their own entry or grants a key they lack. Removing keys closes the subuser\'s live console sockets and subscriptions of this server within a second.',
    auth: 'user',
    pathId: 'Server',
    params: subuserParam,
    body: updateSubuserInput,
    success: { status: 200, description: 'The subuser.', schema: envelope(SubuserSchema) },
    errors: { 400: '', 401: '', 403: 'FORBIDDEN: you lack `user.update`, change your own entry, or grant what you do not hold.', 404: 'NOT_FOUND: no such server, or the account is not its subuser.', 422: 'VALIDATION_ERROR: unknown keys or bad paths.' },
  },
  {
    method: 'delete',
    path: '/servers/{id}/subusers/{userId}',
    operationId: 'deleteSubuser',
    tag: 'Shared access',
    summary: 'Stop sharing a server with an account',
    description: 'Needs `user.delete`. Their live console sockets and subscriptions of this server end within a second.',
    auth: 'user',
    pathId: 'Server',
    params: subuserParam,
    success: { status: 204, description: 'Removed.' },
    errors: { 401: '', 403: 'FORBIDDEN: you lack `user.delete`, or remove yourself.', 404: 'NOT_FOUND: no such server, or the account is not its subuser.' },
  },
  {
    method: 'get',
    path: '/servers/{id}/activity',
    operationId: 'listServerActivity',
    tag: 'Activity',
    summary: 'A server\'s activity log',
    description: 'Needs `activity.read`. Newest first.',
    auth: 'user',
    pathId: 'Server',
    query: listQuery(activityFilter),
    success: { status: 200, description: 'A page of entries.', schema: listEnvelope(ActivitySchema) },
    errors: { 401: '', 403: 'FORBIDDEN: you lack `activity.read` on this server.', 404: '', 422: 'VALIDATION_ERROR: bad filter, `page` or `limit`.' },
  },
  {
    method: 'get',
    path: '/users/me/activity',
    operationId: 'listMyActivity',
    tag: 'Activity',
    summary: 'What you did',
    description: 'Your own entries, newest first.',
    auth: 'user',
    query: listQuery(activityFilter),
    success: { status: 200, description: 'A page of entries.', schema: listEnvelope(ActivitySchema) },
    errors: { 401: '', 422: 'VALIDATION_ERROR: bad filter, `page` or `limit`.' },
  },
  {
    method: 'get',
    path: '/admin/activity',
    operationId: 'listActivity',
    tag: 'Activity',
    summary: 'The whole activity log',
    description: 'Administrators only. Newest first.',
    auth: 'admin',
    query: listQuery(activityFilter),
    success: { status: 200, description: 'A page of entries.', schema: listEnvelope(ActivitySchema) },
    errors: { 401: '', 403: 'FORBIDDEN: administrators only.', 422: 'VALIDATION_ERROR: bad filter, `page` or `limit`.' },
  },
  // --- schedules
  ...SCHEDULE_OPERATIONS,
  // --- files
  ...FILE_OPERATIONS,
  ...BACKUP_OPERATIONS,
  ...STARTUP_OPERATIONS,
  // --- nodes
  {
    method: 'get',
    path: '/nodes',
    operationId: 'listNodes',
    tag: 'Nodes',
    summary: 'List nodes',
    auth: 'admin',
    query: listQuery(),
    success: { status: 200, description: 'A page of nodes.', schema: listEnvelope(NodeSchema) },
    errors: { 401: '', 403: 'FORBIDDEN: administrators only.', 422: 'VALIDATION_ERROR: bad `page` or `limit`.' },
  },
  {
    method: 'post',
    path: '/nodes',
    operationId: 'createNode',
    tag: 'Nodes',
    summary: 'Register a node',
    description: 'Registers a node and issues its first agent token (in the response, this once).',
    auth: 'admin',
    body: createNodeInput,
    success: { status: 201, description: 'The node with its agent token.', schema: envelope(CreatedNodeSchema) },
    errors: { 400: '', 401: '', 403: 'FORBIDDEN: administrators only.', 422: 'VALIDATION_ERROR, or ALREADY_EXISTS: a node with this name exists.' },
  },
  {
    method: 'get',
    path: '/nodes/{id}',
    operationId: 'getNode',
    tag: 'Nodes',
    summary: 'Get a node',
    auth: 'admin',
    pathId: 'Node',
    success: { status: 200, description: 'The node.', schema: envelope(NodeSchema) },
    errors: { 401: '', 403: 'FORBIDDEN: administrators only.', 404: '' },
  },
  {
    method: 'patch',
    path: '/nodes/{id}',
    operationId: 'updateNode',
    tag: 'Nodes',
    summary: 'Change a node',
    description:
      'Any field of the create body; the others keep their value. The panel calls the agent at the new address from the next call on. Memory and disk cannot go below what the node\'s servers have allocated. Records `node:update` with the names of the fields that changed (none when nothing changed).',
    auth: 'admin',
    pathId: 'Node',
    body: updateNodeInput,
    success: { status: 200, description: 'The node.', schema: envelope(NodeSchema) },
    errors: {
      400: '',
      401: '',
      403: 'FORBIDDEN: administrators only.',
      404: '',
      422: 'VALIDATION_ERROR, ALREADY_EXISTS: another node has this name, or INVALID_STATE: memory or disk below what the node\'s servers have allocated (`details.allocated`), or the name or address of the node "local" run inside the panel.',
    },
  },
  {
    method: 'delete',
    path: '/nodes/{id}',
    operationId: 'deleteNode',
    tag: 'Nodes',
    summary: 'Delete a node',
    auth: 'admin',
    pathId: 'Node',
    success: { status: 204, description: 'Deleted.' },
    errors: { 400: '', 401: '', 403: 'FORBIDDEN: administrators only.', 404: '', 422: 'NODE_HAS_SERVERS: servers are still on the node (`details.servers`: how many).' },
  },
  {
    method: 'get',
    path: '/nodes/{id}/stats',
    operationId: 'getNodeStats',
    tag: 'Nodes',
    summary: 'Live statistics of a node',
    description: 'Asks the node agent (2 s timeout). `online: false` with nulls when it cannot be reached (still a 200).',
    auth: 'admin',
    pathId: 'Node',
    success: { status: 200, description: 'The live figures.', schema: envelope(NodeStatsSchema) },
    errors: { 401: '', 403: 'FORBIDDEN: administrators only.', 404: '' },
  },
  // --- blueprints
  {
    method: 'get',
    path: '/blueprints',
    operationId: 'listBlueprints',
    tag: 'Blueprints',
    summary: 'List blueprints',
    auth: 'user',
    query: listQuery(),
    success: { status: 200, description: 'A page of blueprints.', schema: listEnvelope(BlueprintSchema) },
    errors: { 401: '', 422: 'VALIDATION_ERROR: bad `page` or `limit`.' },
  },
  {
    method: 'get',
    path: '/blueprints/{id}',
    operationId: 'getBlueprint',
    tag: 'Blueprints',
    summary: 'Get a blueprint',
    auth: 'user',
    pathId: 'Blueprint',
    success: { status: 200, description: 'The blueprint.', schema: envelope(BlueprintSchema) },
    errors: { 401: '', 404: '' },
  },
  // --- admin
  {
    method: 'get',
    path: '/admin/users',
    operationId: 'listUsers',
    tag: 'Admin',
    summary: 'List users',
    auth: 'admin',
    query: listQuery(adminUsersQuery),
    success: { status: 200, description: 'A page of users.', schema: listEnvelope(UserSchema) },
    errors: { 401: '', 403: 'FORBIDDEN: administrators only.', 422: 'VALIDATION_ERROR: bad `page`, `limit` or `search`.' },
  },
  {
    method: 'get',
    path: '/admin/users/{id}',
    operationId: 'getUser',
    tag: 'Admin',
    summary: 'Get a user',
    auth: 'admin',
    pathId: 'User',
    success: { status: 200, description: 'The user.', schema: envelope(UserSchema) },
    errors: { 400: '', 401: '', 403: 'FORBIDDEN: administrators only.', 404: '' },
  },
  {
    method: 'patch',
    path: '/admin/users/{id}',
    operationId: 'updateUser',
    tag: 'Admin',
    summary: "Change a user's name, email, password or role",
    description:
      "No current password is asked. Setting a password ends all of the account's sessions and closes at once its console sockets and SFTP sessions on every node (its API tokens stay). Taking the role `admin` away takes effect at the next request, and closes at once the account's GraphQL sockets (4403), console sockets and SFTP sessions: what they watched may have been other users' servers. The last administrator keeps the role (422 INVALID_STATE). Recorded as `admin:user.update` with the names of the fields that changed.",
    auth: 'admin',
    pathId: 'User',
    body: adminUpdateUserInput,
    success: { status: 200, description: 'The user.', schema: envelope(UserSchema) },
    errors: { 400: '', 401: '', 403: 'FORBIDDEN: administrators only.', 404: '', 422: 'VALIDATION_ERROR, ALREADY_EXISTS: the email is taken, or INVALID_STATE: the last administrator.' },
  },
  {
    method: 'delete',
    path: '/admin/users/{id}',
    operationId: 'deleteUser',
    tag: 'Admin',
    summary: 'Delete a user',
    description:
      "Deletes the account with its sessions, API tokens and shared access: its GraphQL sockets, console sockets and SFTP sessions close at once. An account that still owns servers is not deleted (delete its servers first: their files are on the nodes), nor your own account, nor the last administrator (422 INVALID_STATE). Its activity entries stay, with its email as it was. Recorded as `admin:user.delete`.",
    auth: 'admin',
    pathId: 'User',
    success: { status: 204, description: 'Deleted.' },
    errors: { 400: '', 401: '', 403: 'FORBIDDEN: administrators only.', 404: '', 422: 'INVALID_STATE: your own account, the last administrator, or it owns servers (`details.servers`: how many).' },
  },
  {
    method: 'get',
    path: '/admin/stats',
    operationId: 'getPlatformStats',
    tag: 'Admin',
    summary: 'Platform statistics',
    auth: 'admin',
    success: { status: 200, description: 'Counts and allocations.', schema: envelope(PlatformStatsSchema) },
    errors: { 401: '', 403: 'FORBIDDEN: administrators only.' },
  },
  {
    method: 'post',
    path: '/admin/nodes/{id}/token',
    operationId: 'rotateNodeToken',
    tag: 'Admin',
    summary: 'Issue a new node token',
    description: "A new secret for the node's agent; the previous one stops working at once. Shown once. The node `local` that the panel runs in its own process (`LOCAL_AGENT`) gets a new token at every start of the panel instead.",
    auth: 'admin',
    pathId: 'Node',
    success: { status: 201, description: 'The new token.', schema: envelope(NodeTokenSchema) },
    errors: { 400: '', 401: '', 403: 'FORBIDDEN: administrators only.', 404: '', 422: 'INVALID_STATE: the node `local` runs inside the panel; restart the panel to renew its token.' },
  },
  // --- blueprint management
  {
    method: 'post',
    path: '/admin/blueprints',
    operationId: 'createBlueprint',
    tag: 'Admin',
    summary: 'Create a blueprint',
    description: 'The startup template, ready pattern and variable rules are checked (docs/blueprints.md).',
    auth: 'admin',
    body: createBlueprintInput,
    success: { status: 201, description: 'The blueprint.', schema: envelope(BlueprintSchema) },
    errors: { 400: '', 401: '', 403: 'FORBIDDEN: administrators only.', 422: 'VALIDATION_ERROR (`fields.variables.0.rules`, `fields["configFiles.0.find.<key>"]` for a placeholder outside the allow-list, …), or ALREADY_EXISTS: a blueprint with this key exists.' },
  },
  {
    method: 'post',
    path: '/admin/blueprints/import',
    operationId: 'importBlueprint',
    tag: 'Admin',
    summary: 'Import a Pterodactyl or Pelican egg',
    description:
      "The body is an egg as Pterodactyl (`meta.version` PTDL_v1, PTDL_v2) or Pelican (PLCN_v1, PLCN_v2, PLCN_v3) exports it, in JSON (`Content-Type: application/json`) or YAML (`application/yaml`, `application/x-yaml`, `text/yaml`; at most 1 MiB, at most 100 aliases expanded, no key twice). It becomes a new blueprint (key: the egg's name as a slug, `-2`, `-3`… when taken); `data.warnings` lists what of the egg the blueprint does not do (container images, install scripts, configuration file parsers, startup commands after the first, …). See docs/blueprints.md.",
    auth: 'admin',
    body: eggSchema,
    yamlBody: YAML_TYPES,
    bodyDescription: 'A Pterodactyl or Pelican egg, in JSON or YAML; fields not listed are ignored.',
    success: { status: 201, description: 'The new blueprint, and the warnings.', schema: ImportedBlueprintSchema },
    errors: { 400: '', 401: '', 403: 'FORBIDDEN: administrators only.', 422: 'VALIDATION_ERROR naming the egg\'s field (`fields["config.startup.done"]`, `fields["variables.2.rules"]`, …), or `fields.egg` for YAML that does not parse (the message names the line and column), expands more than 100 aliases, or is not a mapping.' },
  },
  {
    method: 'patch',
    path: '/admin/blueprints/{id}',
    operationId: 'updateBlueprint',
    tag: 'Admin',
    summary: 'Change a blueprint',
    description: "Any field of the create body; `variables` replaces the whole list. Servers get the change when their settings are next sent to their node. Built-in blueprints cannot be changed (422 INVALID_STATE).",
    auth: 'admin',
    pathId: 'Blueprint',
    body: updateBlueprintInput,
    success: { status: 200, description: 'The blueprint.', schema: envelope(BlueprintSchema) },
    errors: { 400: '', 401: '', 403: 'FORBIDDEN: administrators only.', 404: '', 422: 'VALIDATION_ERROR, ALREADY_EXISTS (key), or INVALID_STATE: a built-in blueprint.' },
  },
  {
    method: 'delete',
    path: '/admin/blueprints/{id}',
    operationId: 'deleteBlueprint',
    tag: 'Admin',
    summary: 'Delete a blueprint',
    auth: 'admin',
    pathId: 'Blueprint',
    success: { status: 204, description: 'Deleted.' },
    errors: { 400: '', 401: '', 403: 'FORBIDDEN: administrators only.', 404: '', 422: 'INVALID_STATE: servers use it (`details.servers`: how many), or it is built in.' },
  },
  // --- this document
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    tag: 'Meta',
    summary: 'This OpenAPI document',
    description: 'No credentials needed. Counted in the general rate-limit bucket (by address, or by user when credentials are sent), like every response under /api/v1.',
    auth: 'none',
    success: { status: 200, description: 'The OpenAPI 3.1 document (JSON).', schema: z.record(z.string(), z.unknown()) },
    errors: {},
  },
];

function errorResponse(status: Status, text: string): ResponseConfig | { $ref: string } {
  if (status === 422) {
    return { description: text || COMPONENT_RESPONSES[422].description, headers: limitHeaders(), content: json(ErrorSchema) };
  }
  const c = COMPONENT_RESPONSES[status];
  if (!text) return ref('responses', c.name);
  return { description: text, headers: limitHeaders(), content: json(ErrorSchema) };
}

/**
 * Request bodies under their component names. `.meta({ id })` makes a named copy (same validation)
 * without touching the schema the service uses; done once, as zod's global registry refuses an id twice.
 */
const BODIES = new Map<z.ZodType, z.ZodType>([
  [signupInput, signupInput.meta({ id: 'SignupInput' })],
  [signinInput, signinInput.meta({ id: 'SigninInput' })],
  [updateMeInput, updateMeInput.meta({ id: 'UpdateMeInput' })],
  [createApiTokenInput, createApiTokenInput.meta({ id: 'CreateApiTokenInput' })],
  [createServerInput, createServerInput.meta({ id: 'CreateServerInput' })],
  [updateServerInput, updateServerInput.meta({ id: 'UpdateServerInput' })],
  [createNodeInput, createNodeInput.meta({ id: 'CreateNodeInput' })],
  [updateNodeInput, updateNodeInput.meta({ id: 'UpdateNodeInput' })],
  [adminUpdateUserInput, adminUpdateUserInput.meta({ id: 'UpdateUserInput' })],
  [createBlueprintInput, createBlueprintInput.meta({ id: 'CreateBlueprintInput' })],
  [updateBlueprintInput, updateBlueprintInput.meta({ id: 'UpdateBlueprintInput' })],
  [eggSchema, eggSchema.meta({ id: 'PterodactylEgg' })],
  [createSubuserInput, createSubuserInput.meta({ id: 'CreateSubuserInput' })],
  [updateSubuserInput, updateSubuserInput.meta({ id: 'UpdateSubuserInput' })],
  [createScheduleInput, createScheduleInput.meta({ id: 'CreateScheduleInput' })],
  [updateScheduleInput, updateScheduleInput.meta({ id: 'UpdateScheduleInput' })],
  [renameFileInput, renameFileInput.meta({ id: 'RenameFileInput' })],
  [filePathInput, filePathInput.meta({ id: 'FilePathInput' })],
  [deleteFilesInput, deleteFilesInput.meta({ id: 'DeleteFilesInput' })],
  [chmodFileInput, chmodFileInput.meta({ id: 'ChmodFileInput' })],
  [createBackupInput, createBackupInput.meta({ id: 'CreateBackupInput' })],
  [restoreBackupInput, restoreBackupInput.meta({ id: 'RestoreBackupInput' })],
  [updateStartupInput, updateStartupInput.meta({ id: 'UpdateStartupInput' })],
  [compressFilesInput, compressFilesInput.meta({ id: 'CompressFilesInput' })],
  [decompressFileInput, decompressFileInput.meta({ id: 'DecompressFileInput' })],
]);
const NEW_PLANT = newPlantBody.meta({ id: 'NewPlant', description: 'Request body of POST /plants: a Plant plus its id.' });

function register(registry: OpenAPIRegistry, op: Operation): void {
  const responses: RouteConfig['responses'] = {
    [op.success.status]: {
      description: op.success.description,
      headers: limitHeaders(),
      ...(op.success.schema ? { content: json(op.success.schema) } : {}),
      ...(op.success.raw ? { content: binary(op.success.raw) } : {}),
    },
  };
  for (const [status, text] of Object.entries(op.more ?? {})) responses[status] = { description: text, headers: limitHeaders(), ...(status === '206' ? { content: binary(['application/octet-stream']) } : {}) };
  const errors = { ...op.errors };
  // Any request but a GET may carry a body, and a body that is not a JSON object is refused
  // (src/http/body.ts), whether or not the operation reads one.
  if (op.method !== 'get') errors[400] ??= '';
  // A path parameter with a broken percent-escape (`%ZZ`) is refused before any route (src/http/errors.ts).
  if (op.path.includes('{')) errors[400] ??= 'BAD_REQUEST: a path parameter that is not valid percent-encoding (`%ZZ`).';
  // Any write authenticated by the cookie may meet the CSRF check.
  if (op.method !== 'get') errors[403] = errors[403] ? `${errors[403]} Or a cookie-authenticated write from another origin (CSRF).` : '';
  for (const [status, text] of Object.entries(errors)) responses[status] = errorResponse(Number(status) as Status, text);
  responses[429] = ref('responses', COMPONENT_RESPONSES[429].name);
  responses[500] = ref('responses', COMPONENT_RESPONSES[500].name);
  const body = op.body ? BODIES.get(op.body) : undefined;
  if (op.body && !body) throw new Error(`${op.operationId}: request body schema not in BODIES`);
  registry.registerPath({
    method: op.method,
    path: API_PREFIX + op.path,
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    security: SECURITY[op.auth],
    ...(op.auth === 'admin' ? { 'x-roles': ['admin'] } : {}),
    request: {
      ...(op.pathId ? { params: op.params ? idParam(op.pathId).extend(op.params.shape) : idParam(op.pathId) } : {}),
      ...(op.query ? { query: op.query } : {}),
      ...(body ? { body: { required: true, description: op.bodyDescription ?? 'JSON object; unknown fields are ignored.', content: { ...json(body), ...Object.fromEntries((op.yamlBody ?? []).map((t) => [t, { schema: body }])) } } } : {}),
      ...(op.rawBody ? { body: { required: true, description: op.bodyDescription ?? 'The bytes.', content: binary(op.rawBody) } } : {}),
    },
    responses,
  });
}

function registerComponents(registry: OpenAPIRegistry): void {
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'A session token (`hps_…`, from sign-up or sign-in) or an API token (`hpt_…`, from POST /api/v1/users/me/api-tokens).',
  });
  registry.registerComponent('securitySchemes', 'sessionCookie', {
    type: 'apiKey',
    in: 'cookie',
    name: 'hp_session',
    description: 'The HTTP-only session cookie set by sign-up and sign-in (SameSite=Lax). Writes authenticated by it must come from the panel\'s origin (CSRF check).',
  });
  const header = (description: string) => ({ description, required: true, schema: { type: 'integer' as const, minimum: 0 } });
  registry.registerComponent('headers', 'X-RateLimit-Limit', header('Requests allowed per 60-second window in this bucket.'));
  registry.registerComponent('headers', 'X-RateLimit-Remaining', header('Requests left in the current window.'));
  registry.registerComponent('headers', 'X-RateLimit-Reset', header('Unix time (seconds) when the current window ends.'));
  registry.registerComponent('headers', 'Retry-After', header('Seconds until a request may succeed again.'));
  for (const status of [400, 401, 403, 404, 429, 500] as const) {
    const c = COMPONENT_RESPONSES[status];
    registry.registerComponent('responses', c.name, {
      description: c.description,
      headers: limitHeaders(status === 429),
      content: jsonRef(ref('schemas', 'Error')),
    });
  }
}

function registerPlants(registry: OpenAPIRegistry, newPlant: z.ZodType): void {
  registry.registerPath({
    method: 'post',
    path: '/plants',
    operationId: 'addPlant',
    tags: ['Plants'],
    summary: 'Add a plant to the store',
    description: 'No `/api/v1` prefix and no envelope. Bearer token required (the cookie is not accepted here).',
    security: [{ bearerAuth: [] }],
    request: { body: { required: true, description: 'Content-Type must be application/json.', content: json(newPlant) } },
    responses: {
      200: { description: 'The plant as stored (`tag` omitted when not given).', headers: limitHeaders(), content: json(PlantSchema) },
      400: { description: 'Malformed JSON, a Content-Type that is not JSON, a missing or invalid field, or an id that exists already.', headers: limitHeaders(), content: json(PlantErrorSchema) },
      401: { description: 'No valid bearer token.', headers: limitHeaders(), content: json(PlantErrorSchema) },
      429: { description: 'Over the rate limit (general bucket); retry after `Retry-After` seconds.', headers: limitHeaders(true), content: json(PlantErrorSchema) },
      500: { description: 'A bug on our side.', headers: limitHeaders(), content: json(PlantErrorSchema) },
    },
  });
}

export interface OpenApiDocument {
  openapi: string;
  info: Record<string, unknown>;
  paths: Record<string, Record<string, any>>;
  components: Record<string, any>;
  [k: string]: unknown;
}

export function buildOpenApiDocument(version = '0.1.0'): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registerComponents(registry);
  for (const op of OPERATIONS) register(registry, op);
  registerPlants(registry, NEW_PLANT);

  const doc = new OpenApiGeneratorV31(registry.definitions, { sortComponents: 'alphabetically' }).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'hostpanel API',
      version,
      description: DESCRIPTION,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'This panel (paths are complete: /api/v1/… and /plants).' }],
    tags: TAGS,
  });
  delete (doc as { webhooks?: unknown }).webhooks;
  return doc as unknown as OpenApiDocument;
}

let cached: string | null = null;

/** The document as JSON text (2-space indent, trailing newline): the same bytes as /openapi.json. */
export function openApiJson(): string {
  cached ??= JSON.stringify(buildOpenApiDocument(), null, 2) + '\n';
  return cached;
}

/** description.md: beside this file under src/, or under src/ from the compiled copy in dist/src/. */
function readDescription(): string {
  const candidates = [path.join(__dirname, 'description.md'), path.resolve(__dirname, '../../../src/openapi/description.md')];
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error(`src/openapi/description.md is missing (looked in ${candidates.join(', ')})`);
  return readFileSync(found, 'utf8').trim();
}
