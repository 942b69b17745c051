/**
 * `npm start` runs one node agent in the same process and registers it as the node "local", so a
 * newcomer can create and start a server with no further setup. Its token is renewed at every start.
 */
import { statfsSync } from 'node:fs';
import os from 'node:os';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import { Node } from '../entities/Node.js';
import { childLogger } from '../logger.js';
import type { MasterKey } from '../security/master-key.js';
import { issueNodeToken } from './node-token.js';

const log = childLogger('local-node');
const MiB = 1024 * 1024;
export const LOCAL_NODE_NAME = 'local';

export async function ensureLocalNode(orm: MikroORM, masterKey: MasterKey, config: Config, agentPort: number): Promise<{ node: Node; token: string }> {
  const em = orm.em.fork();
  const fqdn = config.panelUrl ? new URL(config.panelUrl).hostname : 'localhost';
  let node = await em.findOne(Node, { name: LOCAL_NODE_NAME });
  if (!node) {
    let disk = 10 * 1024;
    try {
      const fs = statfsSync(config.dataDir);
      disk = Math.floor((fs.blocks * fs.bsize) / MiB);
    } catch {
      /* keep the default */
    }
    node = em.create(Node, {
      name: LOCAL_NODE_NAME,
      fqdn,
      port: agentPort,
      scheme: 'http',
      memory: Math.floor(os.totalmem() / MiB),
      disk,
      cpuCores: os.cpus().length,
    });
    log.info({ memory: node.memory, disk: node.disk }, 'registered this machine as the node "local"');
  }
  node.fqdn = fqdn;
  node.port = agentPort;
  await em.flush();
  const { token } = await issueNodeToken(em, masterKey, node);
  return { node, token };
}
