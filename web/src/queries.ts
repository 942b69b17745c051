/** The GraphQL documents of the page and the shapes they return (schema.graphql at the repo root). */

export type ServerStatus = 'installing' | 'install_failed' | 'offline' | 'starting' | 'running' | 'stopping' | 'restoring';

export interface User {
  id: string;
  name: string;
  email: string;
  role: 'admin' | 'user';
}

export interface Blueprint {
  id: string;
  key: string;
  name: string;
  description: string;
  defaults: { memory: number; cpu: number; disk: number };
  variables: { key: string; description: string; default: string; rules: string }[];
}

export interface NodeInfo {
  id: string;
  name: string;
  fqdn: string;
  port: number;
  scheme: string;
  memory: number;
  disk: number;
  cpuCores: number | null;
  status: 'online' | 'offline';
  lastSeenAt: string | null;
  allocated?: { memory: number; disk: number };
}

export interface Server {
  id: string;
  name: string;
  description: string;
  status: ServerStatus;
  memory: number;
  cpu: number;
  disk: number;
  createdAt: string;
  lastStopReason: string | null;
  lastExitCode: number | null;
  crashCount: number;
  blueprint: { id: string; name: string; key: string };
  node: { id: string; name: string };
  /** null for a subuser without user.read */
  owner: { id: string; name: string; email: string } | null;
  /** the keys you hold on it: ["*"] for its owner and administrators */
  permissions: string[];
  /** the folders your file keys are limited to (empty: the whole server); asked for one server only */
  paths?: string[];
}

export interface NodeStats {
  online: boolean;
  uptime: number | null;
  cpu: { cores: number | null; usage: number | null; load: number[] | null };
  memory: { total: number | null; used: number | null };
  disk: { total: number | null; used: number | null };
  servers: { total: number | null; running: number | null };
}

export interface PlatformStats {
  users: number;
  blueprints: number;
  nodes: { total: number; online: number };
  servers: { total: number; byStatus: Record<ServerStatus, number> };
  memory: { allocated: number; total: number };
  disk: { allocated: number; total: number };
}

const USER = 'id name email role';
const SERVER = `id name description status memory cpu disk createdAt lastStopReason lastExitCode crashCount permissions
  blueprint { id name key } node { id name } owner { id name email }`;

/** Who is signed in: `me` spends the user's general budget (`session`, an /auth operation, the address's 10 a minute). */
export const Q_ME = `query Me { me { ${USER} } }`;
export const M_SIGN_IN = `mutation SignIn($input: SignInInput!) { signIn(input: $input) { user { ${USER} } } }`;
export const M_SIGN_OUT = `mutation SignOut { signOut }`;

export const Q_SERVERS = `query Servers($page: Int, $limit: Int) { servers(page: $page, limit: $limit) { total page limit items { ${SERVER} } } }`;
export const Q_SERVER = `query Server($id: ID!) { server(id: $id) { ${SERVER} paths } }`;
/** Whether a server is still there (NOT_FOUND once it is deleted). */
export const Q_SERVER_EXISTS = `query ServerExists($id: ID!) { server(id: $id) { id } }`;
export const M_CREATE_SERVER = `mutation CreateServer($input: CreateServerInput!) { createServer(input: $input) { ${SERVER} } }`;
export const M_DELETE_SERVER = `mutation DeleteServer($id: ID!) { deleteServer(id: $id) }`;
export const M_REINSTALL_SERVER = `mutation ReinstallServer($id: ID!) { reinstallServer(id: $id) { id status } }`;

/** One line of a server console. */
export interface ConsoleLine {
  line: string;
  /** stdout, stderr, system (agent notices) or install (install script output) */
  stream: string;
  ts: string;
  /** the node's line number (absent for the page's own notices) */
  seq?: number | null;
}

/** Console lines as the node sends them: at most one batch per 50 ms; `skipped` lines were dropped by the node's flood limit. */
export interface ConsoleBatch {
  lines: ConsoleLine[];
  skipped: number;
  /** lines the page never got (the connection was down longer than the history a reconnect repeats): counted by the page */
  missed?: number;
}

export type PowerAction = 'start' | 'stop' | 'restart' | 'kill';
export const M_POWER: Record<PowerAction, string> = {
  start: `mutation Start($id: ID!) { result: startServer(id: $id) { id status } }`,
  stop: `mutation Stop($id: ID!) { result: stopServer(id: $id) { id status } }`,
  restart: `mutation Restart($id: ID!) { result: restartServer(id: $id) { id status } }`,
  kill: `mutation Kill($id: ID!) { result: killServer(id: $id) { id status } }`,
};

