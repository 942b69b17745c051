import type { EntityManager } from '@mikro-orm/postgresql';
import type { Node } from '../entities/Node.js';
import type { MasterKey } from '../security/master-key.js';
import { deriveNodeKey, generateNodeToken, sha256Hex } from '../shared/node-protocol.js';

/**
 * Issues a new node token: stores its hash and the derived key K sealed with the master key.
 * The previous token stops working at once. The token itself is returned once and never stored.
 */
export async function issueNodeToken(em: EntityManager, masterKey: MasterKey, node: Node): Promise<{ token: string; createdAt: Date }> {
  const token = generateNodeToken();
  node.tokenHash = sha256Hex(token);
  node.keyEnc = masterKey.encrypt(deriveNodeKey(token));
  node.tokenCreatedAt = new Date();
  await em.flush();
  return { token, createdAt: node.tokenCreatedAt };
}
