/** Starts the node's SFTP server with the node's host key and the panel as the judge of logins. */
import path from 'node:path';
import type { Disposers } from '../../shared/disposers';
import type { SftpGrant } from '../../shared/node-protocol';
import { childLogger } from '../../logger';
import type { ServerFiles } from '../filesystem/server-files';
import { PanelRequestError, type PanelClient } from '../panel-client';
import type { AgentPaths } from '../paths';
import { loadHostKey } from './host-key';
import { SftpServer } from './server';

const log = childLogger('agent');

export interface SftpInfo {
  port: number;
  /** the host key's fingerprint as OpenSSH shows it (`SHA256:…`) */
  fingerprint: string;
}

export interface SftpSettings {
  port: number;
  host?: string;
  idleMs?: number;
  maxPerAddress?: number;
  loginTimeoutMs?: number | undefined;
}

/** Refusals of the panel that mean "wrong credentials or no access" rather than "try later". */
const REFUSED = new Set([401, 403, 404, 422]);

export async function startSftp(settings: SftpSettings, paths: AgentPaths, files: ServerFiles, panel: PanelClient, disposers: Disposers): Promise<{ server: SftpServer; info: SftpInfo }> {
  const hostKey = await loadHostKey(path.join(paths.root, 'ssh_host_ed25519_key'));
  const server = new SftpServer({
    ...settings,
    hostKey,
    files,
    report: (r) => panel.enqueue(r),
    login: async (username, password, ip) => {
      try {
        const answer = await panel.request<{ data: SftpGrant }>('POST', '/api/agent/v1/sftp/login', { username, password, ip });
        return answer?.data ?? null;
      } catch (err) {
        if (err instanceof PanelRequestError && REFUSED.has(err.status)) return null;
        throw err;
      }
    },
  });
  const port = await server.listen().catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'EADDRINUSE' ? new Error(`SFTP_PORT ${settings.port} is already in use: set SFTP_PORT to a free port (0 picks one)`) : err;
  });
  disposers.add('SFTP server', () => server.close());
  log.info({ port, fingerprint: hostKey.fingerprint }, 'SFTP server listening');
  return { server, info: { port, fingerprint: hostKey.fingerprint } };
}