export const Q_BLUEPRINTS = `query Blueprints { blueprints(limit: 100) { items { id key name description defaults { memory cpu disk } variables { key description default rules } } } }`;
export const Q_MY_NODES = `query MyNodes { myNodes(limit: 100) { total items { id name status available { memory disk } } } }`;
export interface NodeOption {
  id: string;
  name: string;
  status: string;
  available: { memory: number; disk: number };
}
export const Q_NODES = `query Nodes { nodes(limit: 100) { total items { id name fqdn port scheme memory disk cpuCores status lastSeenAt allocated { memory disk } } } }`;
export const Q_NODE_STATS = `query NodeStats($nodeId: ID!) { nodeStats(nodeId: $nodeId) { online uptime cpu { cores usage load } memory { total used } disk { total used } servers { total running } } }`;
export const Q_ADMIN_STATS = `query AdminStats { adminStats { users blueprints nodes { total online } servers { total byStatus { installing install_failed offline starting running stopping } } memory { allocated total } disk { allocated total } } }`;

export const Q_CONSOLE_TOKEN = `query ConsoleToken($serverId: ID!) { consoleToken(serverId: $serverId) { token socket expiresAt } }`;

export const S_STATUS = `subscription Status($serverId: ID!) { serverStatus(serverId: $serverId) { serverId status } }`;
export const S_CONSOLE_BATCHES = `subscription ConsoleBatches($serverId: ID!) { consoleBatches(serverId: $serverId) { serverId lines { line stream ts seq } skipped } }`;
export const S_STATS = `subscription Stats($serverId: ID!) { serverStats(serverId: $serverId) { cpu memory disk uptime } }`;

export const STATUS_LABEL: Record<ServerStatus, string> = {
  installing: 'Installing',
  install_failed: 'Install failed',
  offline: 'Offline',
  starting: 'Starting',
  running: 'Running',
  stopping: 'Stopping',
  restoring: 'Restoring a backup',
};

// ---- backups

export interface Backup {
  id: string;
  name: string;
  status: 'pending' | 'completed' | 'failed';
  locked: boolean;
  size: number;
  files: number;
  error: string | null;
  createdAt: string;
  completedAt: string | null;
}

const BACKUP_FIELDS = 'id name status locked size files error createdAt completedAt';
export const Q_BACKUPS = `query($serverId: ID!) { backups(serverId: $serverId, limit: 100) { total items { ${BACKUP_FIELDS} } } }`;
export const S_BACKUPS = `subscription($serverId: ID!) { serverBackups(serverId: $serverId) { ${BACKUP_FIELDS} } }`;
export const M_CREATE_BACKUP = `mutation($serverId: ID!, $input: CreateBackupInput) { createBackup(serverId: $serverId, input: $input) { ${BACKUP_FIELDS} } }`;
export const M_RESTORE_BACKUP = `mutation($serverId: ID!, $backupId: ID!, $truncate: Boolean) { restoreBackup(serverId: $serverId, backupId: $backupId, truncate: $truncate) { ${BACKUP_FIELDS} } }`;
export const M_LOCK_BACKUP = `mutation($serverId: ID!, $backupId: ID!) { lockBackup(serverId: $serverId, backupId: $backupId) { ${BACKUP_FIELDS} } }`;
export const M_UNLOCK_BACKUP = `mutation($serverId: ID!, $backupId: ID!) { unlockBackup(serverId: $serverId, backupId: $backupId) { ${BACKUP_FIELDS} } }`;
export const M_DELETE_BACKUP = `mutation($serverId: ID!, $backupId: ID!) { deleteBackup(serverId: $serverId, backupId: $backupId) }`;

// ---- startup variables

export interface StartupVariable {
  key: string;
  name: string;
  description: string;
  default: string;
  rules: string;
  userEditable: boolean;
  value: string;
}
export interface ServerStartup {
  startup: string;
  variables: StartupVariable[];
}

const STARTUP_FIELDS = 'startup variables { key name description default rules userEditable value }';
export const Q_STARTUP = `query($serverId: ID!) { serverStartup(serverId: $serverId) { ${STARTUP_FIELDS} } }`;
export const M_UPDATE_STARTUP = `mutation($serverId: ID!, $variables: JSONObject!) { updateServerStartup(serverId: $serverId, variables: $variables) { ${STARTUP_FIELDS} } }`;

// ---- shared access and the activity log

export interface Permission {
  key: string;
  description: string;
}

