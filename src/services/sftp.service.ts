/**
 * SFTP, the panel's side: node agents ask it whether a login may proceed (the account's password,
 * with the sign-in throttle; the server named by the username; the `file.sftp` key), users ask it how
 * to connect, and a password change ends the account's live SFTP sessions on every node.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { readRows } from '../db/read-rows.js';
import { Node } from '../entities/Node.js';
import { Server } from '../entities/Server.js';
import type { User } from '../entities/User.js';
import { AppError } from '../errors.js';
import type { AgentClient } from '../nodes/agent-client.js';
import { demand, holdsAll, may, type ServerAccess } from '../permissions/policy.js';
import type { SftpGrant } from '../shared/node-protocol.js';
import { parseInput } from '../validation/common.js';
import type { AccessService } from './access.service.js';
import type { ActivityRecorder } from './activity.service.js';
import type { Actor } from './actor.js';
import type { AuthService } from './auth.service.js';

const loginInput = z.object({
  username: z.string().max(400),
  password: z.string().max(1024),
  ip: z.string().max(64).nullable(),
});

/** `<account email>.<first 8 characters of the server id>` */
const USERNAME = /^(.+)\.([0-9a-f]{8})$/i;
const REFUSED = 'Invalid username or password.';

export interface SftpDetails {
  host: string;
  port: number | null;
  username: string;
  /** the node's host key fingerprint (`SHA256:…`); null until the node reported it */
  fingerprint: string | null;
}

export class SftpService {
  constructor(
    private readonly orm: MikroORM,
    private readonly auth: AuthService,
    private readonly access: AccessService,
    private readonly activity: ActivityRecorder,
    private readonly agents: AgentClient,
  ) {}

  /**
   * The grant for a login on `node`: 401 for a wrong username or password (the same answer for
   * every reason, as for the API's sign-in), 403 without `file.sftp`. Both are in the activity log.
   */
  async login(node: Node, input: unknown): Promise<SftpGrant> {
    const { username, password, ip } = parseInput(loginInput, input);
    const m = USERNAME.exec(username);
    // a failed login is recorded on the server the username names, where that server's people see it
    const serverId = m ? await this.serverOn(node, m[2]!.toLowerCase()) : null;
    const user = m ? await this.auth.checkPassword(m[1]!, password).catch(async (err: unknown) => {
      // too many tries: refused before the password was checked, and recorded as such
      if (err instanceof AppError && err.code === 'RATE_LIMITED') {
        await this.activity.record({ event: 'server:sftp.login-failed', serverId, ip, properties: { username: username.slice(0, 254), reason: 'rate-limited' } });
      }
      throw err;
    }) : null;
    const access = user && serverId ? await this.access.resolveFor(user, serverId).catch(() => null) : null;
    if (!user || !serverId || !access) {
      await this.activity.record({ event: 'server:sftp.login-failed', serverId, ip, properties: { username: username.slice(0, 254) } });
      throw AppError.unauthorized(REFUSED);
    }
    const who = { id: user.id, email: user.email };
    if (!may(access, 'file.sftp')) {
      await this.activity.record({ event: 'server:sftp.login-failed', serverId, user: who, ip, properties: { username: username.slice(0, 254), reason: 'file.sftp' } });
      demand(access, 'file.sftp');
    }
    await this.activity.record({ event: 'server:sftp.login', serverId, user: who, ip, properties: {} });
    return grantOf(user, access, await this.denylistOf(serverId));
  }

  /** How the caller connects to the server over SFTP (`file.sftp`). */
  async details(actor: Actor | null, serverId: string): Promise<SftpDetails> {
    const access = await this.access.resolve(actor, serverId);
    demand(access, 'file.sftp');
    const server = await this.orm.em.findOneOrFail(Server, { id: access.serverId }, { populate: ['node'] });
    return {
      host: server.node.fqdn,
      port: server.node.sftpPort,
      username: `${actor!.user.email}.${server.id.slice(0, 8)}`,
      fingerprint: server.node.sftpFingerprint,
    };
  }

  /** The file deny-list of the server's blueprint. */
  private async denylistOf(serverId: string): Promise<string[]> {
    const rows = await readRows<{ denied: string[] }>(this.orm, 'select b.file_denylist as denied from servers s join blueprints b on b.id = s.blueprint_id where s.id = $1', [serverId]);
    return rows[0]?.denied ?? [];
  }

  /** The id of the one server on `node` whose id starts with `prefix`. */
  private async serverOn(node: Node, prefix: string): Promise<string | null> {
    const rows = await readRows<{ id: string }>(this.orm, 'select id from servers where node_id = $1 and id::text like $2 limit 2', [node.id, `${prefix}%`]);
    return rows.length === 1 ? rows[0]!.id : null;
  }
}

function grantOf(user: User, access: ServerAccess, denied: string[]): SftpGrant {
  return { userId: user.id, email: user.email, serverId: access.serverId, role: access.role, keys: holdsAll(access) ? [] : [...access.keys], paths: [...access.paths], denied, issuedAt: Date.now() };
}
