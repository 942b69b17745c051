/**
 * GraphQL enums. Their values are the same lower-case strings as in REST (`"admin"`, `"running"`),
 * so that one client-side type serves both APIs.
 */
import { registerEnumType } from 'type-graphql';

export const Role = { admin: 'admin', user: 'user' } as const;
registerEnumType(Role, { name: 'Role', description: 'A user\'s role: administrators manage nodes and see every server.' });

export const ServerStatus = {
  installing: 'installing',
  install_failed: 'install_failed',
  offline: 'offline',
  starting: 'starting',
  running: 'running',
  stopping: 'stopping',
  restoring: 'restoring',
} as const;
registerEnumType(ServerStatus, { name: 'ServerStatus', description: 'Lifecycle state of a server.' });

export const NodeStatus = { online: 'online', offline: 'offline' } as const;
registerEnumType(NodeStatus, { name: 'NodeStatus' });

export const NodeScheme = { http: 'http', https: 'https' } as const;
registerEnumType(NodeScheme, { name: 'NodeScheme', description: 'How the panel and browsers reach the node agent (https = TLS, the console is then wss://).' });

export const CredentialKind = { session: 'session', api_token: 'api_token' } as const;
registerEnumType(CredentialKind, { name: 'CredentialKind' });