export interface Subuser {
  userId: string;
  email: string;
  name: string;
  permissions: string[];
  paths: string[];
  createdAt: string;
}

export interface ActivityEntry {
  id: string;
  event: string;
  serverId: string | null;
  actor: { id: string; email: string } | null;
  apiTokenId: string | null;
  ip: string | null;
  properties: Record<string, unknown>;
  createdAt: string;
}

const SUBUSER = 'userId email name permissions paths createdAt';
const ACTIVITY = 'id event serverId actor { id email } apiTokenId ip properties createdAt';

export const Q_PERMISSIONS = `query Permissions { permissions { key description } }`;
export const Q_SUBUSERS = `query Subusers($serverId: ID!) { subusers(serverId: $serverId, limit: 100) { total items { ${SUBUSER} } } }`;
export const M_CREATE_SUBUSER = `mutation CreateSubuser($serverId: ID!, $input: CreateSubuserInput!) { createSubuser(serverId: $serverId, input: $input) { ${SUBUSER} } }`;
export const M_UPDATE_SUBUSER = `mutation UpdateSubuser($serverId: ID!, $userId: ID!, $input: UpdateSubuserInput!) { updateSubuser(serverId: $serverId, userId: $userId, input: $input) { ${SUBUSER} } }`;
export const M_DELETE_SUBUSER = `mutation DeleteSubuser($serverId: ID!, $userId: ID!) { deleteSubuser(serverId: $serverId, userId: $userId) }`;
export const Q_SERVER_ACTIVITY = `query ServerActivity($serverId: ID!, $filter: ActivityFilter, $page: Int) { serverActivity(serverId: $serverId, filter: $filter, page: $page, limit: 50) { total page limit items { ${ACTIVITY} } } }`;
export const Q_ADMIN_ACTIVITY = `query AdminActivity($filter: ActivityFilter, $page: Int) { adminActivity(filter: $filter, page: $page, limit: 50) { total page limit items { ${ACTIVITY} } } }`;
export const S_SERVER_ACTIVITY = `subscription ServerActivity($serverId: ID!) { serverActivity(serverId: $serverId) { ${ACTIVITY} } }`;

export interface FileEntry {
  name: string;
  path: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  size: number;
  mode: string;
  modifiedAt: string;
}
const ENTRY = 'name path type size mode modifiedAt';
/** The entries of a folder listed at a time (a page of Q_FILES). */
export const FILES_PAGE_SIZE = 1000;
export const Q_FILES = `query Files($serverId: ID!, $path: String, $page: Int) { files(serverId: $serverId, path: $path, page: $page, limit: ${FILES_PAGE_SIZE}) { total items { ${ENTRY} } } }`;
export const Q_FILE_SEARCH = `query FileSearch($serverId: ID!, $path: String, $query: String!) { fileSearch(serverId: $serverId, path: $path, query: $query) { ${ENTRY} } }`;
export const Q_FILE_CONTENTS = `query FileContents($serverId: ID!, $path: String!) { fileContents(serverId: $serverId, path: $path) { path contents } }`;
export const M_WRITE_FILE = `mutation WriteFile($serverId: ID!, $path: String!, $contents: String!) { writeFile(serverId: $serverId, path: $path, contents: $contents) { ${ENTRY} } }`;
export const M_RENAME_FILE = `mutation RenameFile($serverId: ID!, $from: String!, $to: String!) { renameFile(serverId: $serverId, from: $from, to: $to) { ${ENTRY} } }`;
export const M_COPY_FILE = `mutation CopyFile($serverId: ID!, $path: String!) { copyFile(serverId: $serverId, path: $path) { ${ENTRY} } }`;
export const M_DELETE_FILES = `mutation DeleteFiles($serverId: ID!, $paths: [String!]!) { deleteFiles(serverId: $serverId, paths: $paths) }`;
export const M_CREATE_DIRECTORY = `mutation CreateDirectory($serverId: ID!, $path: String!) { createDirectory(serverId: $serverId, path: $path) { ${ENTRY} } }`;
export const M_COMPRESS_FILES = `mutation CompressFiles($serverId: ID!, $paths: [String!]!) { compressFiles(serverId: $serverId, paths: $paths) { ${ENTRY} } }`;
export const M_DECOMPRESS_FILE = `mutation DecompressFile($serverId: ID!, $path: String!) { decompressFile(serverId: $serverId, path: $path) { ${ENTRY} } }`;

