/**
 * The node's SFTP host key: an Ed25519 key made the first time the agent starts and kept in its data
 * folder (readable by the agent only), so that clients see the same key on every start and can pin
 * it. Its fingerprint (`SHA256:…`, as OpenSSH shows it) goes on the node's record in the panel.
 */
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { utils } from 'ssh2';

export interface HostKey {
  privateKey: string;
  fingerprint: string;
}

export async function loadHostKey(file: string): Promise<HostKey> {
  let privateKey = await fsp.readFile(file, 'utf8').catch(() => null);
  if (!privateKey) {
    const made = utils.generateKeyPairSync('ed25519').private;
    // `wx`: two agents starting on one folder at once keep the first key
    await fsp.writeFile(file, made, { mode: 0o600, flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    privateKey = await fsp.readFile(file, 'utf8');
  }
  const parsed = utils.parseKey(privateKey);
  if (parsed instanceof Error) throw new Error(`the SFTP host key in ${file} cannot be read (${parsed.message}): remove it to make a new one`);
  const key = Array.isArray(parsed) ? parsed[0]! : parsed;
  const fingerprint = 'SHA256:' + createHash('sha256').update(key.getPublicSSH()).digest('base64').replace(/=+$/, '');
  return { privateKey, fingerprint };
}
