/**
 * The permission keys a server's owner can grant to a subuser. The names are the ones Pterodactyl's
 * users already know; each key guards one kind of action on one server. The owner of a server and
 * administrators hold every key (shown as `*`).
 */
export const PERMISSIONS = {
  'websocket.connect': 'See the console, status and resource use',
  'control.console': 'Send commands to the console',
  'control.start': 'Start the server',
  'control.stop': 'Stop or kill the server',
  'control.restart': 'Restart the server',
  'file.read': 'List folders and search for files',
  'file.read-content': 'Read and download files',
  'file.create': 'Create files and folders, upload files',
  'file.update': 'Change, rename and chmod files',
  'file.delete': 'Delete files and folders',
  'file.archive': 'Compress and decompress archives',
  'file.sftp': 'Connect over SFTP',
  'backup.read': 'See backups',
  'backup.create': 'Create backups',
  'backup.download': 'Download backups',
  'backup.restore': 'Restore backups (replaces files)',
  'backup.delete': 'Delete, lock and unlock backups',
  'schedule.read': 'See schedules and their runs',
  'schedule.create': 'Create schedules',
  'schedule.update': 'Change schedules and run them now',
  'schedule.delete': 'Delete schedules',
  'user.read': 'See the server’s subusers',
  'user.create': 'Invite subusers',
  'user.update': 'Change subusers’ permissions and paths',
  'user.delete': 'Remove subusers',
  'activity.read': 'See the server’s activity log',
  'settings.rename': 'Rename the server and change its description',
  'startup.read': 'See the server’s startup variables',
  'startup.update': 'Change the server’s user-editable startup variables',
} as const satisfies Record<string, string>;

export type PermissionKey = keyof typeof PERMISSIONS;

/** Every key, in the catalogue's order. */
export const PERMISSION_KEYS = Object.keys(PERMISSIONS) as PermissionKey[];

/** `{ key, description }` of every key, for `GET /permissions`. */
export const PERMISSION_CATALOGUE: readonly { key: PermissionKey; description: string }[] = PERMISSION_KEYS.map((key) => ({ key, description: PERMISSIONS[key] }));

/** What the owner and administrators hold: every key. */
export const ALL_PERMISSIONS = '*';

const KNOWN = new Set<string>(PERMISSION_KEYS);
export const isPermissionKey = (s: string): s is PermissionKey => KNOWN.has(s);

/** The keys that the `paths` scope of a subuser limits (every file operation, SFTP included). */
export const isFileKey = (key: PermissionKey): boolean => key.startsWith('file.');

/** The key each power action needs (kill is a kind of stop). */
export const POWER_KEYS = {
  start: 'control.start',
  stop: 'control.stop',
  restart: 'control.restart',
  kill: 'control.stop',
} as const satisfies Record<string, PermissionKey>;

/** Needed to open a server's console at all (see its output, status and resource use). */
export const CONSOLE_CONNECT: PermissionKey = 'websocket.connect';
/** Needed to send a command to a server's console. */
export const CONSOLE_COMMAND: PermissionKey = 'control.console';
/** The keys a console token carries at most: what the node's console channel checks. */
export const CONSOLE_KEYS: readonly PermissionKey[] = [CONSOLE_CONNECT, CONSOLE_COMMAND, 'control.start', 'control.stop', 'control.restart'];

/**
 * The keys a schedule's task needs of whoever makes, changes or runs the schedule: what it does,
 * as if they did it themselves. A backup task rotates out the oldest backup at the limit: it needs
 * backup.delete too.
 */
export function taskKeys(task: { action: 'command' | 'power' | 'backup'; payload: Record<string, unknown> }): PermissionKey[] {
  switch (task.action) {
    case 'command':
      return [CONSOLE_COMMAND];
    case 'power':
      return [POWER_KEYS[task.payload.action as keyof typeof POWER_KEYS]];
    case 'backup':
      return ['backup.create', 'backup.delete'];
  }
}