/** Blueprint management (administrators): every field the admin screen shows and edits. */
export interface BlueprintVariable {
  key: string;
  name: string;
  description: string;
  default: string;
  rules: string;
  userViewable: boolean;
  userEditable: boolean;
}
export interface BlueprintDetail {
  id: string;
  key: string;
  name: string;
  description: string;
  startup: string;
  stop: string;
  ready: string | null;
  builtin: boolean;
  variables: BlueprintVariable[];
  fileDenylist: string[];
  defaults: { memory: number; cpu: number; disk: number };
  install: string | null;
  installShell: string | null;
  configFiles: { file: string; parser: string; find: Record<string, string> }[];
}
export interface ImportWarning {
  field: string;
  message: string;
}
const BLUEPRINT_DETAIL = 'id key name description startup stop ready builtin fileDenylist install installShell configFiles { file parser find } defaults { memory cpu disk } variables { key name description default rules userViewable userEditable }';
export const Q_BLUEPRINT_PAGE = `query BlueprintPage($page: Int!) { blueprints(page: $page, limit: 100) { total items { id key name builtin variables { key } } } }`;
export const Q_BLUEPRINT = `query Blueprint($id: ID!) { blueprint(id: $id) { ${BLUEPRINT_DETAIL} } }`;
export const M_CREATE_BLUEPRINT = `mutation CreateBlueprint($input: CreateBlueprintInput!) { createBlueprint(input: $input) { id key name } }`;
export const M_UPDATE_BLUEPRINT = `mutation UpdateBlueprint($id: ID!, $input: UpdateBlueprintInput!) { updateBlueprint(id: $id, input: $input) { ${BLUEPRINT_DETAIL} } }`;
export const M_DELETE_BLUEPRINT = `mutation DeleteBlueprint($id: ID!) { deleteBlueprint(id: $id) }`;
export const M_IMPORT_BLUEPRINT = `mutation ImportBlueprint($egg: JSONObject!) { importBlueprint(egg: $egg) { blueprint { id key name variables { key } } warnings { field message } } }`;
export const M_IMPORT_BLUEPRINT_YAML = `mutation ImportBlueprintYaml($egg: String!) { importBlueprintYaml(egg: $egg) { blueprint { id key name variables { key } } warnings { field message } } }`;

/** An account as administrators see it (Administration → Users). */
export interface AdminUser extends User {
  createdAt: string;
}
const ADMIN_USER = 'id name email role createdAt';
export const Q_ADMIN_USERS = `query AdminUsers($page: Int, $limit: Int, $search: String) { adminUsers(page: $page, limit: $limit, search: $search) { total page limit items { ${ADMIN_USER} } } }`;
export const Q_ADMIN_USER = `query AdminUser($id: ID!) { adminUser(id: $id) { ${ADMIN_USER} } }`;
export const M_UPDATE_USER = `mutation UpdateUser($id: ID!, $input: UpdateUserInput!) { updateUser(id: $id, input: $input) { ${ADMIN_USER} } }`;
export const M_DELETE_USER = `mutation DeleteUser($id: ID!) { deleteUser(id: $id) }`;

/** Administration → a node's card → Edit: the fields that changed (`UpdateNodeInput`); the node as saved. */
export const M_UPDATE_NODE = `mutation UpdateNode($id: ID!, $input: UpdateNodeInput!) { updateNode(id: $id, input: $input) { id name fqdn port scheme memory disk cpuCores status lastSeenAt allocated { memory disk } } }`;

/** Account: the signed-in user's own name, email and password, API tokens and activity. */
export interface ApiToken {
  id: string;
  name: string;
  /** the first characters of the secret, to recognise it */
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
}
/** A token just made: `token` is its secret, shown this once. */
export interface CreatedApiToken extends ApiToken {
  token: string;
}
const API_TOKEN = 'id name prefix createdAt lastUsedAt expiresAt';
export const M_UPDATE_ME = `mutation UpdateMe($input: UpdateMeInput!) { updateMe(input: $input) { ${USER} } }`;
export const Q_API_TOKENS = `query ApiTokens($page: Int, $limit: Int) { apiTokens(page: $page, limit: $limit) { total page limit items { ${API_TOKEN} } } }`;
export const M_CREATE_API_TOKEN = `mutation CreateApiToken($input: CreateApiTokenInput!) { createApiToken(input: $input) { ${API_TOKEN} token } }`;
export const M_REVOKE_API_TOKEN = `mutation RevokeApiToken($id: ID!) { revokeApiToken(id: $id) }`;
export const Q_MY_ACTIVITY = `query MyActivity($filter: ActivityFilter, $page: Int, $limit: Int) { myActivity(filter: $filter, page: $page, limit: $limit) { total page limit items { ${ACTIVITY} } } }`;
