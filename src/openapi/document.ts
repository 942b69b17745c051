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
import { z } from 'zod';
import { createApiTokenInput, signinInput, signupInput, updateMeInput } from '../validation/auth.js';
import { adminUsersQuery } from '../validation/admin.js';
import { createNodeInput } from '../validation/nodes.js';
import { paginationQuery } from '../validation/pagination.js';
import { newPlantBody } from '../validation/plants.js';
import { createServerInput, deleteServerQuery, serverListQuery, updateServerInput } from '../validation/servers.js';
import {
  ApiTokenSchema,
  AuthResultSchema,
  BlueprintSchema,
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
  ServerSchema,
  SessionInfoSchema,
  UserSchema,
} from './responses.js';

export const API_PREFIX = '/api/v1';

const DESCRIPTION = `
The REST API of the panel (under \`/api/v1\`) and the sample plant store (\`POST /plants\`).
Paths in this document are complete (the server URL is the panel's origin).

## Conventions (everything under /api/v1)

- JSON in, JSON out. Success: \`{ "data": ... }\`; lists add \`"meta": { "total", "page", "limit" }\`.
- Errors: \`{ "error": { "code", "message", "details": {} } }\` — \`details\` is always an object; a 422
  \`VALIDATION_ERROR\` has \`details.fields\` mapping each bad field to a message.
- Statuses: create → 201; delete and sign-out → 204 (no body); everything else → 200. Errors use only
  400 (malformed JSON, body not a JSON object, Content-Type not JSON, body over 1 MiB), 401, 403, 404
  (unknown id, unknown route, wrong method, and another user's server: its existence is not leaked),
  422 (well-formed but invalid or impossible), 429 and 500 (a bug; never a stack trace or SQL).
- Identifiers are UUIDs. Timestamps are ISO-8601 UTC strings. Unknown body fields are ignored; a field of
  the wrong type is a 422.
- **Units**: \`memory\` and \`disk\` in MiB (server memory ≥ 64, disk ≥ 128), \`cpu\` in percent of one core
  (100 = one core; 1..(node cores × 100)). What a node cannot still allocate is a 422 \`CAPACITY_EXCEEDED\`.

## Pagination

Every list (\`/servers\`, \`/nodes\`, \`/blueprints\`, \`/admin/users\`, \`/users/me/api-tokens\`) takes
\`page\` (integer ≥ 1, default 1) and \`limit\` (integer 1..100, default 20). Anything else (\`0\`, \`101\`,
\`abc\`, \`1.5\`, a repeated parameter) is a 422. A page past the end returns \`data: []\` with the true
\`meta.total\`. Order is stable: creation time, then id.

## Authentication

- \`Authorization: Bearer <token>\` (a session token \`hps_…\` or an API token \`hpt_…\`) or the HTTP-only
  session cookie \`hp_session\`, on every endpoint. Bearer wins when both are sent. Missing, malformed,
  unknown, revoked or expired credentials are a 401 on endpoints that need a user.
- Sign-in answers a wrong email and a wrong password with the same 401 and message, in about the same time
  (no user enumeration). Sessions last 7 days (\`SESSION_TTL_SECONDS\`). Sign-up can be turned off
  (\`ALLOW_SIGNUP=false\` → 403); the first administrator is created at first start, never by a sign-up.
- API tokens (\`/users/me/api-tokens\`) are for integrations: the secret is shown once, at creation;
  revoked tokens give 401 at once. Secrets are stored only as hashes.
- CSRF: a state-changing request authenticated by the cookie must come from the panel's own origin
  (\`Origin\`/\`Sec-Fetch-Site\`), else 403. The cookie is \`SameSite=Lax\`. Bearer requests are not affected.
- Roles: \`admin\` and \`user\`. Admin only: everything under \`/admin/\` and \`/nodes\`. Users see and act on
  their own servers only (another user's server is a 404); admins on all.

## Rate limits

Fixed 60-second windows per bucket: \`/api/v1/auth/*\` 10 requests, \`/api/v1/admin/*\` 30, everything else
(including \`/plants\` and this document at \`/api/v1/openapi.json\`) 60 (configurable:
\`RATE_LIMIT_AUTH\`, \`RATE_LIMIT_ADMIN\`, \`RATE_LIMIT_GENERAL\`). Keyed by the authenticated user when there
is one, else by client address; \`/auth/*\` always by address. Every response under \`/api/v1\` and
\`/plants\` carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (Unix seconds
when the window ends); a 429 adds \`Retry-After\` (seconds). The budget is shared with GraphQL and across
gateway instances (Redis).

## Servers: states and power actions

States: \`installing\`, \`install_failed\`, \`offline\`, \`starting\`, \`running\`, \`stopping\`.

- start: offline → starting → running (running once the blueprint's \`ready\` pattern appears in the
  output, or at once if it has none). Start on starting/running is a no-op 200.
- stop: starting/running → stopping → offline. The blueprint's stop command is written to standard input
  (or its signal sent); after a grace period (\`STOP_GRACE_SECONDS\`, default 30) the process is killed.
  Stop on offline/stopping is a no-op 200.
- restart: stop (if needed), then start. kill: the process is killed at once → offline.
- A process that exits on its own while running → offline, recorded as a crash (\`lastExitCode\`,
  \`lastCrashAt\`); optional auto-restart with a crash-loop guard.
- Power endpoints answer 200 with the server as it is right after the request (usually starting/stopping).
  Power actions while installing (except kill) are a 422 \`INVALID_STATE\`; a node agent that cannot be
  reached is a 422 \`NODE_UNAVAILABLE\`.

## The console channel (on the node)

\`GET /api/v1/servers/{id}/console-token\` returns \`{ token, socket, expiresAt }\`. Open a WebSocket to
\`socket\` (\`wss://{node}:{port}/console\`, \`ws://\` when the node has no TLS) and send, within 10 s:
\`{ "type": "auth", "token": "<console token>" }\`.

Node → client text frames \`{ "type", "data" }\`:

| type | data |
|---|---|
| \`auth_success\` | \`{ serverId, status, boot }\` — then the recent log history (last 150 lines) before live lines; \`boot\` identifies the agent process |
| \`console_output\` | \`{ line, stream, ts, seq }\` (\`stream\`: stdout / stderr / system; \`seq\` numbers the lines of a server since its agent (\`boot\`) started, so a reconnecting reader skips what it has by position) |
| \`install_output\` | \`{ line, stream, ts }\` while installing |
| \`status\` | \`{ status }\` on every state change |
| \`stats\` | \`{ cpu, memory, disk, uptime }\` about every 2 s while running |
| \`token_expiring\` | \`{ expiresAt }\`, 60 s before the token expires |
| \`token_expired\` | \`{}\` |
| \`error\` | \`{ code, message }\` |

Client → node after auth: \`{ "type": "command", "data": "say hello" }\` (written to standard input; only
while running), \`{ "type": "power", "data": "start" | "stop" | "restart" | "kill" }\`, and
\`{ "type": "auth", "token" }\` again to renew. Bad JSON, unknown types or anything before auth → \`error\`;
no auth within 10 s or an invalid token → close code 4401; a client too slow to read is disconnected
(4408); a deleted server closes with 4404. The same events are available as GraphQL subscriptions
(\`consoleOutput\`, \`serverStatus\`, \`serverStats\`) on \`/graphql\`.

## The plant store

\`POST /plants\` (no \`/api/v1\` prefix, no envelope) needs a bearer token (the platform's session or API
tokens; not the cookie). Every error has the shape \`{ "error": <int32 status>, "message" }\`: 400 for
malformed JSON, missing or invalid fields and an id that exists already; 401 and 429 likewise. The int64
\`id\` is kept exactly, values above 2^53 included.

## Not in this document

- \`/api/agent/v1/*\`: the internal API the node agents call (HMAC-signed with the node key; no user
  credential works there). It is versioned with the agent and not meant for clients.
- \`/docs\`: this document as an interactive page (static, not rate-limited; it loads
  \`/api/v1/openapi.json\`).
- \`/health\`: the health check for load balancers (no credentials, not rate-limited): 200
  \`{ "status": "ok", "database": "up" }\` or 503 \`{ "status": "degraded", "database": "down" }\`.
- \`/graphql\`: the GraphQL gateway (same operations, auth, limits and error codes); its schema is
  \`/schema.graphql\` in the repository.
`.trim();

const TAGS = [
  { name: 'Auth', description: 'Sign-up, sign-in, sign-out and the current session (rate-limit bucket `auth`: 10/min per address).' },
  { name: 'Users', description: 'The signed-in user and its API tokens.' },
  { name: 'Servers', description: "Servers: users see and act on their own, admins on all. Another user's server is a 404." },
  { name: 'Power', description: 'Power actions and console tokens: these reach the node agent (422 NODE_UNAVAILABLE when it cannot be reached).' },
  { name: 'Nodes', description: 'Machines that host servers (administrators only).' },
  { name: 'Blueprints', description: 'Templates for servers (every signed-in user may read them).' },
  { name: 'Admin', description: 'Administration (administrators only; rate-limit bucket `admin`: 30/min).' },
  { name: 'Plants', description: 'The sample plant store: `POST /plants`, its own error shape, bearer tokens only.' },
  { name: 'Meta', description: 'This document.' },
];

type Status = 400 | 401 | 403 | 404 | 422;
type Auth = 'none' | 'user' | 'admin';

interface Operation {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** below /api/v1, OpenAPI style (`{id}`) */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  auth: Auth;
  pathId?: string;
  query?: z.ZodObject;
  body?: z.ZodType;
  bodyDescription?: string;
  success: { status: 200 | 201 | 204; description: string; schema?: z.ZodType };
  /** Error statuses besides 429 and 500 (always possible), each with what causes it here. */
  errors: Partial<Record<Status, string>>;
}

const RATE_LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] as const;
const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const limitHeaders = (withRetryAfter = false) =>
  Object.fromEntries([...RATE_LIMIT_HEADERS, ...(withRetryAfter ? ['Retry-After'] : [])].map((h) => [h, ref('headers', h)]));
const json = (schema: z.ZodType) => ({ 'application/json': { schema } });
const jsonRef = (schema: { $ref: string }) => ({ 'application/json': { schema } });

const COMPONENT_RESPONSES: Record<Status | 429 | 500, { name: string; description: string }> = {
  400: { name: 'BadRequest', description: 'BAD_REQUEST: malformed JSON, a body that is not a JSON object, a Content-Type that is not JSON, or a body over 1 MiB.' },
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
    description: 'Ends the current session at once and clears the cookie. With an API token nothing is ended (revoke it under /users/me/api-tokens).',
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
    description: "Changes name, email or password. A password change needs `currentPassword` and ends the user's other sessions.",
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
      422: 'VALIDATION_ERROR (unknown node or blueprint, bad variables, cpu over the node\'s cores × 100, …), or CAPACITY_EXCEEDED: the node has not enough unallocated memory or disk.',
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
    description: 'name, description, memory, cpu, disk, variables and autoRestart; resources take effect at the next start. `nodeId`, `blueprintId` and `ownerId` cannot change (422).',
    auth: 'user',
    pathId: 'Server',
    body: updateServerInput,
    success: { status: 200, description: 'The updated server.', schema: envelope(ServerSchema) },
    errors: { 400: '', 401: '', 403: '', 404: '', 422: 'VALIDATION_ERROR, or CAPACITY_EXCEEDED: the node cannot allocate the new memory or disk.' },
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
    description: "A new secret for the node's agent; the previous one stops working at once. Shown once.",
    auth: 'admin',
    pathId: 'Node',
    success: { status: 201, description: 'The new token.', schema: envelope(NodeTokenSchema) },
    errors: { 400: '', 401: '', 403: 'FORBIDDEN: administrators only.', 404: '' },
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
]);
const NEW_PLANT = newPlantBody.meta({ id: 'NewPlant', description: 'Request body of POST /plants: a Plant plus its id.' });

function register(registry: OpenAPIRegistry, op: Operation): void {
  const responses: RouteConfig['responses'] = {
    [op.success.status]: {
      description: op.success.description,
      headers: limitHeaders(),
      ...(op.success.schema ? { content: json(op.success.schema) } : {}),
    },
  };
  const errors = { ...op.errors };
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
      ...(op.pathId ? { params: idParam(op.pathId) } : {}),
      ...(op.query ? { query: op.query } : {}),
      ...(body ? { body: { required: true, description: op.bodyDescription ?? 'JSON object; unknown fields are ignored.', content: json(body) } } : {}),
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
